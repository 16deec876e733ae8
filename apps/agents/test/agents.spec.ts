import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { agents as pb, common, payments } from '@sluice/contracts';
import { ManualClock, newId, type DomainError } from '@sluice/core';
import type { PromiseClient } from '@sluice/rpc';
import { eventually, rejection, type World as TestWorld, type WorldPlatform } from '@sluice/testing';
import { convertAmount } from '../src/domain/enforcement.js';
import { eurAccountInfo, startAgentsWithNeighbours, usdAccountInfo, type PaymentsWithOutage } from './support/neighbours.js';

// The agents service over real gRPC and Postgres with its real neighbours started in-process
// (identity, accounts, wallet-auth, payments): balances are read from accounts, transactions and
// their agent_id from payments. The one deliberate fault is a payments outage switch on the
// agents service's own payments client.

const clock = new ManualClock(Date.now());
let stack: Awaited<ReturnType<typeof startAgentsWithNeighbours>>;
let client: PromiseClient<pb.AgentsServiceClient>;
let paymentsClient: PromiseClient<payments.PaymentsServiceClient>;
let sql: pg.Pool;
let tw: TestWorld;
let outage: PaymentsWithOutage;

beforeAll(async () => {
  stack = await startAgentsWithNeighbours('agents', {
    clock,
    env: {
      // The test moves a manual clock, which announces nothing: poll instead of the 10 s safety poll.
      AGENT_WORKER_POLL_MS: '20',
      AGENT_DEVICE_CODE_MAX_FAILURES: '5',
      AGENT_ACTION_APPROVAL_TTL_SECONDS: '600',
      AGENT_ACTION_STALL_SECONDS: '30',
    },
  });
  ({ client, sql, world: tw, outage } = stack);
  paymentsClient = stack.payments;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});


const SANDBOX = common.Environment.SANDBOX;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

function policy(p: Partial<pb.AgentPolicy> & { limits?: Partial<pb.SpendingLimits> } = {}): pb.AgentPolicy {
  const { limits, ...rest } = p;
  return pb.AgentPolicy.fromPartial({
    permissions: ['VIEW_TRANSACTIONS', 'CREATE_TRANSFERS', 'CREATE_QUOTES', 'EXECUTE_QUOTES'],
    defaultExecutionMode: 'AUTO',
    spendingLimits: { currency: 'USD', perTransactionLimit: 100_000n, ...limits },
    ...rest,
  });
}

interface World {
  platform: WorldPlatform;
  platformId: string;
  customerId: string;
  account: string;
  external: string;
  /** A EUR bank account of the customer (quotes are cross-currency). */
  externalEur: string;
  agentId: string;
  token: string;
  ref: { platformId: string; agentId: string };
}

/** A platform, a customer with a funded USD account and a USD bank account, and a connected agent. */
async function world(
  p: Parameters<typeof policy>[0] = {},
  balance = 1_000_000n,
  opts: { embeddedWallet?: boolean } = {},
): Promise<World> {
  const platform = await tw.platform('SANDBOX', opts.embeddedWallet ? { embeddedWalletCurrencies: ['USDC'] } : {});
  const platformId = platform.id;
  const customerId = (await tw.customer(platformId)).id;
  const account = (
    await tw.internalAccount(platform, customerId, opts.embeddedWallet ? 'USDC' : 'USD', {
      balance,
      ...(opts.embeddedWallet ? { type: 'EMBEDDED_WALLET' as const } : {}),
    })
  ).id;
  const external = (await tw.externalAccount(platform, customerId, 'USD', usdAccountInfo())).id;
  const externalEur = (await tw.externalAccount(platform, customerId, 'EUR', eurAccountInfo())).id;
  const { agent, deviceCode } = await client.createAgent({
    platformId,
    environment: SANDBOX,
    name: 'Payroll bot',
    customerId,
    policy: policy(p),
  });
  const { accessToken } = await client.redeemDeviceCode({ code: deviceCode!.code, source: `src-${platformId}` });
  return { platform, platformId, customerId, account, external, externalEur, agentId: agent!.id, token: accessToken, ref: { platformId, agentId: agent!.id } };
}

/** The request of a quote from the customer's USD account to its EUR bank account. */
const quoteRequest = (w: World, amount: bigint) =>
  payments.CreateQuoteRequest.fromPartial({
    sourceKind: 'ACCOUNT',
    sourceAccountId: w.account,
    destinationKind: 'ACCOUNT',
    destinationAccountId: w.externalEur,
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: amount,
  });

/** A quote of the agent (payments' CreateQuote through the agents service). */
async function agentQuote(w: World, amount = 2_500n) {
  const { quote } = await client.createAgentQuote({ ...w.ref, quote: quoteRequest(w, amount) });
  return quote!;
}

const transferOut = (w: World, amount = 1_000n, requestKey = newId('Request')) =>
  client.agentTransfer({ ...w.ref, type: 'TRANSFER_OUT', sourceAccountId: w.account, destinationAccountId: w.external, amount, requestKey });

async function usage(w: World) {
  return (await client.getAgent({ platformId: w.platformId, agentId: w.agentId })).agent!.usage!;
}

/** How many payments carry the agent's id (payments' own table). */
const movesOf = async (w: World): Promise<number> =>
  (await sql.query(`SELECT count(*)::int AS n FROM payments.transactions WHERE agent_id = $1`, [w.agentId])).rows[0].n;

/** The available balance of an account, as accounts has it (holds of payments in flight count). */
const available = async (w: World, accountId = w.account) => (await tw.balance(w.platformId, accountId)).available;

