import { credentials, makeClientConstructor, type Client, type ServiceError } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';

/** One readiness probe: resolves when the dependency is usable, rejects otherwise. */
export type ReadinessCheck = () => Promise<void>;

const HealthClient = makeClientConstructor(healthService as never, 'grpc.health.v1.Health');

/**
 * A probe of a gRPC server's standard health service (`grpc.health.v1`), for
 * the given service name. Returns the probe and a closer for its channel.
 */
export function grpcHealthCheck(
  address: string,
  serviceName: string,
  timeoutMs = 1000,
): { check: ReadinessCheck; close(): void } {
  const client = new HealthClient(address, credentials.createInsecure()) as unknown as Client & {
    check(
      req: { service: string },
      opts: { deadline: Date },
      cb: (err: ServiceError | null, res: { status: string | number }) => void,
    ): void;
  };
  return {
    check: () =>
      new Promise<void>((resolve, reject) =>
        client.check({ service: serviceName }, { deadline: new Date(Date.now() + timeoutMs) }, (err, res) => {
          if (err) reject(new Error(`health check failed: ${err.code}`));
          else if (res.status === 'SERVING' || res.status === 1) resolve();
          else reject(new Error(`status ${String(res.status)}`));
        }),
      ),
    close: () => client.close(),
  };
}

const HealthBody = Type.Object({ status: Type.String() });
const ReadyBody = Type.Object({ status: Type.String(), checks: Type.Record(Type.String(), Type.String()) });

/**
 * `GET /healthz`: liveness (the process serves HTTP). `GET /readyz`: readiness,
 * 200 only when every check passes (identity gRPC health, the database), 503
 * with the failing check named otherwise, and 503 while shutting down. Public.
 */
export function registerHealthRoutes(
  app: FastifyInstance,
  checks: Record<string, ReadinessCheck>,
  isClosing: () => boolean,
): void {
  app.get(
    '/healthz',
    { config: { untraced: true }, schema: { hide: true, response: { 200: HealthBody } } },
    async () => ({
      status: 'ok',
    }),
  );
  app.get(
    '/readyz',
    { config: { untraced: true }, schema: { hide: true, response: { 200: ReadyBody, 503: ReadyBody } } },
    async (_request, reply) => {
      const results: Record<string, string> = {};
      await Promise.all(
        Object.entries(checks).map(async ([name, check]) => {
          try {
            await check();
            results[name] = 'ok';
          } catch {
            results[name] = 'unavailable';
          }
        }),
      );
      const ready = !isClosing() && Object.values(results).every((r) => r === 'ok');
      return reply
        .code(ready ? 200 : 503)
        .send({ status: ready ? 'ok' : isClosing() ? 'shutting down' : 'unavailable', checks: results });
    },
  );
}
