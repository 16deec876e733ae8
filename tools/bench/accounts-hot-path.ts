/**
 * What accounts spends per call on a payment's hot path (issue 15): CPU µs per GetExternalAccount
 * (quote create), PlaceHold with its payee (execute) and PostHold with the capture entry (settle),
 * in the accounts process and in its Postgres backends, and the SQL statements each call runs;
 * and, for scale, ListDiscoveries, which touches no database (what any call costs).
 *
 * The accounts service runs in this process on a fresh database (its real composition root, pool,
 * outbox relay to NATS; identity replaced by an in-process directory), and a child process calls
 * it over real gRPC, one phase per RPC: `--calls` calls of one RPC, then the next. This process's
 * `process.cpuUsage()` and its backends' `/proc` times are read at each phase's start and end, so
 * the figures are the server side of each call (gRPC, protobuf, the handler, the ORM and driver,
 * the relay publishing the balance events) and nothing of the caller. `--via app` calls the app
 * services directly instead (no gRPC, no child): the database work and mapping alone.
 *
 * The calls are those of a quote + execute pair, spread over `--payers` funded USD accounts, each
 * paying its own EUR external account: PlaceHold of 2.00 USD towards CLEARING naming the payee;
 * PostHold of that hold with the capture entry (CLEARING −T, FEES +F, FX +C in USD; FX −R,
 * SETTLEMENT +R in EUR). `statements/call` counts what this process sent to Postgres per call during
 * the warm-up (BEGIN and COMMIT included, and the relay's statements for the events the calls wrote).
 * A micro-benchmark printed, not an assertion:
 *
 *   npx tsx tools/bench/accounts-hot-path.ts [--calls 5000] [--warmup 500] [--payers 8]
 *     [--concurrency 1] [--via grpc|app] [--rounds 1] [--show-statements] [--profile out.cpuprofile]
 *
 * `--profile` writes a V8 CPU profile of this process (accounts' side) over the measured phases only
 * (node:inspector's Profiler, sampling every 100 µs): open it in Chrome DevTools or any .cpuprofile viewer.
 *
 * Needs Postgres and NATS (DATABASE_URL, NATS_URL), as the services' tests do. On a shared machine
 * the figures move with other work: repeat, and compare runs made back to back.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { accounts as pb, common } from '@sluice/contracts';
import { newId } from '@sluice/core';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import { startServices } from '@sluice/testing';
import { defineAccountsService } from '../../apps/accounts/src/service.js';
import type { LedgerAccountRefInput } from '../../apps/accounts/src/domain/validation.js';
import { processCpuMicros } from './cpu.js';
import { eurAccountInfo } from './system.js';

const { values: args } = parseArgs({
  options: {
    calls: { type: 'string', default: '5000' },
    warmup: { type: 'string', default: '500' },
    payers: { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '1' },
    via: { type: 'string', default: 'grpc' },
    rounds: { type: 'string', default: '1' },
    client: { type: 'string' },
    'show-statements': { type: 'boolean', default: false },
    profile: { type: 'string' },
  },
});

/** What the server sets up and the client needs. */
interface Setup {
  platformId: string;
  payers: { accountId: string; payeeId: string }[];
}

/** `listDiscoveries` (DE, EUR) touches no database: the floor of a call (gRPC, the request context, metrics). */
type Op = 'listDiscoveries' | 'getExternalAccount' | 'placeHold' | 'postHold';
const OPS: Op[] = ['listDiscoveries', 'getExternalAccount', 'placeHold', 'postHold'];

/** The pair's amounts (USD → EUR at 0.9, 5 cents of fees), as a quote of 2.00 USD would carry. */
const TOTAL = 200n;
const FEES = 5n;
const RECEIVED = 175n;

/** One call of `op` for pair `i` (hold ids `bench:<run>:<i>`), through whatever `call` reaches accounts by. */
interface Caller {
  listDiscoveries(platformId: string): Promise<unknown>;
  getExternalAccount(platformId: string, accountId: string): Promise<unknown>;
  placeHold(r: {
    platformId: string;
    holdId: string;
    accountId: string;
    payeeId: string;
  }): Promise<unknown>;
  postHold(r: { platformId: string; holdId: string }): Promise<unknown>;
}

function captureLines(): { account: LedgerAccountRefInput; currency: string; amount: bigint }[] {
  return [
    { account: { system: 'CLEARING' }, currency: 'USD', amount: -TOTAL },
    { account: { system: 'FEES' }, currency: 'USD', amount: FEES },
    { account: { system: 'FX' }, currency: 'USD', amount: TOTAL - FEES },
    { account: { system: 'FX' }, currency: 'EUR', amount: -RECEIVED },
    { account: { system: 'SETTLEMENT' }, currency: 'EUR', amount: RECEIVED },
  ];
}

