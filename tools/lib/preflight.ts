import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

/** How to start the infrastructure on a developer machine (printed when it is missing). */
export const START_HINTS = {
  postgres: [
    'Start Postgres, for example:',
    '  pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
    '  or: docker compose -f deploy/compose.yaml up -d postgres',
    'or point DATABASE_URL at a reachable server.',
  ],
  nats: [
    'Start a NATS server with JetStream enabled, for example:',
    '  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log',
    '  or: nats-server -js',
    '  or: docker compose -f deploy/compose.yaml up -d nats',
    'or point NATS_URL at a reachable server.',
  ],
};

/** The URL with any password replaced, safe to print. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

export class PreflightError extends Error {
  constructor(
    readonly what: 'Postgres' | 'NATS',
    message: string,
    readonly hint: string[],
  ) {
    super(message);
    this.name = 'PreflightError';
  }
}

/** Checks that the Postgres server of `databaseUrl` accepts connections (via its `postgres` database). */
export async function checkPostgres(databaseUrl: string, timeoutMs = 3000): Promise<void> {
  let admin: URL;
  try {
    admin = new URL(databaseUrl);
  } catch {
    throw new PreflightError(
      'Postgres',
      `DATABASE_URL is not a URL: ${JSON.stringify(safeUrl(databaseUrl))}`,
      [],
    );
  }
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
  } catch (err) {
    throw new PreflightError(
      'Postgres',
      `Postgres is not reachable at ${safeUrl(databaseUrl)}: ${(err as Error).message || (err as Error).name}`,
      START_HINTS.postgres,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Checks that NATS answers at `natsUrl` and has JetStream enabled. */
export async function checkNats(natsUrl: string, timeoutMs = 3000): Promise<void> {
  let nc;
  try {
    nc = await connect({ servers: natsUrl, timeout: timeoutMs, maxReconnectAttempts: 0, reconnect: false });
  } catch (err) {
    throw new PreflightError(
      'NATS',
      `NATS is not reachable at ${safeUrl(natsUrl)}: ${(err as Error).message}`,
      START_HINTS.nats,
    );
  }
  try {
    const jsm = await jetstreamManager(nc, { timeout: timeoutMs });
    await jsm.getAccountInfo();
  } catch (err) {
    throw new PreflightError(
      'NATS',
      `NATS at ${safeUrl(natsUrl)} answers but JetStream is not available (${(err as Error).message}); run nats-server with -js`,
      START_HINTS.nats,
    );
  } finally {
    await nc.close().catch(() => undefined);
  }
}
