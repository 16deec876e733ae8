import { PollLoop } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import type { Counter, Metrics } from '@sluice/metrics';
import { transactional, type MikroORM } from '@sluice/store';
import type { UnreferencedBlobRepository } from '../store/unreferenced-blob.repository.js';
import type { DocumentStore } from './ports.js';

/** Blobs taken per transaction by a sweep. */
const SWEEP_BATCH = 20;

/** What one sweep did. */
export interface SweepResult {
  /** Blobs whose chunks were deleted (their rows with them). */
  blobs: number;
  /** Chunks deleted. */
  chunks: number;
}

/**
 * Deletes the chunks nobody references: those of an upload cut by a crash (or by an outage of the
 * store or of Postgres that kept it from cleaning up after itself), and of a replaced or deleted
 * document whose old file could not be deleted at once. It finds them by their
 * `unreferenced_blobs` row older than `abandonAfterSeconds` (the database's clock): an upload
 * writes no chunk past half of that age, and its document commits only with its row still there,
 * so no upload still streaming and no committed document loses a chunk. A row whose blob a
 * document names after all (entered by migration 0012 for an upload of the release before) only
 * leaves. Each batch is one transaction holding its rows (FOR UPDATE SKIP LOCKED): the sweepers of
 * every replica run at once, each blob taken by one. A blob whose chunks could not be deleted is
 * tried again after another `abandonAfterSeconds`. Runs every `everyMs` (and once at start);
 * `document_orphan_chunks_deleted_total` counts the chunks it deleted.
 */
export class OrphanChunkSweeper {
  private readonly loop: PollLoop;
  private stopped = false;
  private readonly deleted: Counter | undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly blobs: UnreferencedBlobRepository,
    private readonly files: DocumentStore,
    private readonly logger: Logger,
    private readonly opts: {
      abandonAfterSeconds: number;
      everyMs: number;
      batch?: number;
      metrics?: Metrics;
    },
  ) {
    this.deleted = opts.metrics?.counter({
      name: 'document_orphan_chunks_deleted_total',
      help: 'Chunks of document files nobody references (uploads cut short) deleted after DOCUMENT_UPLOAD_ABANDON_AFTER_SECONDS',
    });
    this.loop = new PollLoop(
      async () => {
        await this.sweep();
        return false;
      },
      {
        idleMs: opts.everyMs,
        onError: (err) => this.logger.error({ err }, 'orphan document chunk sweep failed; will try again'),
      },
    );
  }

  start(): void {
    this.stopped = false;
    this.loop.start();
  }

  /** Stops after the batch in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop.stop();
  }

  /** Deletes the chunks of every abandoned blob, a batch per transaction, until none is left (or it stops). */
  async sweep(): Promise<SweepResult> {
    const batch = this.opts.batch ?? SWEEP_BATCH;
    const total: SweepResult = { blobs: 0, chunks: 0 };
    for (;;) {
      const pass = await transactional(this.orm, async (em) => {
        const claimed = await this.blobs.claimAbandoned(em, this.opts.abandonAfterSeconds, batch);
        const done: string[] = [];
        const result: SweepResult = { blobs: 0, chunks: 0 };
        for (const { blobId, referenced } of claimed) {
          if (referenced) {
            this.logger.info(
              { blobId },
              'a document references this unreferenced blob after all: its chunks are kept',
            );
            done.push(blobId);
            continue;
          }
          try {
            const n = await this.files.deleteAllChunks(blobId);
            this.deleted?.inc(n);
            result.blobs++;
            result.chunks += n;
            done.push(blobId);
          } catch (err) {
            this.logger.warn(
              { err, blobId },
              'could not delete the chunks of an abandoned upload; tried again later',
            );
            await this.blobs.postpone(em, blobId);
          }
        }
        await this.blobs.untrack(em, ...done);
        return { claimed: claimed.length, result };
      });
      total.blobs += pass.result.blobs;
      total.chunks += pass.result.chunks;
      if (pass.claimed < batch || this.stopped) break;
    }
    if (total.blobs)
      this.logger.info(
        { ...total, abandonAfterSeconds: this.opts.abandonAfterSeconds },
        'chunks of abandoned document uploads deleted',
      );
    return total;
  }
}