function grpcCaller(address: string): Caller & { close(): void } {
  const client: PromiseClient<pb.AccountsServiceClient> = createRpcClient(pb.AccountsServiceClient, address, {
    defaultDeadlineMs: 30_000,
  });
  const system = { CLEARING: pb.SystemAccount.CLEARING, FEES: pb.SystemAccount.FEES, FX: pb.SystemAccount.FX, SETTLEMENT: pb.SystemAccount.SETTLEMENT };
  return {
    listDiscoveries: (platformId) =>
      client.listDiscoveries({ platformId, environment: common.Environment.SANDBOX, country: 'DE', currency: 'EUR' }),
    getExternalAccount: (platformId, accountId) => client.getExternalAccount({ platformId, accountId }),
    placeHold: (r) =>
      client.placeHold({
        platformId: r.platformId,
        holdId: r.holdId,
        accountId: r.accountId,
        amount: TOTAL,
        currency: 'USD',
        counterAccount: { systemAccount: pb.SystemAccount.CLEARING },
        kind: 'QUOTE_EXECUTION',
        payeeExternalAccountId: r.payeeId,
      }),
    postHold: (r) =>
      client.postHold({
        platformId: r.platformId,
        holdId: r.holdId,
        postId: `${r.holdId}:post`,
        entry: {
          entryId: `${r.holdId}:capture`,
          kind: 'QUOTE_CAPTURE',
          lines: captureLines().map((l) => ({
            account: { systemAccount: system[(l.account as { system: keyof typeof system }).system] },
            currency: l.currency,
            amount: l.amount,
          })),
        },
      }),
    close: () => (client as unknown as { close(): void }).close(),
  };
}

