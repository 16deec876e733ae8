/**
 * The short, fixed-seed versions of `npm run chaos` (tools/chaos/): faults under a mixed load
 * (3 payers; one client each of customers, transfers, an embedded wallet's signed actions, an
 * agent and document uploads) on the real processes, then the checks that matter — every
 * accepted payment and transfer terminal, the money reconciled against what clients were
 * answered, every completed payment's webhook delivered, every Idempotency-Key answering the
 * same on replay, each customer once, no signing request accepted twice, every agent action
 * final and executed at most once within its limits, every document stored once and whole.
 *
 * - rolling: two processes of every app, one of each restarted gracefully (SIGTERM) one at a
 *   time under load, as a Kubernetes rollout does: not one request may fail, even once (the full
 *   run, `npm run chaos -- --mode rolling`, restarts both; each restart under this load costs
 *   15–60 s of a 2-core machine, so CI restarts one replica per app: 8 restarts, every app);
 * - kill: a process of a random app SIGKILLed and restarted, 8 times (the full run does 50+);
 * - outage: Postgres, then NATS, unreachable for 3 s each (a forwarder between the services
 *   and the server cuts every connection; the shared servers are untouched): every answer
 *   meanwhile is a success or a 503 with Retry-After, never a 500 or a hang, and the system
 *   recovers by itself.
 */
import { describe, expect, it } from 'vitest';
import { CHAOS_DEFAULTS, formatChaos, runChaos, type ChaosOptions } from '../../tools/chaos/scenario.js';
import { natsUrl } from '@sluice/testing';

async function run(o: Partial<ChaosOptions> & Pick<ChaosOptions, 'mode'>) {
  const result = await runChaos({
    ...CHAOS_DEFAULTS,
    baseDatabaseUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    natsUrl: await natsUrl(),
    seed: 20261126,
    clients: 3,
    log: (line) => process.stdout.write(`[resilience ${o.mode}] ${line}\n`),
    ...o,
  });
  process.stdout.write(`${formatChaos(result)}\n`);
  // The mixed load ran too, and a replayed stamp was never accepted a second time.
  expect(result.mixed.customers.created).toBeGreaterThan(0);
  expect(result.mixed.transfers.accepted).toBeGreaterThan(0);
  expect(result.mixed.wallet.signed.accepted).toBeGreaterThan(0);
  expect(result.mixed.wallet.replays.acceptedTwice).toBe(0);
  expect(result.mixed.agents.transactions).toBeGreaterThan(0);
  expect(result.mixed.agents.waited).toBeGreaterThan(0);
  expect(result.mixed.documents.uploaded).toBeGreaterThan(0);
  return result;
}

describe('resilience under load (short versions of npm run chaos)', () => {
  it('restarts a replica of every app one at a time without failing a single request', { timeout: 900_000 }, async () => {
    const r = await run({ mode: 'rolling', replicas: 2, restartsPerApp: 1 });
    expect(r.faults).toHaveLength(8);
    expect(r.problems).toEqual([]);
    expect(r.firstAttemptFailures).toBe(0);
    expect(r.payments).toBeGreaterThan(0);
    expect(r.webhooks.missing).toBe(0);
    // Both replicas of each service on the payment path served calls since their restart (round robin).
    // (The gateways are restarted last; a client's kept-alive connections may all be on one by then.)
    for (const app of ['payments', 'accounts', 'identity'])
      for (const unit of [app, `${app}#2`]) expect(r.spread[unit], `${unit} served calls`).toBeGreaterThan(0);
  });

  it('keeps money, events and idempotency whole through SIGKILLs of random processes', { timeout: 900_000 }, async () => {
    const r = await run({ mode: 'kill', kills: 8, killGapMs: [200, 1200] });
    expect(r.faults).toHaveLength(8);
    expect(r.problems).toEqual([]);
    expect(r.money.reconcile.consistent).toBe(true);
    expect(r.payments).toBeGreaterThan(0);
  });

  it('answers 503 with Retry-After while Postgres or NATS is unreachable, and recovers by itself', { timeout: 900_000 }, async () => {
    const r = await run({ mode: 'outage', outageSec: 3 });
    expect(r.problems).toEqual([]);
    expect(r.badOutageAnswers).toEqual([]);
    // The Postgres outage was felt (the requests meanwhile were answered 503), and nothing hung.
    expect(r.duringOutage['503'] ?? 0).toBeGreaterThan(0);
    expect(r.duringOutage['timeout'] ?? 0).toBe(0);
    expect(r.failed).toBe(0);
  });
});
