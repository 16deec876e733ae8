import type { Metrics } from '@sluice/metrics';
import { fail } from '../domain/errors.js';

/** How the admission of new payments follows the scheduler (the configuration's ADMISSION_* values). */
export interface AdmissionOptions {
  /**
   * The scheduler is behind while its last claim was a full batch whose youngest job had been due
   * longer than this (ms). 0 turns admission off: every payment is accepted at once.
   */
  maxJobLagMs: number;
  /** How long a new payment waits for the scheduler to catch up before it is refused (ms). */
  maxWaitMs: number;
  /**
   * What must be left of the caller's deadline once the wait ends, for the payment itself (ms): the
   * wait is cut short by that much, so a payment admitted late still has time to run.
   */
  deadlineMarginMs?: number;
  /** When the caller being served must have its answer (epoch ms), if it said (the inherited gRPC deadline). */
  deadline?: () => number | undefined;
  metrics?: Metrics;
}

/**
 * Admission of new payments while the job scheduler is behind: load shedding at the one place
 * where work outlives its request.
 *
 * An execute (or transfer) is answered once its payment is handed to the rail, but settling it is
 * a job that runs afterwards on the same cores. A stack given more payments than it can settle
 * accepts them faster than its scheduler runs their jobs, and the backlog grows for as long as the
 * load lasts (on the benchmark's two cores at 32 clients: 100 accepted against 65 settled per
 * second, 11–15 s of settling after the load). So a new payment waits while the scheduler is
 * behind — its last claim was a full batch whose youngest job had been due more than `maxJobLagMs`
 * — and goes ahead as soon as a claim finds it caught up. Under overload clients see time, not errors: closed-loop
 * clients slow to what settles. A payment that waited `maxWaitMs` (or as much of its caller's
 * deadline as can be spared) is refused with `SERVICE_UNAVAILABLE` (503, `Retry-After`) before
 * anything was held or written, so a retry is safe.
 *
 * What is known of the backlog is what this process's scheduler saw at its last claim (no query of
 * its own): for a full batch, how long its youngest job had been due (the jobs left fell due after
 * it); a batch that was not full left no due job waiting. A replica that runs no scheduler admits
 * everything.
 */
export class JobLagAdmission {
  private lagMs = 0;
  private readonly waiting = new Set<() => void>();
  private readonly margin: number;
  private readonly m:
    | {
        lag: ReturnType<Metrics['gauge']>;
        waits: ReturnType<Metrics['counter']>;
      }
    | undefined;

  constructor(private readonly opts: AdmissionOptions) {
    this.margin = opts.deadlineMarginMs ?? 1_000;
    this.m = opts.metrics && {
      lag: opts.metrics.gauge({
        name: 'scheduler_claim_lag_seconds',
        help: 'At the scheduler’s last claim, how long the youngest job of a full batch had been due (0: the batch was not full, no due job left waiting)',
      }),
      waits: opts.metrics.counter({
        name: 'admission_waits_total',
        help: 'New payments that waited for the scheduler to catch up, by outcome (admitted, refused)',
        labelNames: ['outcome'],
      }),
    };
  }

  /** The scheduler's lag after each of its claims (JobSchedulerOptions.onLag). */
  observe(lagMs: number): void {
    this.lagMs = lagMs;
    this.m?.lag.set(lagMs / 1000);
    if (this.behind()) return;
    for (const admit of this.waiting) admit();
    this.waiting.clear();
  }

  /** True while new payments wait. */
  behind(): boolean {
    return this.opts.maxJobLagMs > 0 && this.lagMs > this.opts.maxJobLagMs;
  }

  /**
   * Resolves at once unless the scheduler is behind; then when a claim finds it caught up. Throws
   * SERVICE_UNAVAILABLE when that takes longer than the wait allowed (nothing done yet: retry).
   */
  async admit(): Promise<void> {
    if (!this.behind()) return;
    const deadline = this.opts.deadline?.();
    const wait = Math.min(this.opts.maxWaitMs, deadline === undefined ? Infinity : deadline - Date.now() - this.margin);
    const admitted =
      wait > 0 &&
      (await new Promise<boolean>((resolve) => {
        const admit = () => {
          clearTimeout(timer);
          resolve(true);
        };
        const timer = setTimeout(() => {
          this.waiting.delete(admit);
          resolve(false);
        }, wait);
        this.waiting.add(admit);
      }));
    this.m?.waits.inc({ outcome: admitted ? 'admitted' : 'refused' });
    if (!admitted)
      throw fail(
        'SERVICE_UNAVAILABLE',
        'Payments are being accepted faster than they settle; retry in a moment',
      );
  }
}
