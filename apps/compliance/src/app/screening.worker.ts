import { NotifiedLoop } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { MikroORM } from '@sluice/store';
import type { Clock } from '@sluice/core';
import type { BeneficialOwnerRepository } from '../store/beneficial-owner.repository.js';
import type { VerificationRepository } from '../store/verification.repository.js';
import { SCREENING_CHANNEL } from '../store/sql.js';
import type { BeneficialOwnersService } from './beneficial-owners.service.js';
import type { VerificationsService } from './verifications.service.js';

/**
 * The scheduled step of asynchronous screening: it finds the beneficial-owner KYC checks and
 * verifications whose decision is due (durable: the due time is a column, so a restart loses
 * nothing) and decides each. It wakes when a transaction that gives a row a due time commits
 * (the repositories announce it: LISTEN/NOTIFY, every replica) and when the next decision falls
 * due (read after each pass), with a safety poll every `pollMs` for a lost notification: an idle
 * worker runs no query. Safe on every replica: a decision is written only if the row is still the
 * one that was due.
 */
/** How soon a failed decision is tried again, and the poll interval without a LISTEN connection. */
const RETRY_MS = 250;

export class ScreeningWorker {
  private readonly loop: NotifiedLoop;

  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly repos: { owners: BeneficialOwnerRepository; verifications: VerificationRepository },
    private readonly services: { owners: BeneficialOwnersService; verifications: VerificationsService },
    private readonly logger: Logger,
    pollMs: number,
    private readonly batchSize = 20,
  ) {
    this.loop = new NotifiedLoop(() => this.tick(), {
      orm,
      channel: SCREENING_CHANNEL,
      logger,
      safetyMs: pollMs,
      fallbackMs: RETRY_MS,
      onError: (err) => this.logger.error({ err }, 'screening pass failed'),
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass; true when it found a full batch (more may be due). */
  async tick(): Promise<boolean> {
    const em = this.orm.em.fork();
    const now = this.clock.now();
    const owners = await this.repos.owners.due(em, now, this.batchSize);
    const verifications = await this.repos.verifications.due(em, now, this.batchSize);
    let failed = false;
    for (const o of owners) failed = !(await this.each(() => this.services.owners.decideKyc(o), o.id)) || failed;
    for (const v of verifications)
      failed = !(await this.each(() => this.services.verifications.decide(v), v.id)) || failed;
    const full = owners.length === this.batchSize || verifications.length === this.batchSize;
    if (!full) {
      const next = [await this.repos.owners.nextDueAt(em), await this.repos.verifications.nextDueAt(em)]
        .filter((d): d is Date => !!d)
        .reduce((a, b) => Math.min(a, b.getTime()), Infinity);
      // A decision that failed stays due: try it again after RETRY_MS, not in a tight loop.
      const inMs = next - this.clock.now().getTime();
      this.loop.wakeIn(Number.isFinite(next) ? (failed ? Math.max(inMs, RETRY_MS) : inMs) : undefined);
    }
    return full;
  }

  /** Decides one; false if it failed (logged; it stays due). */
  private async each(fn: () => Promise<void>, id: string): Promise<boolean> {
    try {
      await fn();
      return true;
    } catch (err) {
      this.logger.error({ err, id }, 'screening decision failed; retried on a later pass');
      return false;
    }
  }
}