/** Payments' current rate from `from` to `to` for `amount` (sending units per receiving unit). */
async function rateFor(platform: WorldPlatform, amount: bigint, from: string, to: string): Promise<string> {
  const { rates } = await paymentsClient.listExchangeRates({
    platformId: platform.id,
    environment: SANDBOX,
    sourceCurrency: from,
    destinationCurrencies: [to],
    sendingAmount: amount,
  });
  return rates[0]!.exchangeRate;
}

/** `amount` of `from` in `to` at payments' current rate, as the agents service converts it (rounded up). */
const converted = async (platform: WorldPlatform, amount: bigint, from: string, to: string) =>
  convertAmount(amount, from, to, await rateFor(platform, amount, from, to));

describe('agents, device codes and tokens', () => {
  it('binds an agent to an existing customer of the platform; bad policies are refused naming the field, nothing stored', async () => {
    const w = await world();
    const got = (await client.getAgent({ platformId: w.platformId, agentId: w.agentId })).agent!;
    expect(got).toMatchObject({ customerId: w.customerId, isPaused: false, isConnected: true, name: 'Payroll bot' });
    expect(got.usage).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n, monthlySpend: 0n });

    const otherPlatform = await tw.platform();
    const other = otherPlatform.id;
    expect((await rejection(client.getAgent({ platformId: other, agentId: w.agentId }))).code).toBe('AGENT_NOT_FOUND');
    const stranger = (await tw.customer(other)).id;
    expect(
      (await rejection(client.createAgent({ platformId: w.platformId, environment: SANDBOX, name: 'x', customerId: stranger, policy: policy() })))
        .code,
    ).toBe('CUSTOMER_NOT_FOUND');

    const before = (await sql.query(`SELECT count(*)::int AS n FROM agents.agents`)).rows[0].n;
    const foreignAccount = (await tw.internalAccount(otherPlatform, stranger, 'USD')).id;
    const bad = await rejection(
      client.createAgent({
        platformId: w.platformId,
        environment: SANDBOX,
        name: 'x',
        customerId: w.customerId,
        policy: policy({
          accountRestrictions: { restrictAccounts: true, allowedAccountIds: [w.account, foreignAccount], accountRules: [] },
        }),
      }),
    );
    expect(bad.code).toBe('INVALID_INPUT');
    expect(bad.details!.errors).toEqual([
      { field: 'policy.accountRestrictions.allowedAccountIds[1]', message: 'is not an internal account of the customer' },
    ]);
    const negative = await rejection(
      client.createAgent({
        platformId: w.platformId,
        environment: SANDBOX,
        name: 'x',
        customerId: w.customerId,
        policy: policy({ permissions: ['VIEW_TRANSACTIONS', 'TELEPORT'], limits: { dailyLimit: -1n } }),
      }),
    );
    expect((negative.details!.errors as { field: string }[]).map((e) => e.field)).toEqual([
      'policy.permissions[1]',
      'policy.spendingLimits.dailyLimit',
    ]);
    expect((await sql.query(`SELECT count(*)::int AS n FROM agents.agents`)).rows[0].n).toBe(before);
  });

  it('stores device codes and tokens only as SHA-256 hashes; a code redeems once', async () => {
    const platformId = (await tw.platform()).id;
    const customerId = (await tw.customer(platformId)).id;
    const { agent, deviceCode } = await client.createAgent({ platformId, environment: SANDBOX, name: 'a', customerId, policy: policy() });
    expect(deviceCode!.code).toMatch(/^AGENT-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    expect(await client.getDeviceCodeStatus({ code: deviceCode!.code, source: 's1' })).toEqual({ code: deviceCode!.code, redeemed: false });
    const redeemed = await client.redeemDeviceCode({ code: deviceCode!.code.toLowerCase(), source: 's1' });
    expect(redeemed).toMatchObject({ agentId: agent!.id, agentName: 'a' });
    expect(redeemed.accessToken).toMatch(/^sat_[A-Za-z0-9_-]{43}$/);

    const row = (await sql.query(`SELECT * FROM agents.agents WHERE id = $1`, [agent!.id])).rows[0];
    expect(row.token_hash).toBe(sha256(`access-token:${redeemed.accessToken}`));
    expect(JSON.stringify(row)).not.toContain(redeemed.accessToken);
    const codes = (await sql.query(`SELECT * FROM agents.device_codes WHERE agent_id = $1`, [agent!.id])).rows;
    const canonical = deviceCode!.code.replace(/^AGENT-/, '').replace(/-/g, '');
    expect(codes.map((c) => c.code_hash)).toEqual([sha256(`device-code:${canonical}`)]);
    expect(JSON.stringify(codes)).not.toContain(canonical.slice(0, 4) + '-');

    expect((await rejection(client.redeemDeviceCode({ code: deviceCode!.code, source: 's1' }))).code).toBe('DEVICE_CODE_ALREADY_REDEEMED');
    expect((await client.getDeviceCodeStatus({ code: deviceCode!.code, source: 's1' })).redeemed).toBe(true);
    expect((await client.authenticateAgent({ accessToken: redeemed.accessToken })).agent!.id).toBe(agent!.id);
    expect((await rejection(client.authenticateAgent({ accessToken: `sat_${'A'.repeat(43)}` }))).code).toBe('AGENT_TOKEN_INVALID');
  });

  /** The agent's codes that would redeem now (unredeemed, not replaced, not expired): never more than one. */
  const liveCodes = async (agentId: string) =>
    (
      await sql.query(
        `SELECT count(*)::int AS n FROM agents.device_codes
          WHERE agent_id = $1 AND redeemed_at IS NULL AND superseded_at IS NULL AND expires_at > $2`,
        [agentId, clock.now()],
      )
    ).rows[0].n as number;

  it('a create sent again with its request key (the first answer lost) answers the agent it made: one agent, one valid code', async () => {
    const platformId = (await tw.platform()).id;
    const customerId = (await tw.customer(platformId)).id;
    const create = (requestKey: string, customer = customerId) =>
      client.createAgent({ platformId, environment: SANDBOX, name: 'once', customerId: customer, policy: policy(), requestKey });
    const agentsOfPlatform = async () => (await sql.query(`SELECT count(*)::int AS n FROM agents.agents WHERE platform_id = $1`, [platformId])).rows[0].n;

    const first = await create('create-1');
    clock.advance(60_000);
    const retry = await create('create-1');
    expect(retry.agent!.id).toBe(first.agent!.id);
    expect(await agentsOfPlatform()).toBe(1);
    // The retry's code takes the lost one's place, with the first answer's expiry.
    expect(retry.deviceCode).toMatchObject({ agentId: first.agent!.id, expiresAt: first.deviceCode!.expiresAt, redeemed: false });
    expect(retry.deviceCode!.code).not.toBe(first.deviceCode!.code);
    expect(await liveCodes(first.agent!.id)).toBe(1);
    expect((await rejection(client.redeemDeviceCode({ code: first.deviceCode!.code, source: 'create-1' }))).code).toBe('DEVICE_CODE_EXPIRED');
    await client.redeemDeviceCode({ code: retry.deviceCode!.code, source: 'create-1' });

    // Once its code is redeemed a retry mints none (and still creates nothing); the key with another customer is a reused key.
    const spent = await rejection(create('create-1'));
    expect([spent.code, spent.details]).toEqual(['DEVICE_CODE_ALREADY_REDEEMED', { agentId: first.agent!.id }]);
    const otherCustomer = (await tw.customer(platformId)).id;
    expect((await rejection(create('create-1', otherCustomer))).details!.errors).toEqual([
      { field: 'Idempotency-Key', message: 'was used for another request of this platform' },
    ]);
    expect(await agentsOfPlatform()).toBe(1);

    // Concurrent twins of one create: one agent, one valid code.
    const twins = await Promise.all(Array.from({ length: 6 }, () => create('create-2')));
    expect(new Set(twins.map((t) => t.agent!.id)).size).toBe(1);
    expect(await agentsOfPlatform()).toBe(2);
    expect(await liveCodes(twins[0]!.agent!.id)).toBe(1);
    // A deleted agent is not made again.
    await client.deleteAgent({ platformId, agentId: twins[0]!.agent!.id });
    expect((await rejection(create('create-2'))).code).toBe('AGENT_NOT_FOUND');
    expect(await agentsOfPlatform()).toBe(2);
  });

  it('a device code sent again with its request key: one valid code, the same expiry; a late retry voids no newer code', async () => {
    const w = await world();
    const code = (requestKey: string) => client.createDeviceCode({ platformId: w.platformId, agentId: w.agentId, requestKey });
    const first = (await code('code-1')).deviceCode!;
    clock.advance(60_000);
    const retry = (await code('code-1')).deviceCode!;
    expect(retry).toMatchObject({ agentId: w.agentId, expiresAt: first.expiresAt, redeemed: false });
    expect(retry.code).not.toBe(first.code);
    expect(await liveCodes(w.agentId)).toBe(1);
    expect((await rejection(client.redeemDeviceCode({ code: first.code, source: 'code-1' }))).code).toBe('DEVICE_CODE_EXPIRED');

    // A newer request replaced it: the first request retried late mints nothing, the newer code still works.
    const newer = (await code('code-2')).deviceCode!;
    const late = await rejection(code('code-1'));
    expect([late.code, late.message]).toEqual(['DEVICE_CODE_EXPIRED', 'The device code of this Idempotency-Key was replaced by a newer one']);
    expect(await liveCodes(w.agentId)).toBe(1);
    const { accessToken } = await client.redeemDeviceCode({ code: newer.code, source: 'code-1' });
    // Redeemed: a retry of its request mints nothing and the token stays.
    expect((await rejection(code('code-2'))).code).toBe('DEVICE_CODE_ALREADY_REDEEMED');
    expect((await client.authenticateAgent({ accessToken })).agent!.id).toBe(w.agentId);
    // Expired: the same.
    await code('code-3');
    clock.advance(901_000);
    expect((await rejection(code('code-3'))).code).toBe('DEVICE_CODE_EXPIRED');
    expect(await liveCodes(w.agentId)).toBe(0);
    const rows = await sql.query(`SELECT request_key FROM agents.device_codes WHERE agent_id = $1 ORDER BY created_at`, [w.agentId]);
    expect(rows.rows.map((r) => r.request_key)).toEqual([null, 'code-1', 'code-1', 'code-2', 'code-3']);
  });

  it('a new code stops the unredeemed one; redeeming it replaces the token (AGENT_TOKEN.REVOKED); deleting revokes it', async () => {
    const w = await world();
    const first = (await client.createDeviceCode({ platformId: w.platformId, agentId: w.agentId })).deviceCode!;
    const second = (await client.createDeviceCode({ platformId: w.platformId, agentId: w.agentId })).deviceCode!;
    expect((await rejection(client.redeemDeviceCode({ code: first.code, source: 's2' }))).code).toBe('DEVICE_CODE_EXPIRED');
    const { accessToken } = await client.redeemDeviceCode({ code: second.code, source: 's2' });
    expect((await rejection(client.authenticateAgent({ accessToken: w.token }))).code).toBe('AGENT_TOKEN_INVALID');
    expect((await client.authenticateAgent({ accessToken })).agent!.id).toBe(w.agentId);
    const revoked = await sql.query(`SELECT envelope FROM agents.outbox WHERE type = 'AGENT_TOKEN.REVOKED'`);
    expect(revoked.rows.map((r) => r.envelope.data.agentId)).toContain(w.agentId);

    const third = (await client.createDeviceCode({ platformId: w.platformId, agentId: w.agentId })).deviceCode!;
    clock.advance(901_000);
    expect((await rejection(client.redeemDeviceCode({ code: third.code, source: 's2' }))).code).toBe('DEVICE_CODE_EXPIRED');

    await client.deleteAgent({ platformId: w.platformId, agentId: w.agentId });
    expect((await rejection(client.authenticateAgent({ accessToken }))).code).toBe('AGENT_TOKEN_INVALID');
    expect((await rejection(client.getAgent({ platformId: w.platformId, agentId: w.agentId }))).code).toBe('AGENT_NOT_FOUND');
    const n = await sql.query(`SELECT count(*)::int AS n FROM agents.outbox WHERE type = 'AGENT_TOKEN.REVOKED' AND envelope->'data'->>'agentId' = $1`, [
      w.agentId,
    ]);
    expect(n.rows[0].n).toBe(2);
  });

  it('limits brute force: after 5 failures a source (and a code) is refused, even with a valid code', async () => {
    const platformId = (await tw.platform()).id;
    const customerId = (await tw.customer(platformId)).id;
    const { deviceCode } = await client.createAgent({ platformId, environment: SANDBOX, name: 'a', customerId, policy: policy() });
    for (let i = 0; i < 5; i++) {
      expect((await rejection(client.redeemDeviceCode({ code: `AGENT-AAAA-BBBB-CC${i}${i}`, source: 'attacker' }))).code).toBe(
        'DEVICE_CODE_NOT_FOUND',
      );
    }
    expect((await rejection(client.redeemDeviceCode({ code: deviceCode!.code, source: 'attacker' }))).code).toBe('TOO_MANY_ATTEMPTS');
    expect((await rejection(client.getDeviceCodeStatus({ code: deviceCode!.code, source: 'attacker' }))).code).toBe('TOO_MANY_ATTEMPTS');
    // Another source is not affected; the window passes.
    expect((await client.getDeviceCodeStatus({ code: deviceCode!.code, source: 'owner' })).redeemed).toBe(false);
    clock.advance(901_000);
    await client.redeemDeviceCode({ code: (await client.createDeviceCode({ platformId, agentId: (await client.listAgents({ platformId })).agents[0]!.id })).deviceCode!.code, source: 'attacker' });
  });
});

