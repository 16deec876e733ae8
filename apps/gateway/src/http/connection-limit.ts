import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from '@sluice/logging';
import { HttpError } from './error-mapping.js';

const OVER_LIMIT = Symbol('sluice.connectionOverLimit');
type MarkedSocket = Socket & { [OVER_LIMIT]?: boolean };

/** How long a connection over the limit may stay open without sending a request. */
const OVER_LIMIT_IDLE_MS = 5_000;

/**
 * Open connections per client (the peer address of the TCP connection), `MAX_CONNECTIONS_PER_CLIENT`.
 * A connection beyond the limit is accepted but serves nothing: each request on it is answered
 * `429 TOO_MANY_CONNECTIONS` with `Retry-After` and `Connection: close` before any hook reads it
 * (no authentication, no backend call), and it is closed after that answer, or after 5 s if it
 * sends nothing. Accepting and answering (rather than resetting the connection) tells the client why.
 *
 * The peer is what the socket says, not X-Forwarded-For: behind a load balancer every connection
 * comes from the balancer, so there the limit must be above the balancer's connection pool (or 0,
 * off) and enforced at the balancer per client.
 */
export function limitConnectionsPerClient(
  app: FastifyInstance,
  o: { perClient: number; logger: Logger; onRefused?: () => void },
): void {
  if (o.perClient <= 0) return;
  const open = new Map<string, number>();
  app.server.on('connection', (socket: MarkedSocket) => {
    const peer = socket.remoteAddress ?? 'unknown';
    const n = open.get(peer) ?? 0;
    if (n >= o.perClient) {
      socket[OVER_LIMIT] = true;
      socket.setTimeout(OVER_LIMIT_IDLE_MS, () => socket.destroy());
      o.onRefused?.();
      o.logger.warn({ peer, open: n, limit: o.perClient }, 'connection over the per-client limit');
      return;
    }
    open.set(peer, n + 1);
    socket.once('close', () => {
      const left = (open.get(peer) ?? 1) - 1;
      if (left <= 0) open.delete(peer);
      else open.set(peer, left);
    });
  });
  app.addHook('onRequest', async (request, reply) => {
    if (!(request.raw.socket as MarkedSocket)[OVER_LIMIT]) return;
    reply.header('connection', 'close');
    throw new HttpError(
      429,
      'TOO_MANY_CONNECTIONS',
      `Too many open connections from this client (at most ${o.perClient}); reuse a kept-alive connection`,
      undefined,
      { 'retry-after': '1' },
    );
  });
}
