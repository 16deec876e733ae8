import { NotifiedLoop } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { MikroORM } from '@sluice/store';
import { BULK_IMPORT_CHANNEL, type BulkImportService } from './bulk-import.service.js';

/** Poll interval while the LISTEN connection is down. */
const FALLBACK_MS = 1000;

/**
 * Imports the rows of stored bulk import jobs in the background, a batch per transaction, until
 * none is left. Woken when a transaction that stored a job commits (NotifiedLoop: this process at
 * once, every replica by LISTEN/NOTIFY), and by a safety poll every `pollMs` for a notification
 * lost (or a job left by a crash). Safe on every replica: a job's batch is taken under its row
 * lock (SKIP LOCKED), so two replicas work on different jobs.
 */
export class BulkImportWorker {
  private readonly loop: NotifiedLoop;

  constructor(orm: MikroORM, imports: BulkImportService, logger: Logger, pollMs: number) {
    this.loop = new NotifiedLoop(() => imports.importNextBatch(), {
      orm,
      channel: BULK_IMPORT_CHANNEL,
      logger,
      safetyMs: pollMs,
      fallbackMs: Math.min(FALLBACK_MS, pollMs),
      onError: (err) => logger.error({ err }, 'bulk import batch failed; retried on the next pass'),
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}
