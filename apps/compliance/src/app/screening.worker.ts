import { PollLoop } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import type { MikroORM } from '@sluice/store';
import type { Clock } from '@sluice/core';
import type { BeneficialOwnerRepository } from '../store/beneficial-owner.repository.js';
import type { VerificationRepository } from '../store/verification.repository.js';
import type { BeneficialOwnersService } from './beneficial-owners.service.js';
import type { VerificationsService } from './verifications.service.js';

/**
 * The scheduled step of asynchronous screening: every `pollMs` it finds the beneficial-owner KYC
 * checks and verifications whose decision is due (durable: the due time is a column, so a
 * restart loses nothing) and decides each. Safe on every replica: a decision is written only if
 * the row is still the one that was due.
 */
export class ScreeningWorker {
  private readonly loop: PollLoop;

  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly repos: { owners: BeneficialOwnerRepository; verifications: VerificationRepository },
    private readonly services: { owners: BeneficialOwnersService; verifications: VerificationsService },
    private readonly logger: Logger,
    pollMs: number,
    private readonly batchSize = 20,
  ) {
    this.loop = new PollLoop(() => this.tick(), {
      idleMs: pollMs,
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
    for (const o of owners) await this.each(() => this.services.owners.decideKyc(o), o.id);
    for (const v of verifications) await this.each(() => this.services.verifications.decide(v), v.id);
    return owners.length === this.batchSize || verifications.length === this.batchSize;
  }

  private async each(fn: () => Promise<void>, id: string): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.logger.error({ err, id }, 'screening decision failed; retried on the next pass');
    }
  }
}