/** Runs `calls` calls of `op` from `concurrency` loops; pair numbers start at `from`. */
async function runPhase(caller: Caller, setup: Setup, run: string, op: Op, from: number, calls: number, concurrency: number) {
  let next = from;
  const end = from + calls;
  const loop = async () => {
    for (let i = next++; i < end; i = next++) {
      const payer = setup.payers[i % setup.payers.length]!;
      const holdId = `bench:${run}:${i}`;
      if (op === 'listDiscoveries') await caller.listDiscoveries(setup.platformId);
      else if (op === 'getExternalAccount') await caller.getExternalAccount(setup.platformId, payer.payeeId);
      else if (op === 'placeHold')
        await caller.placeHold({ platformId: setup.platformId, holdId, accountId: payer.accountId, payeeId: payer.payeeId });
      else await caller.postHold({ platformId: setup.platformId, holdId });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
}

/** The child: calls the server over gRPC, phase by phase as the parent says. */
async function client(address: string): Promise<void> {
  const caller = grpcCaller(address);
  process.on('message', (m: { phase: [string, Op, number, number, number]; setup: Setup } | 'exit') => {
    if (m === 'exit') {
      caller.close();
      process.exit(0);
    }
    const [run, op, from, calls, concurrency] = m.phase;
    runPhase(caller, m.setup, run, op, from, calls, concurrency).then(
      () => process.send!('done'),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
  process.send!('ready');
}


async function server(): Promise<void> {
  const calls = Number(args.calls);
  const warmup = Number(args.warmup);
  const concurrency = Number(args.concurrency);
  const rounds = Number(args.rounds);
  const via = args.via;
  if (via !== 'grpc' && via !== 'app') throw new Error('--via grpc|app');
  const definition = defineAccountsService({
    holders: {
      customer: async () => ({ name: 'Bench Payee' }),
      platformName: async () => 'Bench Platform',
    },
    platforms: { embeddedWalletCurrencies: async () => [] },
  });
  const services = await startServices(
    'bench-accounts',
    { accounts: definition },
    {
      withoutConsumers: ['accounts'],
      env: { LOG_LEVEL: 'warn', LEDGER_RECONCILE_INTERVAL_SECONDS: '0', DATABASE_POOL_MAX: '10' },
    },
  );
  let child: ChildProcess | undefined;
  try {
    const graph = services.running.accounts.graph;
    const orm = services.running.accounts.deps.orm;
    const platformId = newId('Platform');
    const payers: Setup['payers'] = [];
    for (let p = 0; p < Number(args.payers); p++) {
      const customerId = newId('Customer');
      const [account] = await graph.internalAccounts.ensureAccounts({
        owner: 'CUSTOMER',
        platformId,
        customerId,
        currencies: ['USD'],
        environment: 'SANDBOX',
      });
      await graph.ledger.sandboxFund(platformId, account!.id, 1_000_000_000_000n);
      const payee = await graph.externalAccounts.create({
        platformId,
        environment: 'SANDBOX',
        customerId,
        currency: 'EUR',
        accountInfo: eurAccountInfo(p),
      });
      payers.push({ accountId: account!.id, payeeId: payee.id });
    }
    const setup: Setup = { platformId, payers };

    let phase: (run: string, op: Op, from: number, n: number) => Promise<void>;
    if (via === 'app') {
      const app: Caller = {
        listDiscoveries: async () => graph.discoveries.list({ environment: 'SANDBOX', country: 'DE', currency: 'EUR' }),
        getExternalAccount: (p, a) => graph.externalAccounts.get(p, a),
        placeHold: (r) =>
          graph.ledger.placeHold({
            platformId: r.platformId,
            holdId: r.holdId,
            accountId: r.accountId,
            amount: TOTAL,
            currency: 'USD',
            counterAccount: { system: 'CLEARING' },
            kind: 'QUOTE_EXECUTION',
            payeeExternalAccountId: r.payeeId,
          }),
        postHold: (r) =>
          graph.ledger.postHold({
            platformId: r.platformId,
            holdId: r.holdId,
            postId: `${r.holdId}:post`,
            entry: { entryId: `${r.holdId}:capture`, kind: 'QUOTE_CAPTURE', lines: captureLines() },
          }),
      };
      phase = (run, op, from, n) => runPhase(app, setup, run, op, from, n, concurrency);
    } else {
      const c = fork(fileURLToPath(import.meta.url), ['--client', services.address('accounts')], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      child = c;
      await new Promise<void>((resolve, reject) => {
        c.once('message', () => resolve());
        c.once('exit', (code) => reject(new Error(`the client exited with ${code}`)));
      });
      phase = (run, op, from, n) =>
        new Promise<void>((resolve) => {
          c.once('message', () => resolve());
          c.send({ phase: [run, op, from, n, concurrency], setup });
        });
    }

    // The backends of the bench database (the pool's connections, the relay's listener).
    const backendPids = async () =>
      (
        await orm.em
          .fork()
          .execute<{ pid: number }[]>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
      ).map((r) => r.pid);
    const knex = orm.em.getConnection().getKnex();
    let statements = 0;
    const countStatement = () => void statements++;

    const results: Record<Op, { cpuUs: number[]; pgUs: number[]; wallUs: number[]; statements: number }> = {
      listDiscoveries: { cpuUs: [], pgUs: [], wallUs: [], statements: 0 },
      getExternalAccount: { cpuUs: [], pgUs: [], wallUs: [], statements: 0 },
      placeHold: { cpuUs: [], pgUs: [], wallUs: [], statements: 0 },
      postHold: { cpuUs: [], pgUs: [], wallUs: [], statements: 0 },
    };
    if (args['show-statements']) {
      // One call of each RPC with its statements as sent (MikroORM inlines the values; cut at 160 characters), after a first call.
      const show = (q: { sql?: string }) => console.log(`    ${String(q.sql).replace(/\s+/g, ' ').slice(0, 160)}`);
      for (const op of OPS) {
        await phase('show', op, 0, 1);
        console.log(`${op}:`);
        knex.on('query', show);
        await phase('show', op, 1, 1);
        knex.removeListener('query', show);
      }
    }
    const profiler = args.profile ? new Session() : undefined;
    if (profiler) {
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
    }
    for (let round = 0; round < rounds; round++) {
      const run = `r${round}`;
      // Warm-up (JIT, the pool's connections, the system accounts' first use), statements counted here.
      for (const op of OPS) {
        knex.on('query', countStatement);
        statements = 0;
        await phase(`${run}w`, op, 0, warmup);
        knex.removeListener('query', countStatement);
        results[op].statements = statements / warmup;
      }
      if (profiler && round === 0) await profiler.post('Profiler.start');
      for (const op of OPS) {
        const pids = await backendPids();
        const pg0 = pids.reduce((s, p) => s + processCpuMicros(p), 0);
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        await phase(run, op, 0, calls);
        const wall = performance.now() - t0;
        // Let the relay publish what the last calls wrote (its CPU belongs to them).
        if (op === 'postHold') await new Promise((r) => setTimeout(r, 200));
        const cpu = process.cpuUsage(cpu0);
        const pg1 = pids.reduce((s, p) => s + processCpuMicros(p), 0);
        results[op].cpuUs.push((cpu.user + cpu.system) / calls);
        results[op].pgUs.push((pg1 - pg0) / calls);
        results[op].wallUs.push((wall * 1000) / calls);
      }
    }
    if (profiler) {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(args.profile!, JSON.stringify(profile));
      profiler.disconnect();
    }
    const f = (xs: number[]) => xs.map((x) => Math.round(x)).join(' / ');
    console.log(
      `accounts hot path, via ${via}, ${calls} calls per RPC after ${warmup} of warm-up, ${setup.payers.length} payers, concurrency ${concurrency}, ${rounds} round(s); Node ${process.version}, load average ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')}`,
    );
    console.log('RPC                  accounts CPU µs/call   postgres CPU µs/call   wall µs/call   statements/call');
    for (const op of OPS) {
      const r = results[op];
      console.log(
        `${op.padEnd(20)} ${f(r.cpuUs).padStart(21)}   ${f(r.pgUs).padStart(20)}   ${f(r.wallUs).padStart(12)}   ${r.statements.toFixed(1).padStart(15)}`,
      );
    }
  } finally {
    if (child) {
      child.send('exit');
      await new Promise((r) => child!.once('exit', r));
    }
    await services.stop();
  }
}

if (args.client) await client(args.client);
else await server();
