/**
 * A background loop that calls `tick` again at once while it reports work
 * (`true`) and otherwise sleeps `idleMs`, or until `nudge()`. Used by every
 * poller (outbox relay, webhook delivery, scheduled jobs) so start, nudge and
 * graceful stop behave the same everywhere. Errors are handed to `onError` and
 * the loop goes on after the idle delay.
 */
export class PollLoop {
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** A nudge that came while a tick ran: the loop looks again instead of sleeping (no lost wake-up). */
  private nudged = false;

  constructor(
    private readonly tick: () => Promise<boolean>,
    private readonly opts: { idleMs: number; onError: (err: unknown) => void },
  ) {}

  get isRunning(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Runs the next tick now instead of after the idle delay. */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  /** Stops after the tick in progress (if any) and waits for it. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let busy = false;
      this.nudged = false;
      try {
        busy = await this.tick();
      } catch (err) {
        this.opts.onError(err);
      }
      if (busy || this.nudged || !this.running) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.opts.idleMs);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }
}
