import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Metrics } from '@sluice/metrics';

/** The route label of a request no route matched (its URL is never a label: unbounded, and may carry ids). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * RED metrics of the HTTP API, per route pattern (`/2025-10-13/customers/:customerId`,
 * never the URL), method and status code: `http_server_requests_total`, the
 * `http_server_request_duration_seconds` histogram (Fastify's own measure of the
 * request, from arrival to the response sent).
 */
export function registerHttpMetrics(app: FastifyInstance, metrics: Metrics): void {
  const { total, duration } = metrics.red({
    total: { name: 'http_server_requests_total', help: 'HTTP requests answered' },
    duration: { name: 'http_server_request_duration_seconds', help: 'Time from receiving an HTTP request to sending its response' },
    labelNames: ['method', 'route'],
    resultLabels: ['status_code'],
    durationByResult: true,
  });
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? UNMATCHED_ROUTE,
      status_code: String(reply.statusCode),
    };
    total.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}
