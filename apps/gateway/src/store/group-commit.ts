/** One operation waiting for its batch, with the caller's promise. */
interface Waiting<Op, R> {
  op: Op;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export interface GroupCommitOptions<Op, R> {
  /**
   * Runs a batch as one database statement (so one transaction, one commit), answering each
   * operation in order; a rejection means the statement failed as a whole.
   */
  run: (ops: readonly Op[]) => Promise<R[]>;
  /**
   * The row an operation writes: two operations of one row never share a batch (one statement
   * cannot change a row twice); the later waits for the next batch, so a row's operations run in
   * the order they came. Without it operations are never held back (reads).
   */
  rowOf?: (op: Op) => string;
  /** Most operations per batch (default 100). */
  maxBatch?: number;
}

/**
 * Group commit with natural batching and no linger: one batch in flight at a time; what arrives
 * meanwhile waits and goes out with the next batch, all of it in one statement. A lone operation
 * goes at once (on the next microtask, which also gathers what was submitted in the same tick), so
 * a quiet process waits for nothing, and under load commits are shared by as many operations as
 * arrived during one round trip.
 *
 * A failed batch answers each caller as its own statement would have: when a batch of several
 * fails (a bad value in one operation, a deadlock with another process's batch, the database gone),
 * each of its operations runs again alone, all at once, and each caller gets its own statement's
 * result or error; the next batch starts after them.
 */
export class GroupCommit<Op, R> {
  private queue: Waiting<Op, R>[] = [];
  private running = false;
  private readonly maxBatch: number;

  constructor(private readonly o: GroupCommitOptions<Op, R>) {
    this.maxBatch = o.maxBatch ?? 100;
  }

  /** Runs `op` with the next batch; resolves with its result. */
  submit(op: Op): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ op, resolve, reject });
      if (this.running) return;
      this.running = true;
      queueMicrotask(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) await this.runBatch(this.take());
    this.running = false;
  }

  /** The next batch: the oldest operations, up to `maxBatch`, at most one per row, in order. */
  private take(): Waiting<Op, R>[] {
    const batch: Waiting<Op, R>[] = [];
    const rest: Waiting<Op, R>[] = [];
    const rows = new Set<string>();
    for (const w of this.queue) {
      const row = this.o.rowOf?.(w.op);
      if (batch.length >= this.maxBatch || (row !== undefined && rows.has(row))) {
        rest.push(w);
        continue;
      }
      if (row !== undefined) rows.add(row);
      batch.push(w);
    }
    this.queue = rest;
    return batch;
  }

  private async runBatch(batch: Waiting<Op, R>[]): Promise<void> {
    try {
      const results = await this.o.run(batch.map((w) => w.op));
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.reject(err);
        return;
      }
      await Promise.all(
        batch.map((w) =>
          this.o.run([w.op]).then(
            ([result]) => w.resolve(result!),
            (e: unknown) => w.reject(e),
          ),
        ),
      );
    }
  }
}
