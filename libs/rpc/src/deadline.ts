import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Deadline propagation. A service handling a call runs the handler with the
 * caller's deadline (epoch ms) in this storage; every call it makes to another
 * service through the kit's clients gets at most the time left of it. So when a
 * caller gives up (the gateway's `RPC_DEADLINE_MS` passed), the work done on its
 * behalf further down stops at the next hop instead of queueing behind the load
 * that made it late: a call whose inherited deadline has passed fails at once
 * with DEADLINE_EXCEEDED without being sent. Every operation behind a call is
 * idempotent, so what was left undone is redone by the retry or by a job.
 */
const storage = new AsyncLocalStorage<number>();

/** Runs `fn` with the caller's deadline (epoch ms; none: no limit is inherited). */
export function withDeadline<T>(deadlineMs: number | undefined, fn: () => T): T {
  return deadlineMs !== undefined && Number.isFinite(deadlineMs) ? storage.run(deadlineMs, fn) : storage.exit(fn);
}

/** The deadline (epoch ms) inherited from the call being served, if any. */
export function inheritedDeadline(): number | undefined {
  return storage.getStore();
}

/**
 * Runs `fn` outside of any served call: for background work started while
 * serving one (a poll loop woken by a request, a timer) that must not inherit
 * the request's deadline.
 */
export function detachedFromCall<T>(fn: () => T): T {
  return storage.exit(fn);
}