describe('policy enforcement under concurrency (real Postgres)', () => {
  it('20 concurrent transfers against a count limit of 3: exactly 3 go through', async () => {
    const w = await world({ limits: { dailyTransactionLimit: 3n } });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => transferOut(w)));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const codes = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as DomainError).code] : []));
    expect(ok).toHaveLength(3);
    expect(new Set(codes)).toEqual(new Set(['DAILY_TRANSACTION_LIMIT_EXCEEDED']));
    for (const r of ok) expect((r as PromiseFulfilledResult<pb.AgentTransferResponse>).value.action!.status).toBe('APPROVED');
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 3n, dailySpend: 3_000n, monthlySpend: 3_000n });
    expect(await movesOf(w)).toBe(3);
    expect(await available(w)).toBe(1_000_000n - 3_000n);
  });

  it('20 concurrent transfers against a daily spend limit of 2.5 transfers: exactly 2 go through', async () => {
    const w = await world({ limits: { dailyLimit: 2_500n, monthlyLimit: 1_000_000n } });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => transferOut(w)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    const codes = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as DomainError).code] : []));
    expect(new Set(codes)).toEqual(new Set(['DAILY_LIMIT_EXCEEDED']));
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 2n, dailySpend: 2_000n });
    expect(await movesOf(w)).toBe(2);
  });

  it('a retried submission (the same request key) answers the first action and reserves nothing more', async () => {
    const w = await world({ limits: { dailyTransactionLimit: 5n } });
    const results = await Promise.all(Array.from({ length: 8 }, () => transferOut(w, 1_000n, 'retry-me')));
    expect(new Set(results.map((r) => r.action!.id)).size).toBe(1);
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 1n, dailySpend: 1_000n });
    expect(await movesOf(w)).toBe(1);
    const other = await rejection(transferOut(w, 2_000n, 'retry-me'));
    expect(other.details!.errors).toEqual([{ field: 'Idempotency-Key', message: 'was used for another request of this agent' }]);
  });

  it('refuses with the first failing rule and stores nothing', async () => {
    const w = await world({ limits: { perTransactionLimit: 500n } });
    expect((await rejection(transferOut(w, 501n))).code).toBe('PER_TRANSACTION_LIMIT_EXCEEDED');
    await client.updateAgent({ ...w.ref, isPaused: true });
    expect((await rejection(transferOut(w, 501n))).code).toBe('AGENT_PAUSED');
    // Reads stay allowed while paused.
    expect((await client.listAgentActions(w.ref)).actions).toEqual([]);
    await client.updateAgent({ ...w.ref, isPaused: false });
    await client.updateAgentPolicy({ ...w.ref, patch: { setPermissions: true, permissions: ['VIEW_TRANSACTIONS'] } });
    const denied = await rejection(transferOut(w, 100n));
    expect(denied.code).toBe('MISSING_PERMISSION_CREATE_TRANSFERS');
    expect(denied.kind).toBe('PERMISSION_DENIED');
    expect((await sql.query(`SELECT count(*)::int AS n FROM agents.agent_actions WHERE agent_id = $1`, [w.agentId])).rows[0].n).toBe(0);
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n });
  });

  it('an amount in another currency is converted at payments’ rate for the threshold and the limits', async () => {
    // The threshold is exactly what 10.00 USD is worth in EUR at payments' rate.
    const eurOf1000 = await converted(await tw.platform(), 1_000n, 'USD', 'EUR');
    expect(eurOf1000).toBeLessThan(1_000n); // a euro is worth more than a dollar in the sandbox table
    const w = await world({ approvalThresholds: { currency: 'EUR', amount: eurOf1000 }, limits: { dailyLimit: 100_000n } });
    // Not above the threshold: AUTO.
    expect((await transferOut(w, 1_000n)).action!.status).toBe('APPROVED');
    // Above it: PENDING_APPROVAL.
    expect(await converted(w.platform, 1_100n, 'USD', 'EUR')).toBeGreaterThan(eurOf1000);
    expect((await transferOut(w, 1_100n)).action!.status).toBe('PENDING_APPROVAL');
    // Limits in EUR: 10.00 USD counts as its EUR value, one cent over the limit is refused.
    const eur = await world({ limits: { currency: 'EUR', perTransactionLimit: eurOf1000 - 1n } });
    expect((await rejection(transferOut(eur, 1_000n))).details).toMatchObject({
      amount: String(eurOf1000),
      limit: String(eurOf1000 - 1n),
      currency: 'EUR',
    });
    // The USD policy counts USD as given.
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 2n, dailySpend: 2_100n });
  });
  it('a new policy currency recasts the usage and the pending reservations at payments’ rate', async () => {
    const w = await world({ limits: { dailyLimit: 1_000_000n }, approvalThresholds: { currency: 'USD', amount: 2_000n } });
    expect((await transferOut(w, 1_080n)).action!.status).toBe('APPROVED');
    const { action } = await transferOut(w, 2_160n);
    expect(action!.status).toBe('PENDING_APPROVAL');
    await client.updateAgentPolicy({ ...w.ref, patch: pb.AgentPolicyPatch.fromPartial({ spendingLimits: { currency: 'EUR' } }) });
    // Recast at payments' rate (asked for the month's spend), each amount rounded up.
    const rate = await rateFor(w.platform, 3_240n, 'USD', 'EUR');
    const total = convertAmount(3_240n, 'USD', 'EUR', rate);
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 2n, dailySpend: total, monthlySpend: total });
    await client.rejectAction({ platformId: w.platformId, agentId: w.agentId, actionId: action!.id });
    const left = total - convertAmount(2_160n, 'USD', 'EUR', rate);
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 1n, dailySpend: left, monthlySpend: left });
  });
});

