/**
 * The one rule for "a dependency is unreachable right now" (Postgres restarting, a connection
 * refused or cut, the pool unable to open a connection in time): a transient condition the
 * caller may retry, answered as gRPC UNAVAILABLE by a service and as 503 with Retry-After by
 * the gateway, never as an internal error. Everything else stays what it is.
 */

/** SQLSTATEs of a server that is going away, starting, refusing or out of connections. */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, recovery)
  '53300', // too_many_connections
]);

/** Node socket errors of a peer that is not there or went away. */
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** Messages of node-postgres, knex/tarn and MikroORM for a lost or unobtainable connection. */
const UNAVAILABLE_MESSAGES = [
  /Connection terminated/i,
  /Timeout acquiring a connection/i,
  /Client has encountered a connection error/i,
  /Client was closed and is not queryable/i,
  /connection (?:is )?(?:closed|ended)/i,
  // knex, for a statement of a transaction that already ended: when the transaction's connection
  // is lost, the statement that saw it ends the transaction and the statements beside it (a
  // Promise.all in the transaction) get this instead of the connection error. Otherwise it would
  // be a statement sent after its transaction's commit, a bug the suite's no-5xx checks still see
  // (as a 503 instead of a 500). libs/store/src/lost-connection.spec.ts.
  /Transaction query already complete/,
];

function codeOf(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}

/** True when `err` (or an error it wraps, up to four causes deep) says a dependency is unreachable. */
export function isDependencyUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e && typeof e === 'object'; depth++) {
    const code = codeOf(e);
    if (code && (UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08') || UNAVAILABLE_ERRNOS.has(code))) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((m) => m.test(message))) return true;
    e = (e as { cause?: unknown }).cause ?? (e as { previous?: unknown }).previous;
  }
  return false;
}
