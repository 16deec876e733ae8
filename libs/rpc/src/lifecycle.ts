import type { Logger } from '@sluice/logging';

type Closer = { name: string; close: () => Promise<void> | void };

/**
 * Process lifecycle: closers registered in start order run in reverse order on
 * SIGTERM/SIGINT (stop accepting, drain in-flight work, close NATS and the DB),
 * then the process exits 0. A second signal exits at once.
 */
export class Lifecycle {
  private closers: Closer[] = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly logger: Logger) {}

  /** Registers something to close on shutdown; closed in reverse registration order. */
  onShutdown(name: string, close: () => Promise<void> | void): void {
    this.closers.push({ name, close });
  }

  /** Installs SIGTERM/SIGINT handlers and crash handlers. */
  installSignalHandlers(): void {
    const handler = (signal: string) => {
      if (this.stopping) {
        this.logger.warn({ signal }, 'second signal; exiting now');
        process.exit(1);
      }
      this.logger.info({ signal }, 'shutting down');
      void this.shutdown().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.on('SIGTERM', () => handler('SIGTERM'));
    process.on('SIGINT', () => handler('SIGINT'));
    process.on('unhandledRejection', (err) => {
      this.logger.error({ err }, 'unhandled rejection');
    });
  }

  shutdown(): Promise<void> {
    this.stopping ??= (async () => {
      for (const c of [...this.closers].reverse()) {
        try {
          await c.close();
          this.logger.info({ component: c.name }, 'closed');
        } catch (err) {
          this.logger.error({ err, component: c.name }, 'close failed');
        }
      }
    })();
    return this.stopping;
  }
}