describe('approvals', () => {
  it('approve races reject and itself: the payment runs exactly once', async () => {
    const w = await world({ defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const { action } = await transferOut(w, 2_000n);
    expect(action).toMatchObject({ status: 'PENDING_APPROVAL', type: 'TRANSFER_OUT' });
    expect(action!.transaction).toBeUndefined();
    expect(await movesOf(w)).toBe(0);
    const webhook = (await sql.query(`SELECT envelope FROM agents.outbox WHERE type = 'AGENT_ACTION.PENDING_APPROVAL'`)).rows.find(
      (r) => r.envelope.data.id === action!.id,
    );
    expect(webhook.envelope.data).toMatchObject({
      id: action!.id,
      agentId: w.agentId,
      status: 'PENDING_APPROVAL',
      transferDetails: { amount: 2000, currency: 'USD', sourceAccountId: w.account, destinationAccountId: w.external },
    });
    const approvals = await client.listApprovals({ platformId: w.platformId, agentId: w.agentId, sortOrder: payments.SortOrder.DESC });
    expect(approvals.actions.map((a) => a.id)).toEqual([action!.id]);

    const ids = { platformId: w.platformId, agentId: w.agentId, actionId: action!.id };
    const decisions = await Promise.allSettled([
      ...Array.from({ length: 6 }, () => client.approveAction(ids)),
      ...Array.from({ length: 6 }, () => client.rejectAction({ ...ids, reason: 'no' })),
    ]);
    const won = decisions.filter((d) => d.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const d of decisions) if (d.status === 'rejected') expect((d.reason as DomainError).code).toBe('ACTION_NOT_PENDING');
    const final = (await client.getAgentAction({ ...w.ref, actionId: action!.id })).action!;
    if (final.status === 'APPROVED') {
      expect(await movesOf(w)).toBe(1);
      expect(final.transaction!.agentId).toBe(w.agentId);
      expect(await usage(w)).toMatchObject({ dailyTransactionCount: 1n, dailySpend: 2_000n });
    } else {
      expect(final).toMatchObject({ status: 'REJECTED', rejectionReason: 'no' });
      expect(await movesOf(w)).toBe(0);
      expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n });
    }
    expect((await client.listApprovals({ platformId: w.platformId, agentId: w.agentId, sortOrder: payments.SortOrder.DESC })).actions).toEqual([]);
  });

  it('reject moves nothing and releases the usage; another platform cannot see or decide the action', async () => {
    const w = await world({ defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const { action } = await transferOut(w, 3_000n);
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 1n, dailySpend: 3_000n });
    const other = (await tw.platform()).id;
    expect((await rejection(client.approveAction({ platformId: other, agentId: w.agentId, actionId: action!.id }))).code).toBe(
      'AGENT_ACTION_NOT_FOUND',
    );
    const rejected = (await client.rejectAction({ platformId: w.platformId, agentId: w.agentId, actionId: action!.id, reason: 'too much' }))
      .action!;
    expect(rejected).toMatchObject({ status: 'REJECTED', rejectionReason: 'too much' });
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n, monthlySpend: 0n });
    expect(await movesOf(w)).toBe(0);
    expect(await available(w)).toBe(1_000_000n);
  });

  it('an approved action whose payment is refused FAILs with the reason and releases its usage', async () => {
    const w = await world({ defaultExecutionMode: 'APPROVAL_REQUIRED' }, 500n);
    const { action } = await transferOut(w, 1_000n);
    const failed = (await client.approveAction({ platformId: w.platformId, agentId: w.agentId, actionId: action!.id })).action!;
    expect(failed).toMatchObject({ status: 'FAILED', failureReason: 'INSUFFICIENT_FUNDS' });
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n });
    // AUTO: the refusal is the answer, the action is recorded FAILED.
    await client.updateAgentPolicy({ ...w.ref, patch: pb.AgentPolicyPatch.fromPartial({ defaultExecutionMode: 'AUTO' }) });
    const refused = await rejection(transferOut(w, 1_000n, 'auto-refused'));
    expect(refused.code).toBe('INSUFFICIENT_FUNDS');
    const failedActions = await client.listAgentActions({ ...w.ref, status: 'FAILED' });
    expect(failedActions.actions).toHaveLength(2);
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n });
    // A retry with its key is answered the same, whatever the account holds now; nothing is reserved or paid.
    await tw.fund(w.platformId, w.account, 10_000n);
    for (let i = 0; i < 2; i++) {
      const again = await rejection(transferOut(w, 1_000n, 'auto-refused'));
      expect({ code: again.code, message: again.message, details: again.details }).toEqual({
        code: refused.code,
        message: refused.message,
        details: refused.details,
      });
    }
    expect((await client.listAgentActions({ ...w.ref, status: 'FAILED' })).actions).toHaveLength(2);
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n });
    expect(await movesOf(w)).toBe(0);
    const [stored] = (await sql.query(`SELECT refusal FROM agents.agent_actions WHERE agent_id = $1 AND request_key = 'auto-refused'`, [w.agentId])).rows;
    expect(stored.refusal).toMatchObject({ kind: 'FAILED_PRECONDITION', code: 'INSUFFICIENT_FUNDS' });
    // The approved one was answered PENDING_APPROVAL: a retry of it answers the action as it is now.
    const [approvalKey] = (await sql.query(`SELECT request_key FROM agents.agent_actions WHERE id = $1`, [action!.id])).rows;
    expect((await transferOut(w, 1_000n, approvalKey.request_key)).action).toMatchObject({ id: action!.id, status: 'FAILED' });
  });

  it('pending actions expire (APPROVAL_EXPIRED) and release their usage', async () => {
    const w = await world({ defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const { action } = await transferOut(w, 1_500n);
    clock.advance(601_000);
    const expired = await eventually(async () => {
      const a = (await client.getAgentAction({ ...w.ref, actionId: action!.id })).action!;
      return a.status === 'FAILED' ? a : undefined;
    });
    expect(expired.failureReason).toBe('APPROVAL_EXPIRED');
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n });
    expect((await rejection(client.approveAction({ platformId: w.platformId, agentId: w.agentId, actionId: action!.id }))).code).toBe(
      'ACTION_NOT_PENDING',
    );
  });

  it('an EXECUTE_QUOTE action expires with its quote: approving it then answers it FAILED (QUOTE_EXPIRED)', async () => {
    const w = await world({ defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const quote = await agentQuote(w);
    const { action } = await client.executeAgentQuote({ ...w.ref, quoteId: quote.id });
    expect(action).toMatchObject({ status: 'PENDING_APPROVAL', type: 'EXECUTE_QUOTE' });
    expect(action!.expiresAt).toEqual(quote.expiresAt);
    expect(await usage(w)).toMatchObject({ dailySpend: 2_500n });
    // The worker may expire it before the approve below: either way the action ends FAILED once.
    clock.set(quote.expiresAt!.getTime() + 1);
    const ids = { platformId: w.platformId, agentId: w.agentId, actionId: action!.id };
    const answer = await client.approveAction(ids).then(
      (r) => r.action!,
      async (e: DomainError) => {
        expect(e.code).toBe('ACTION_NOT_PENDING');
        return (await client.getAgentAction({ ...w.ref, actionId: action!.id })).action!;
      },
    );
    expect(answer).toMatchObject({ status: 'FAILED', failureReason: 'QUOTE_EXPIRED' });
    expect(await usage(w)).toMatchObject({ dailySpend: 0n, dailyTransactionCount: 0n });
    expect(await movesOf(w)).toBe(0);
  });

  it('an EMBEDDED_WALLET source: no signature → the challenge and nothing reserved; a bad one fails; the signature rides to approval', async () => {
    // The customer's embedded wallet holds USDC (6 decimals); 5 USDC a quote.
    const w = await world({}, 100_000_000n, { embeddedWallet: true });
    const USDC5 = 5_000_000n;
    const session = await tw.walletSession(w.platformId, w.account);
    const q = await agentQuote(w, USDC5);
    expect(q.payloadToSign).toBeTruthy();
    const challenge = await client.executeAgentQuote({ ...w.ref, quoteId: q.id });
    expect(challenge.action).toBeUndefined();
    expect(challenge.signingChallenge!.payloadToSign).toBeTruthy();
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n });

    // A forged stamp: wallet-auth refuses it when payments executes; the action FAILs, its usage released.
    const forged = await rejection(client.executeAgentQuote({ ...w.ref, quoteId: (await agentQuote(w, USDC5)).id, walletSignature: 'forged' }));
    expect(['UNAUTHENTICATED', 'INVALID_ARGUMENT']).toContain(forged.kind);
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n });
    expect((await client.listAgentActions({ ...w.ref, status: 'FAILED' })).actions).toHaveLength(1);

    // The wallet owner's stamp over the quote's payload: executed, with the agent's id.
    const q2 = await agentQuote(w, USDC5);
    const ok = (await client.executeAgentQuote({ ...w.ref, quoteId: q2.id, walletSignature: session.sign(q2.payloadToSign!) })).action!;
    expect(ok).toMatchObject({ status: 'APPROVED', type: 'EXECUTE_QUOTE' });
    expect(ok.transaction!.agentId).toBe(w.agentId);

    // A challenge answered with a key stores nothing under it: the signed execute with the same key runs.
    const q4 = await agentQuote(w, USDC5);
    const asked = (await client.executeAgentQuote({ ...w.ref, quoteId: q4.id, requestKey: 'sign-then-execute' })).signingChallenge!;
    expect(asked.payloadToSign).toBeTruthy();
    const signed = await client.executeAgentQuote({
      ...w.ref,
      quoteId: q4.id,
      requestKey: 'sign-then-execute',
      walletSignature: session.sign(asked.payloadToSign),
      signingRequestId: asked.requestId,
    });
    expect(signed.action).toMatchObject({ status: 'APPROVED', type: 'EXECUTE_QUOTE' });

    // APPROVAL_REQUIRED: the stamp given with the execute is used when the platform approves.
    await client.updateAgentPolicy({ ...w.ref, patch: pb.AgentPolicyPatch.fromPartial({ defaultExecutionMode: 'APPROVAL_REQUIRED' }) });
    const q3 = await agentQuote(w, USDC5);
    const pending = (await client.executeAgentQuote({ ...w.ref, quoteId: q3.id, walletSignature: session.sign(q3.payloadToSign!) })).action!;
    expect(pending.status).toBe('PENDING_APPROVAL');
    const approved = (await client.approveAction({ platformId: w.platformId, agentId: w.agentId, actionId: pending.id })).action!;
    expect(approved.status).toBe('APPROVED');
    expect(approved.transaction!.agentId).toBe(w.agentId);
    expect(await movesOf(w)).toBe(3);
  });

  it('lists the platform’s agents with filters, newest first, in pages', async () => {
    const platformId = (await tw.platform()).id;
    const customerId = (await tw.customer(platformId)).id;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { agent, deviceCode } = await client.createAgent({ platformId, environment: SANDBOX, name: `a${i}`, customerId, policy: policy() });
      ids.push(agent!.id);
      if (i === 1) await client.redeemDeviceCode({ code: deviceCode!.code, source: 'lister' });
      clock.advance(1);
    }
    const first = await client.listAgents({ platformId, page: { limit: 2 } });
    expect(first.agents.map((a) => a.id)).toEqual([ids[2], ids[1]]);
    expect(first.page).toMatchObject({ hasMore: true, totalCount: 3 });
    const second = await client.listAgents({ platformId, page: { limit: 2, cursor: first.page!.nextCursor! } });
    expect(second.agents.map((a) => a.id)).toEqual([ids[0]]);
    expect((await client.listAgents({ platformId, isConnected: true })).agents.map((a) => a.id)).toEqual([ids[1]]);
    expect((await client.listAgents({ platformId, customerId: (await tw.customer(platformId)).id })).page!.totalCount).toBe(0);
    expect((await client.listAgents({ platformId: (await tw.platform()).id })).agents).toEqual([]);
  });

  it('an execution cut off by a payments outage is driven again later, moving money once', async () => {
    const w = await world();
    outage.down = true;
    // The outcome is unknown: the answer is the action, APPROVED without its transaction yet (an
    // error would invite a second submission).
    const pending = (await transferOut(w, 700n)).action!;
    expect(pending.status).toBe('APPROVED');
    expect(pending.transaction).toBeUndefined();
    outage.down = false;
    const [row] = (await sql.query(`SELECT id, state FROM agents.agent_actions WHERE agent_id = $1`, [w.agentId])).rows;
    expect(row).toEqual({ id: pending.id, state: 'EXECUTING' });
    clock.advance(31_000);
    const done = await eventually(async () => {
      const a = (await client.getAgentAction({ ...w.ref, actionId: row.id })).action!;
      return a.transaction ? a : undefined;
    });
    expect(done.status).toBe('APPROVED');
    expect(await movesOf(w)).toBe(1);
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 1n, dailySpend: 700n });
  });

  it('an AUTO action answered before payments refused it: a retry with its key answers the action FAILED, not the refusal', async () => {
    const w = await world({}, 500n);
    outage.down = true;
    const pending = (await transferOut(w, 700n, 'cut-off')).action!;
    expect(pending.status).toBe('APPROVED');
    outage.down = false;
    clock.advance(31_000);
    const failed = await eventually(async () => {
      const a = (await client.getAgentAction({ ...w.ref, actionId: pending.id })).action!;
      return a.status === 'FAILED' ? a : undefined;
    });
    expect(failed.failureReason).toBe('INSUFFICIENT_FUNDS');
    expect((await transferOut(w, 700n, 'cut-off')).action).toMatchObject({ id: pending.id, status: 'FAILED', failureReason: 'INSUFFICIENT_FUNDS' });
  });
});

