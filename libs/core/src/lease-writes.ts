/**
 * The one way a process finishes a write that must land before a lease it holds runs out, when the
 * database was unreachable at the moment of writing: an Idempotency-Key's answer or release in the
 * gateway, a failed job's retry time in the payments scheduler. Nothing else would redo such a
 * write before the lease ends (the lease is what stops another process from redoing it), so without
 * it a one-second outage costs a whole lease: a key answered 409 for a minute, a payment's job
 * idle for a minute. Each write is retried with doubling pauses until it lands or the next try would
 * come after its deadline (the lease's end: after it the row may belong to someone else, and the
 * write's own conditions make it a no-op anyway). `drain()` waits for the writes in flight, for a
 * graceful stop; each ends by its deadline.
 */
export class LeaseWrites {
  private readonly pending = new Set<Promise<boolean>>();
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(o: { backoffMs?: number; maxBackoffMs?: number } = {}) {
    this.backoffMs = o.backoffMs ?? 100;
    this.maxBackoffMs = o.maxBackoffMs ?? 2_000;
  }

  /**
   * Retries `write` in the background: resolves true once it lands, false when `deadline` (epoch
   * ms) would pass before the next try. The first try comes after the first pause (the caller's
   * own attempt has just failed).
   */
  retry(write: () => Promise<unknown>, deadline: number): Promise<boolean> {
    const run = (async () => {
      for (let pause = this.backoffMs; Date.now() + pause < deadline; pause = Math.min(this.maxBackoffMs, pause * 2)) {
        await new Promise((r) => setTimeout(r, pause));
        try {
          await write();
          return true;
        } catch {
          // still unreachable: the next pause
        }
      }
      return false;
    })();
    this.pending.add(run);
    void run.finally(() => this.pending.delete(run));
    return run;
  }

  /** How many writes are being retried. */
  get size(): number {
    return this.pending.size;
  }

  /** Waits for every write being retried (each ends by its deadline). */
  async drain(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
