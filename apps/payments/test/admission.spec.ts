import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { common, payments as pb } from '@sluice/contracts';
import type { PromiseClient } from '@sluice/rpc';
import { eventually, rejection, type World, type WorldPlatform } from '@sluice/testing';
import type { PayoutStatus, RailPayment } from '../src/app/ports.js';
import { SandboxAccountPayoutRail, SandboxUmaPayoutRail } from '../src/clients/sandbox-rails.js';
import type { PaymentsGraph } from '../src/compose.js';
import { accountInfoFor, Holders, startPaymentsWithNeighbours } from './support/neighbours.js';

// Admission of new payments while settlement is behind (src/app/admission.ts), through the real
// scheduler: the sandbox payout rail (an outside party) answers its settle checks only when the
// test lets it, so the scheduler's jobs wait on it and a backlog of due settle jobs builds as it
// would under overload. Everything else is real: payments over gRPC, accounts' ledger, identity.

const SANDBOX = common.Environment.SANDBOX;
const SETTLE_KIND = 'quote-payment.settle';

/** A payout rail whose settle checks wait until the test lets them through. */
class GatedRail extends SandboxAccountPayoutRail {
  private open = false;
  private readonly waiting: (() => void)[] = [];
  /** Checks waiting at the gate now. */
  get blocked(): number {
    return this.waiting.length;
  }
  override async status(p: RailPayment): Promise<PayoutStatus> {
    if (!this.open) await new Promise<void>((r) => this.waiting.push(r));
    return super.status(p);
  }
  /** Lets the checks waiting now through (later ones wait). */
  releaseWaiting(): void {
    for (const r of this.waiting.splice(0)) r();
  }
  /** Lets every check through, now and from now on. */
  openGate(): void {
    this.open = true;
    this.releaseWaiting();
  }
}

const rail = new GatedRail();
let stack: Awaited<ReturnType<typeof startPaymentsWithNeighbours>>;
let client: PromiseClient<pb.PaymentsServiceClient>;
let world: World;
let sql: pg.Pool;
let P: WorldPlatform;
let platformId: string;
let graph: PaymentsGraph;

const holders = new Holders(
  () => world,
  () => P,
);
const available = async (accountId: string) => (await world.balance(platformId, accountId)).available;

/** A funded USD account of a new customer and a quote from it to the customer's EUR account. */
async function quote(balance = 50_000n): Promise<{ src: string; quoteId: string }> {
  const src = await holders.internal('USD', balance);
  const owner = holders.ownerOf.get(src)!;
  const dst = (await world.externalAccount(P, owner, 'EUR', accountInfoFor('EUR', '000'))).id;
  const { quote: q } = await client.createQuote({
    platformId,
    environment: SANDBOX,
    sourceKind: 'ACCOUNT',
    sourceAccountId: src,
    destinationKind: 'ACCOUNT',
    destinationAccountId: dst,
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 10_000n,
    immediatelyExecute: false,
    senderCustomerInfoJson: '',
  });
  return { src, quoteId: q!.id };
}

const exec = (quoteId: string, deadlineMs?: number) =>
  client.executeQuote({ platformId, environment: SANDBOX, quoteId }, deadlineMs ? { deadlineMs } : {});
const statusOf = async (quoteId: string) => (await client.getQuote({ platformId, quoteId })).quote!.status;

beforeAll(async () => {
  stack = await startPaymentsWithNeighbours('admission', {
    adapters: { payoutRails: { SANDBOX: { account: rail, uma: new SandboxUmaPayoutRail() } } },
    env: {
      // Settle checks fall due 10 ms after the hand-off; one job at a time, so one waiting check holds the pass.
      SANDBOX_TIME_SCALE: '0.01',
      JOB_CONCURRENCY: '1',
      ADMISSION_MAX_JOB_LAG_MS: '100',
      ADMISSION_MAX_WAIT_MS: '1500',
    },
  });
  ({ client, world, sql } = stack);
  graph = stack.running.graph as PaymentsGraph;
  P = await world.platform('SANDBOX');
  platformId = P.id;
}, 120_000);

afterAll(async () => {
  rail.openGate();
  await stack?.stop();
});