describe('quotes of an agent', () => {
  it('creates quotes from its customer’s accounts, reads only its own, executes them as EXECUTE_QUOTE actions', async () => {
    const w = await world();
    const other = await world();
    const request = quoteRequest(w, 4_000n);
    const immediately = await rejection(client.createAgentQuote({ ...w.ref, quote: { ...request, immediatelyExecute: true } }));
    expect(immediately.details!.errors).toEqual([expect.objectContaining({ field: 'immediatelyExecute' })]);
    const { quote } = await client.createAgentQuote({ ...w.ref, quote: request });
    expect((await client.getAgentQuote({ ...w.ref, quoteId: quote!.id })).quote!.id).toBe(quote!.id);
    expect((await rejection(client.getAgentQuote({ ...other.ref, quoteId: quote!.id }))).code).toBe('QUOTE_NOT_FOUND');
    expect((await rejection(client.executeAgentQuote({ ...other.ref, quoteId: quote!.id }))).code).toBe('QUOTE_NOT_FOUND');
    // A malformed id is an unknown quote; an unknown agent is refused before its quote is looked at.
    expect((await rejection(client.executeAgentQuote({ ...w.ref, quoteId: 'not-a-quote' }))).code).toBe('QUOTE_NOT_FOUND');
    const unknownAgent = { ...w.ref, agentId: newId('Agent') };
    expect((await rejection(client.executeAgentQuote({ ...unknownAgent, quoteId: quote!.id }))).code).toBe('AGENT_NOT_FOUND');
    expect((await rejection(client.executeAgentQuote({ ...unknownAgent, quoteId: 'not-a-quote' }))).code).toBe('AGENT_NOT_FOUND');

    const [a, b] = await Promise.all([
      client.executeAgentQuote({ ...w.ref, quoteId: quote!.id }),
      client.executeAgentQuote({ ...w.ref, quoteId: quote!.id }),
    ]);
    expect(a!.action!.id).toBe(b!.action!.id);
    expect(a!.action).toMatchObject({ type: 'EXECUTE_QUOTE', status: 'APPROVED' });
    // One of the two may answer while the other still executes: read it until its transaction is known.
    const read = await eventually(async () => {
      const r = (await client.getAgentAction({ ...w.ref, actionId: a!.action!.id })).action!;
      return r.transaction ? r : undefined;
    });
    expect(read.quote!.id).toBe(quote!.id);
    expect(read.transaction!.agentId).toBe(w.agentId);
    expect(await movesOf(w)).toBe(1);
    expect(await available(w)).toBe(1_000_000n - quote!.totalSendingAmount);
  });

  it('a refused AUTO execute answers the same to a retry with its key, whatever the account holds now; the key is this quote’s', async () => {
    const w = await world({}, 500n);
    const quote = await agentQuote(w, 2_500n);
    const execute = (quoteId = quote.id, requestKey = 'quote-refused') => client.executeAgentQuote({ ...w.ref, quoteId, requestKey });
    const refused = await rejection(execute());
    expect(refused.code).toBe('INSUFFICIENT_FUNDS');
    // Funds arrive; the quote is still PENDING (payments held nothing). A retry with the key is
    // answered the same: no second action, nothing reserved or paid.
    await tw.fund(w.platformId, w.account, 10_000n);
    for (let i = 0; i < 2; i++) {
      const again = await rejection(execute());
      expect({ code: again.code, message: again.message, details: again.details }).toEqual({
        code: refused.code,
        message: refused.message,
        details: refused.details,
      });
    }
    const failed = (await client.listAgentActions({ ...w.ref })).actions;
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ type: 'EXECUTE_QUOTE', status: 'FAILED', failureReason: 'INSUFFICIENT_FUNDS' });
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n });
    expect(await movesOf(w)).toBe(0);
    const [stored] = (await sql.query(`SELECT refusal FROM agents.agent_actions WHERE agent_id = $1 AND request_key = 'quote-refused'`, [w.agentId])).rows;
    expect(stored.refusal).toMatchObject({ kind: 'FAILED_PRECONDITION', code: 'INSUFFICIENT_FUNDS' });

    // The key with another quote, or with a transfer, is a reused key (nothing happens).
    const reused = [{ field: 'Idempotency-Key', message: 'was used for another request of this agent' }];
    expect((await rejection(execute((await agentQuote(w, 1_000n)).id))).details!.errors).toEqual(reused);
    expect((await rejection(transferOut(w, 1_000n, 'quote-refused'))).details!.errors).toEqual(reused);
    expect(await movesOf(w)).toBe(0);

    // Another key executes the quote (its concurrent twins answer the one action); the first key
    // still answers its refusal.
    const twins = await Promise.all(Array.from({ length: 3 }, () => execute(quote.id, 'quote-funded')));
    const paid = twins[0]!.action!;
    expect(paid).toMatchObject({ type: 'EXECUTE_QUOTE', status: 'APPROVED' });
    expect(new Set(twins.map((t) => t.action!.id))).toEqual(new Set([paid.id]));
    expect((await execute(quote.id, 'quote-funded')).action!.id).toBe(paid.id);
    expect((await rejection(execute())).code).toBe('INSUFFICIENT_FUNDS');
    expect(await movesOf(w)).toBe(1);
  });

  it('an execute answered PENDING_APPROVAL and then rejected: a retry with its key answers that action, not a new one', async () => {
    const w = await world({ defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const quote = await agentQuote(w);
    const execute = () => client.executeAgentQuote({ ...w.ref, quoteId: quote.id, requestKey: 'quote-pending' });
    const pending = (await execute()).action!;
    expect(pending.status).toBe('PENDING_APPROVAL');
    await client.rejectAction({ platformId: w.platformId, agentId: w.agentId, actionId: pending.id, reason: 'not today' });
    expect((await execute()).action).toMatchObject({ id: pending.id, status: 'REJECTED', rejectionReason: 'not today' });
    expect((await client.listAgentActions({ ...w.ref })).actions).toHaveLength(1);
    expect(await usage(w)).toMatchObject({ dailyTransactionCount: 0n, dailySpend: 0n });
  });
});
