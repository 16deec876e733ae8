/**
 * The webhook benchmark: every app as its own process (tools/stack.ts) on a fresh database, the
 * platform's endpoint a loopback receiver in this process that verifies every signature with the
 * official `standardwebhooks` package. N clients fund the platform's account in a loop
 * (`POST /sandbox/internal-accounts/{id}/fund`: an INCOMING transaction and one committed ledger
 * change, so two webhooks each: INCOMING_PAYMENT.COMPLETED and INTERNAL_ACCOUNT.BALANCE_UPDATED) for
 * the window; reported per client count:
 * webhooks delivered and verified per second, commit → verified-delivery latency (the body's
 * `timestamp` is the commit time, on this machine's clock) p50/p95/p99, and CPU per delivered webhook
 * (all processes of the stack, their Postgres backends, NATS). `--no-endpoint` runs the same load with
 * no endpoint (what the events cost when nobody listens).
 *
 *   npx tsx tools/bench/webhooks.ts [--clients 1,8,32] [--duration 10] [--no-endpoint]
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { startFreshStack } from '../lib/fresh-stack.js';
import { CpuSampler } from './cpu.js';
import { percentile } from './stats.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}
const clientCounts = arg('clients', '1,8,32').split(',').map(Number);
const durationS = Number(arg('duration', '10'));
const withEndpoint = !process.argv.includes('--no-endpoint');
/** Webhooks one funding makes (INCOMING_PAYMENT.COMPLETED, INTERNAL_ACCOUNT.BALANCE_UPDATED). */
const WEBHOOKS_PER_FUNDING = 2;

async function main(): Promise<void> {
  let secret = '';
  let verified = 0;
  let invalid = 0;
  let latencies: number[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        const msg = new Webhook(secret).verify(body, req.headers as Record<string, string>) as {
          timestamp: string;
        };
        verified++;
        latencies.push(at - Date.parse(msg.timestamp));
      } catch {
        invalid++;
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const addr = receiver.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/hooks`;
  const { stack, databaseName: dbName, close } = await startFreshStack('benchwh');
  const auth = stack.platforms.sandbox!.authorization;
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(stack.baseUrl + path, {
      method,
      headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read field by field
    return { status: r.status, json: (await r.json().catch(() => undefined)) as Record<string, any> };
  };
  try {
    const cfg = await call('PATCH', '/config', {
      ...(withEndpoint ? { webhookEndpoint: url } : {}),
      supportedCurrencies: [{ currencyCode: 'USD' }],
    });
    if (cfg.status !== 200) throw new Error(`PATCH /config: ${cfg.status}`);
    secret = cfg.json.webhookSigningSecret as string;
    const accounts = await call('GET', '/platform/internal-accounts?currency=USD');
    const account = accounts.json.data[0].id as string;
    const rows: string[] = [];
    for (const n of clientCounts) {
      // Warm up, then measure a window; the deliveries of the window are counted until they drain.
      verified = 0;
      latencies = [];
      let funded = 0;
      let stopping = false;
      const roots = new Map<number, string>();
      for (const app of stack.apps) {
        const pid = stack.pid(app);
        if (pid) roots.set(pid, app);
      }
      const cpu = new CpuSampler(roots, dbName);
      cpu.start();
      const started = Date.now();
      const clients = Array.from({ length: n }, async () => {
        while (!stopping) {
          const r = await call('POST', `/sandbox/internal-accounts/${encodeURIComponent(account)}/fund`, {
            amount: 1,
          });
          if (r.status === 200) funded++;
        }
      });
      await new Promise((r) => setTimeout(r, durationS * 1000));
      stopping = true;
      await Promise.all(clients);
      const loadEnded = Date.now();
      // Drain: every webhook of the window's fundings is delivered (or 60 s pass).
      const drainLimit = Date.now() + 60_000;
      while (withEndpoint && verified < funded * WEBHOOKS_PER_FUNDING && Date.now() < drainLimit)
        await new Promise((r) => setTimeout(r, 100));
      const ended = Date.now();
      const report = cpu.stop();
      const cpuTotal = Object.entries(report.byProcess)
        .filter(([k]) => k !== 'other processes' && k !== 'postgres: other databases')
        .reduce((s, [, v]) => s + v, 0);
      const secs = (ended - started) / 1000;
      const sorted = [...latencies].sort((a, b) => a - b);
      const cpuMsPerEvent = ((cpuTotal / 100) * secs * 1000) / Math.max(1, withEndpoint ? verified : funded);
      rows.push(
        withEndpoint
          ? `| ${n} | ${funded} | ${verified} | ${(verified / secs).toFixed(1)} | ${percentile(sorted, 50)} | ${percentile(sorted, 95)} | ${percentile(sorted, 99)} | ${cpuMsPerEvent.toFixed(1)} | ${((ended - loadEnded) / 1000).toFixed(1)} |`
          : `| ${n} | ${funded} | ${(funded / ((loadEnded - started) / 1000)).toFixed(1)} | ${cpuMsPerEvent.toFixed(1)} |`,
      );
      process.stderr.write(`${n} clients: funded ${funded}, verified ${verified}, invalid ${invalid}\n`);
      process.stderr.write(`  cpu ${JSON.stringify(report.byProcess)}\n`);
    }
    process.stdout.write(
      withEndpoint
        ? '| clients | events | verified webhooks | delivered/s | p50 ms | p95 ms | p99 ms | CPU ms per webhook | drain s |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n'
        : '| clients | events | events/s | CPU ms per event |\n| --- | --- | --- | --- |\n',
    );
    process.stdout.write(rows.join('\n') + '\n');
    if (invalid) process.stdout.write(`${invalid} webhooks failed verification\n`);
  } finally {
    await close();
    receiver.close();
  }
}

void main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
