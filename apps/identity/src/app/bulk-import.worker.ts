import { PollLoop } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import type { BulkImportService } from './bulk-import.service.js';

/**
 * Imports the rows of stored bulk import jobs in the background, a batch per transaction, until
 * none is left; woken at once when this process stores a job, and every `pollMs` otherwise (a job
 * stored by another replica, or one left by a crash). Safe on every replica: a job's batch is
 * taken under its row lock (SKIP LOCKED), so two replicas work on different jobs.
 */
export class BulkImportWorker {
  private readonly loop: PollLoop;

  constructor(imports: BulkImportService, logger: Logger, pollMs: number) {
    this.loop = new PollLoop(() => imports.importNextBatch(), {
      idleMs: pollMs,
      onError: (err) => logger.error({ err }, 'bulk import batch failed; retried on the next pass'),
    });
    imports.onReceived = () => this.loop.nudge();
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}