describe('admission of new payments while settlement is behind', () => {
  it('holds new executes and transfers while the scheduler is behind, refuses them after the wait (nothing held), admits them once it caught up', async () => {
    // Caught up: payments are admitted at once. The first payment's settle check waits at the rail,
    // holding the scheduler's pass (one job at a time); twenty more payments' settle jobs fall due behind it.
    expect(graph.admission.behind()).toBe(false);
    const first = await quote();
    expect((await exec(first.quoteId)).quote!.status).toBe('PROCESSING');
    await eventually(async () => rail.blocked === 1 || undefined);
    const backlog = await Promise.all(Array.from({ length: 20 }, () => quote()));
    for (const b of backlog) expect((await exec(b.quoteId)).quote!.status).toBe('PROCESSING');
    // They have waited a minute (as after a long overload), and the check in the pass goes through:
    // the next claim takes a full batch of jobs due long ago, and the scheduler is behind.
    await sql.query(
      `UPDATE payments.scheduled_jobs SET run_at = now() - interval '1 minute'
       WHERE kind = $1 AND done_at IS NULL AND locked_until IS NULL`,
      [SETTLE_KIND],
    );
    rail.releaseWaiting();
    await eventually(async () => (graph.admission.behind() ? true : undefined));
    const lag = await eventually(async () => {
      const text = await stack.running.deps.metrics.text();
      const m = /^scheduler_claim_lag_seconds\{[^}]*\} (\S+)$/m.exec(text);
      return m && Number(m[1]) >= 59 ? Number(m[1]) : undefined;
    });
    expect(lag).toBeLessThan(120);

    // Behind: a replay of an executed quote is answered at once (nothing new to settle)...
    expect((await exec(backlog[0]!.quoteId, 1_300)).quote!.transactionId).toMatch(/^Transaction:/);
    // ...a new execute with little deadline left is refused once what it can spare of it passed
    // (1.3 s less the second kept for the payment; had it waited the 1.5 s, its deadline would have
    // answered instead): 503-mapped, nothing held, the quote still PENDING...
    const short = await quote();
    const refused = await rejection(exec(short.quoteId, 1_300));
    expect(refused).toMatchObject({ kind: 'UNAVAILABLE', code: 'SERVICE_UNAVAILABLE' });
    expect(await statusOf(short.quoteId)).toBe('PENDING');
    expect(await available(short.src)).toBe(50_000n);
    expect(await world.holdsOf(platformId, short.src)).toHaveLength(0);
    // ...and so is a transfer-out: no transaction created for its request key.
    const transferSrc = await holders.internal('USD', 5_000n);
    const transferDst = (
      await world.externalAccount(P, holders.ownerOf.get(transferSrc)!, 'USD', accountInfoFor('USD', '000'))
    ).id;
    const transfer = await rejection(
      client.transferOut(
        {
          platformId,
          environment: SANDBOX,
          requestKey: 'admission-transfer',
          sourceAccountId: transferSrc,
          destinationAccountId: transferDst,
          amount: 1_000n,
        },
        { deadlineMs: 1_300 },
      ),
    );
    expect(transfer.code).toBe('SERVICE_UNAVAILABLE');
    expect(
      (await sql.query(`SELECT 1 FROM payments.transactions WHERE request_key = 'admission-transfer'`)).rowCount,
    ).toBe(0);
    expect(await available(transferSrc)).toBe(5_000n);

    // A new execute with its full deadline waits ADMISSION_MAX_WAIT_MS, then is refused the same way.
    const waited = await quote();
    const t1 = Date.now();
    const refusedLater = await rejection(exec(waited.quoteId));
    expect(Date.now() - t1).toBeGreaterThanOrEqual(1_400);
    expect(refusedLater.code).toBe('SERVICE_UNAVAILABLE');
    expect(await statusOf(waited.quoteId)).toBe('PENDING');

    // One that is waiting when the scheduler catches up goes ahead: nothing done while it waited,
    // then held, claimed and handed on as any execute.
    const admitted = await quote();
    const pending = exec(admitted.quoteId);
    await new Promise((r) => setTimeout(r, 300));
    expect(await statusOf(admitted.quoteId)).toBe('PENDING');
    expect(await available(admitted.src)).toBe(50_000n);
    expect(graph.admission.behind()).toBe(true);
    rail.openGate();
    expect((await pending).quote!.status).toMatch(/^(PROCESSING|COMPLETED)$/);
    expect(graph.admission.behind()).toBe(false);
    await eventually(async () => ((await statusOf(admitted.quoteId)) === 'COMPLETED' ? true : undefined));
    expect(await available(admitted.src)).toBe(40_000n);
    // The refused ones were never started: executed now, they go through.
    expect((await exec(waited.quoteId)).quote!.status).toMatch(/^(PROCESSING|COMPLETED)$/);
    // The backlog settled: every payment of it COMPLETED.
    for (const b of [first, ...backlog])
      await eventually(async () => ((await statusOf(b.quoteId)) === 'COMPLETED' ? true : undefined));
    const { rows } = await sql.query(
      `SELECT count(*)::int AS n FROM payments.scheduled_jobs WHERE kind = $1 AND done_at IS NULL`,
      [SETTLE_KIND],
    );
    expect(rows[0].n).toBe(0);
    const text = await stack.running.deps.metrics.text();
    expect(text).toMatch(/^admission_waits_total\{[^}]*outcome="refused"[^}]*\} 3$/m);
    expect(text).toMatch(/^admission_waits_total\{[^}]*outcome="admitted"[^}]*\} 1$/m);
    // Each refusal was answered once: the client's retry policy (for UNAVAILABLE in transport) did not repeat it.
    expect(text).toMatch(
      /^grpc_server_handled_total\{[^}]*grpc_method="TransferOut"[^}]*grpc_code="UNAVAILABLE"[^}]*\} 1$/m,
    );
  }, 60_000);
});
