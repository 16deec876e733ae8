/**
 * End to end: agents through the real processes (gateway → agents → payments → accounts, the
 * AGENT_ACTION.PENDING_APPROVAL webhook through the outbox, NATS and the dispatcher): an agent
 * created by the platform redeems its device code, reads with its bearer token, pays AUTO
 * (the transaction carries agentId), waits for approval above its threshold (approved once,
 * rejected moves nothing), is paused, gets another policy, and loses its token when deleted;
 * bad policies are 400 naming the field with nothing stored; the wrong kind of credential
 * is 401 and another platform's agent 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '@sluice/testing';
import {
  apiClient,
  newCredential,
  startE2eStack,
  startWebhookReceiver,
  usdAccountInfo,
  type Api,
  type ApiResponse,
  type E2eStack,
} from './support.js';

describe('agents through the real processes', () => {
  let e2e: E2eStack;
  let client: Api;
  let other: Api;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const sandbox = newCredential();
  const production = newCredential();
  let customerId: string;
  let usdAccount: string;
  let eurAccount: string;
  let external: string;
  let strangerAccount: string;
  let strangerCustomerId: string;

  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    client(method, path, { body, headers });
  const as = (token: string) => (method: string, path: string, body?: unknown) =>
    client(method, path, { body, auth: `Bearer ${token}` });
  const balance = async (accountId = usdAccount) =>
    (await api('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=USD`)).json.data.find(
      (a: { id: string }) => a.id === accountId,
    ).balance.amount as number;

  const policy = (over: Record<string, unknown> = {}) => ({
    permissions: ['VIEW_TRANSACTIONS', 'CREATE_TRANSFERS', 'CREATE_QUOTES', 'EXECUTE_QUOTES'],
    defaultExecutionMode: 'AUTO',
    spendingLimits: { currency: 'USD', perTransactionLimit: 50_000, dailyLimit: 100_000, dailyTransactionLimit: 20, monthlyLimit: 500_000 },
    ...over,
  });

  /** A connected agent of the customer: its id and bearer token. */
  async function agent(p = policy()): Promise<{ id: string; token: string; me: ReturnType<typeof as> }> {
    const created = await api('POST', '/agents', { name: 'Treasury bot', customerId, policy: p });
    expect(created.status, created.text).toBe(201);
    const code = created.json.deviceCode.code as string;
    const redeemed = await client('POST', `/agents/device-codes/${encodeURIComponent(code)}/redeem`, { auth: null });
    expect(redeemed.status, redeemed.text).toBe(200);
    return { id: created.json.agent.id, token: redeemed.json.accessToken, me: as(redeemed.json.accessToken) };
  }

  const transferOut = (me: ReturnType<typeof as>, amount: number) =>
    me('POST', '/agents/me/transfer-out', { source: { accountId: usdAccount }, destination: { accountId: external }, amount });

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    e2e = await startE2eStack('e2eagents', { sandbox, production }, { env: { SANDBOX_TIME_SCALE: '0.01' }, migrate: false });
    client = apiClient(e2e.stack, sandbox);
    other = apiClient(e2e.stack, production);
    const cfg = await api('PATCH', '/config', {
      webhookEndpoint: receiver.url,
      supportedCurrencies: [{ currencyCode: 'USD' }, { currencyCode: 'EUR' }],
    });
    expect(cfg.status, cfg.text).toBe(200);
    const customer = async (platformCustomerId: string) => {
      const c = await api('POST', '/customers', {
        customerType: 'INDIVIDUAL',
        platformCustomerId,
        fullName: 'Ada Lovelace',
        region: 'US',
        currencies: ['USD', 'EUR'],
      });
      expect(c.status, c.text).toBe(201);
      const accounts = await eventually(async () => {
        const r = await api('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(c.json.id)}`);
        return r.json.data.length === 2 ? r.json.data : undefined;
      });
      return { id: c.json.id as string, accounts: accounts as { id: string; balance: { currency: { code: string } } }[] };
    };
    const ada = await customer('agent-owner');
    customerId = ada.id;
    usdAccount = ada.accounts.find((a) => a.balance.currency.code === 'USD')!.id;
    eurAccount = ada.accounts.find((a) => a.balance.currency.code === 'EUR')!.id;
    const stranger = await customer('someone-else');
    strangerAccount = stranger.accounts[0]!.id;
    strangerCustomerId = stranger.id;
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(usdAccount)}/fund`, { amount: 200_000 });
    expect(fund.status, fund.text).toBe(200);
    const ext = await api('POST', '/customers/external-accounts', { customerId, currency: 'USD', accountInfo: usdAccountInfo('77771234555') });
    expect(ext.status, ext.text).toBe(201);
    external = ext.json.id;
  }, 240_000);

  afterAll(async () => {
    await e2e?.stop();
    await receiver?.close();
  });

  it('device code → token; Bearer only on /agents/me, Basic only elsewhere; another platform sees nothing', async () => {
    const created = await api('POST', '/agents', { name: 'Reader', customerId, policy: policy({ permissions: ['VIEW_TRANSACTIONS'] }) });
    expect(created.status, created.text).toBe(201);
    const { agent: a, deviceCode } = created.json;
    expect(a).toMatchObject({ customerId, isPaused: false, isConnected: false });
    expect(deviceCode).toMatchObject({ agentId: a.id, redeemed: false });
    const code = encodeURIComponent(deviceCode.code);
    expect((await client('GET', `/agents/device-codes/${code}/status`, { auth: null })).json).toEqual({ code: deviceCode.code, redeemed: false });
    const redeemed = await client('POST', `/agents/device-codes/${code}/redeem`, { auth: null });
    expect(redeemed.status, redeemed.text).toBe(200);
    expect(redeemed.json).toMatchObject({ agentId: a.id, agentName: 'Reader', policy: { permissions: ['VIEW_TRANSACTIONS'] } });
    const again = await client('POST', `/agents/device-codes/${code}/redeem`, { auth: null });
    expect(again.status).toBe(400);
    expect(again.json.code).toBe('DEVICE_CODE_ALREADY_REDEEMED');
    const unknown = await client('POST', '/agents/device-codes/AGENT-0000-0000-0000/redeem', { auth: null });
    expect([unknown.status, unknown.json.code]).toEqual([404, 'DEVICE_CODE_NOT_FOUND']);

    const me = as(redeemed.json.accessToken);
    const self = await me('GET', '/agents/me');
    expect(self.status, self.text).toBe(200);
    expect(self.json).toMatchObject({ id: a.id, isConnected: true, usage: { dailyTransactionCount: 0, dailySpend: 0 } });
    // The wrong kind of credential is a 401, whichever way round.
    expect((await me('GET', '/customers')).status).toBe(401);
    expect((await me('GET', `/agents/${encodeURIComponent(a.id)}`)).status).toBe(401);
    const basicOnAgentRoute = await api('GET', '/agents/me');
    expect(basicOnAgentRoute.status).toBe(401);
    expect(basicOnAgentRoute.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await client('GET', '/agents/me/transactions', { auth: null })).status).toBe(401);

    // Reads bound to the customer; a permission the policy lacks is a 403 naming it.
    const accounts = await me('GET', '/agents/me/internal-accounts');
    expect(accounts.status, accounts.text).toBe(200);
    expect(accounts.json.data.map((x: { id: string }) => x.id).sort()).toEqual([usdAccount, eurAccount].sort());
    const ext = await me('GET', '/agents/me/external-accounts');
    expect([ext.status, ext.json.code]).toEqual([403, 'MISSING_PERMISSION_MANAGE_EXTERNAL_ACCOUNTS']);
    const out = await me('POST', '/agents/me/transfer-out', { source: { accountId: usdAccount }, destination: { accountId: external }, amount: 100 });
    expect([out.status, out.json.code]).toEqual([403, 'MISSING_PERMISSION_CREATE_TRANSFERS']);

    // Another platform: 404 for the agent, its approvals are its own.
    const foreign = await other('GET', `/agents/${encodeURIComponent(a.id)}`);
    expect([foreign.status, foreign.json.code]).toEqual([404, 'AGENT_NOT_FOUND']);
    expect((await other('GET', '/agents')).json.totalCount).toBe(0);
  });

  it('AUTO pays at once with agentId; above the threshold waits for approval, approved once; rejected moves nothing', async () => {
    const { id, me } = await agent(policy({ approvalThresholds: { currency: 'USD', amount: 5_000 } }));
    const start = await balance();

    const auto = await transferOut(me, 1_000);
    expect(auto.status, auto.text).toBe(201);
    expect(auto.json).toMatchObject({ agentId: id, customerId, type: 'TRANSFER_OUT', status: 'APPROVED' });
    expect(auto.json.transaction.agentId).toBe(id);
    const txId = auto.json.transaction.id as string;
    const completed = await eventually(async () => {
      const t = await me('GET', `/agents/me/transactions/${encodeURIComponent(txId)}`);
      return t.json.status === 'COMPLETED' ? t.json : undefined;
    }, 30_000);
    expect(completed.agentId).toBe(id);
    expect((await api('GET', `/transactions/${encodeURIComponent(txId)}`)).json.agentId).toBe(id);
    expect(await balance()).toBe(start - 1_000);
    const listed = await me('GET', '/agents/me/transactions');
    expect(listed.json.data.map((t: { id: string }) => t.id)).toContain(txId);

    // Above the threshold: PENDING_APPROVAL, the webhook, the approvals list.
    const big = await transferOut(me, 6_000);
    expect(big.status, big.text).toBe(201);
    expect(big.json).toMatchObject({ status: 'PENDING_APPROVAL', transferDetails: { amount: 6_000, currency: 'USD' } });
    expect(big.json.transaction).toBeUndefined();
    const hook = await eventually(async () => receiver.received.find((w) => w.type === 'AGENT_ACTION.PENDING_APPROVAL' && w.data.id === big.json.id));
    expect(hook.data).toEqual(big.json);
    const approvals = await api('GET', `/agents/approvals?agentId=${encodeURIComponent(id)}`);
    expect(approvals.json.data.map((x: { id: string }) => x.id)).toEqual([big.json.id]);
    expect(await balance()).toBe(start - 1_000);

    const path = `/agents/${encodeURIComponent(id)}/actions/${encodeURIComponent(big.json.id)}`;
    const decisions = await Promise.all([api('POST', `${path}/approve`), api('POST', `${path}/approve`), api('POST', `${path}/reject`, {})]);
    const ok = decisions.filter((d) => d.status === 200);
    expect(ok, decisions.map((d) => d.text).join('\n')).toHaveLength(1);
    for (const d of decisions) if (d.status !== 200) expect([d.status, d.json.code]).toEqual([409, 'ACTION_NOT_PENDING']);
    const decided = ok[0]!.json;
    if (decided.status === 'APPROVED') {
      expect(decided.transaction.agentId).toBe(id);
      await eventually(async () => ((await balance()) === start - 7_000 ? true : undefined), 30_000);
    } else {
      expect(decided.status).toBe('REJECTED');
      expect(await balance()).toBe(start - 1_000);
    }

    // A rejection: nothing moves, the usage is given back.
    const usageBefore = (await me('GET', '/agents/me')).json.usage;
    const third = await transferOut(me, 7_000);
    expect(third.json.status).toBe('PENDING_APPROVAL');
    const rejected = await api('POST', `/agents/${encodeURIComponent(id)}/actions/${encodeURIComponent(third.json.id)}/reject`, { reason: 'not today' });
    expect(rejected.status, rejected.text).toBe(200);
    expect(rejected.json).toMatchObject({ status: 'REJECTED', rejectionReason: 'not today' });
    expect((await me('GET', '/agents/me')).json.usage).toEqual(usageBefore);
    const again = await api('POST', `/agents/${encodeURIComponent(id)}/actions/${encodeURIComponent(third.json.id)}/approve`);
    expect([again.status, again.json.code]).toEqual([409, 'ACTION_NOT_PENDING']);
    expect(await balance()).toBe(decided.status === 'APPROVED' ? start - 7_000 : start - 1_000);
    const mine = await me('GET', '/agents/me/actions?status=REJECTED');
    expect(mine.json.data.map((x: { id: string }) => x.id)).toContain(third.json.id);
  });

  it('pause blocks actions (reads stay); a policy patch applies to the next action; another customer’s account is 404', async () => {
    const { id, me } = await agent();
    const agentPath = `/agents/${encodeURIComponent(id)}`;
    const paused = await api('PATCH', agentPath, { isPaused: true });
    expect([paused.status, paused.json.isPaused]).toEqual([200, true]);
    const refused = await transferOut(me, 100);
    expect([refused.status, refused.json.code]).toEqual([403, 'AGENT_PAUSED']);
    expect((await me('GET', '/agents/me/actions')).status).toBe(200);
    expect((await api('PATCH', agentPath, { isPaused: false })).status).toBe(200);

    const patched = await api('PATCH', `${agentPath}/policy`, { spendingLimits: { perTransactionLimit: 500, dailyLimit: null } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json.policy.spendingLimits).toMatchObject({ currency: 'USD', perTransactionLimit: 500, dailyLimit: null, monthlyLimit: 500_000 });
    const over = await transferOut(me, 600);
    expect([over.status, over.json.code]).toEqual([403, 'PER_TRANSACTION_LIMIT_EXCEEDED']);
    expect((await transferOut(me, 400)).status).toBe(201);

    const foreign = await me('POST', '/agents/me/transfer-out', {
      source: { accountId: strangerAccount },
      destination: { accountId: external },
      amount: 100,
    });
    expect([foreign.status, foreign.json.code]).toEqual([404, 'INTERNAL_ACCOUNT_NOT_FOUND']);
    const strangerTx = await me('GET', '/agents/me/transactions/Transaction:00000000-0000-7000-8000-000000000000');
    expect(strangerTx.status).toBe(404);

    // A permission granted by a patch reaches the agent's reads within seconds (AGENT.UPDATED drops its cached policy).
    expect((await me('GET', '/agents/me/external-accounts')).status).toBe(403);
    const granted = await api('PATCH', `${agentPath}/policy`, {
      permissions: ['VIEW_TRANSACTIONS', 'CREATE_TRANSFERS', 'MANAGE_EXTERNAL_ACCOUNTS'],
    });
    expect(granted.status, granted.text).toBe(200);
    const list = await eventually(async () => {
      const r = await me('GET', '/agents/me/external-accounts');
      return r.status === 200 ? r.json : undefined;
    }, 5_000);
    expect(list.data.map((a: { id: string }) => a.id)).toContain(external);
    const added = await me('POST', '/agents/me/external-accounts', { currency: 'USD', accountInfo: usdAccountInfo('77771234556') });
    expect(added.status, added.text).toBe(201);
    expect(added.json.customerId).toBe(customerId);
    expect((await me('GET', `/agents/me/external-accounts/${encodeURIComponent(added.json.id)}`)).json.id).toBe(added.json.id);
    const strangerExt = await api('POST', '/customers/external-accounts', {
      customerId: strangerCustomerId,
      currency: 'USD',
      accountInfo: usdAccountInfo('77771234557'),
    });
    expect(strangerExt.status, strangerExt.text).toBe(201);
    const peek = await me('GET', `/agents/me/external-accounts/${encodeURIComponent(strangerExt.json.id)}`);
    expect([peek.status, peek.json.code]).toEqual([404, 'EXTERNAL_ACCOUNT_NOT_FOUND']);
  });

  it('quotes: an agent quotes from its customer’s account, reads only its own, executes once through payments', async () => {
    const { id, me } = await agent(policy({ approvalThresholds: { currency: 'USD', amount: 3_000 } }));
    const { me: otherAgent } = await agent();
    const body = (amount: number, over: Record<string, unknown> = {}) => ({
      source: { sourceType: 'ACCOUNT', accountId: usdAccount },
      destination: { destinationType: 'ACCOUNT', accountId: eurAccount },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: amount,
      ...over,
    });
    const immediate = await me('POST', '/agents/me/quotes', body(1_000, { immediatelyExecute: true }));
    expect([immediate.status, immediate.json.details?.errors?.[0]?.field]).toEqual([400, 'immediatelyExecute']);
    const foreign = await me('POST', '/agents/me/quotes', body(1_000, { source: { sourceType: 'ACCOUNT', accountId: strangerAccount } }));
    expect(foreign.status, foreign.text).toBeGreaterThanOrEqual(400);
    expect(foreign.status).toBeLessThan(500);

    const usdBefore = await balance();
    const quote = await me('POST', '/agents/me/quotes', body(2_000));
    expect(quote.status, quote.text).toBe(201);
    expect(quote.json).toMatchObject({ status: 'PENDING', totalSendingAmount: 2_000 });
    const qid = encodeURIComponent(quote.json.id);
    expect((await me('GET', `/agents/me/quotes/${qid}`)).json.id).toBe(quote.json.id);
    expect((await otherAgent('GET', `/agents/me/quotes/${qid}`)).status).toBe(404);
    expect((await otherAgent('POST', `/agents/me/quotes/${qid}/execute`)).status).toBe(404);

    const [first, second] = await Promise.all([me('POST', `/agents/me/quotes/${qid}/execute`), me('POST', `/agents/me/quotes/${qid}/execute`)]);
    expect(first.status, first.text).toBe(200);
    expect(second.json.id).toBe(first.json.id);
    expect(first.json).toMatchObject({ type: 'EXECUTE_QUOTE', status: 'APPROVED', quote: { id: quote.json.id } });
    // One of the two may answer the action while the other is still executing it (no transaction yet).
    const done = await eventually(async () => {
      const a = await me('GET', `/agents/me/actions/${encodeURIComponent(first.json.id)}`);
      return a.json.transaction ? a.json : undefined;
    });
    expect(done.transaction.agentId).toBe(id);
    await eventually(async () => ((await balance()) === usdBefore - 2_000 ? true : undefined), 30_000);

    // Above the threshold: waits; approved, the quote executes with the agent's id.
    const big = await me('POST', '/agents/me/quotes', body(4_000));
    const pending = await me('POST', `/agents/me/quotes/${encodeURIComponent(big.json.id)}/execute`);
    expect(pending.json).toMatchObject({ status: 'PENDING_APPROVAL', quote: { id: big.json.id, status: 'PENDING' } });
    expect(await balance()).toBe(usdBefore - 2_000);
    const approved = await api('POST', `/agents/${encodeURIComponent(id)}/actions/${encodeURIComponent(pending.json.id)}/approve`);
    expect(approved.status, approved.text).toBe(200);
    expect(approved.json.transaction.agentId).toBe(id);
    await eventually(async () => ((await balance()) === usdBefore - 6_000 ? true : undefined), 30_000);
  });

  it('bad policies are 400 naming the field, and nothing is stored', async () => {
    const count = async () => (await api('GET', `/agents?customerId=${encodeURIComponent(customerId)}&limit=1`)).json.totalCount as number;
    const before = await count();
    const cases: [unknown, string][] = [
      [policy({ spendingLimits: { currency: 'USD', perTransactionLimit: -1 } }), 'policy.spendingLimits.perTransactionLimit'],
      [policy({ permissions: ['VIEW_TRANSACTIONS', 'FLY'] }), 'policy.permissions.1'],
      [policy({ defaultExecutionMode: 'SOMETIMES' }), 'policy.defaultExecutionMode'],
      [
        policy({ accountRestrictions: { allowedAccountIds: [usdAccount, strangerAccount] } }),
        'policy.accountRestrictions.allowedAccountIds[1]',
      ],
    ];
    for (const [p, field] of cases) {
      const r = await api('POST', '/agents', { name: 'bad', customerId, policy: p });
      expect(r.status, r.text).toBe(400);
      expect(r.json.code).toBe('INVALID_INPUT');
      const fields = (r.json.details.errors as { field: string }[]).map((e) => e.field.replace(/\[(\d+)\]/g, '.$1'));
      expect(fields, r.text).toContain(field.replace(/\[(\d+)\]/g, '.$1'));
    }
    expect(await count()).toBe(before);
  });

  /**
   * The gateway's record of `key` put back as a gateway that died after the agents service answered
   * leaves it: claimed, never completed, its lease run out. The next request with the key takes the
   * claim over and reaches the agents service again (a retry after a lost answer).
   */
  const loseAnswer = async (key: string) => {
    const lost = await e2e.db().query(
      `UPDATE gateway.idempotency_keys
          SET state = 'IN_PROGRESS', locked_until = now() - interval '1 second', response_status = NULL,
              response_headers = NULL, response_body = NULL, completed_at = NULL
        WHERE idempotency_key = $1`,
      [key],
    );
    expect(lost.rowCount).toBe(1);
  };

  it('a create whose answer was lost, retried with its Idempotency-Key: the same agent, one valid device code', async () => {
    const count = async () => (await api('GET', `/agents?customerId=${encodeURIComponent(customerId)}&limit=1`)).json.totalCount as number;
    const before = await count();
    const body = { name: 'Retried bot', customerId, policy: policy() };
    const first = await api('POST', '/agents', body, { 'idempotency-key': 'agent-create-lost' });
    expect(first.status, first.text).toBe(201);
    await loseAnswer('agent-create-lost');
    const retry = await api('POST', '/agents', body, { 'idempotency-key': 'agent-create-lost' });
    expect(retry.status, retry.text).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    // One agent: the retry answers the one the first attempt created, with a code in place of the lost one.
    expect(retry.json.agent.id).toBe(first.json.agent.id);
    expect(await count()).toBe(before + 1);
    expect(retry.json.deviceCode).toMatchObject({ agentId: first.json.agent.id, expiresAt: first.json.deviceCode.expiresAt, redeemed: false });
    expect(retry.json.deviceCode.code).not.toBe(first.json.deviceCode.code);
    const lostCode = await client('POST', `/agents/device-codes/${encodeURIComponent(first.json.deviceCode.code)}/redeem`, { auth: null });
    expect([lostCode.status, lostCode.json.code]).toEqual([400, 'DEVICE_CODE_EXPIRED']);
    const redeemed = await client('POST', `/agents/device-codes/${encodeURIComponent(retry.json.deviceCode.code)}/redeem`, { auth: null });
    expect(redeemed.status, redeemed.text).toBe(200);
    expect(redeemed.json.agentId).toBe(first.json.agent.id);
    // The same key once more after the code was used: the gateway replays its stored answer.
    const replayed = await api('POST', '/agents', body, { 'idempotency-key': 'agent-create-lost' });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.json).toEqual(retry.json);
  });

  it('a device code whose answer was lost, retried with its Idempotency-Key: one valid code; a late retry voids no newer code', async () => {
    const { id } = await agent();
    const path = `/agents/${encodeURIComponent(id)}/device-codes`;
    const redeem = (code: string) => client('POST', `/agents/device-codes/${encodeURIComponent(code)}/redeem`, { auth: null });
    const first = await api('POST', path, undefined, { 'idempotency-key': 'code-lost' });
    expect(first.status, first.text).toBe(201);
    await loseAnswer('code-lost');
    const retry = await api('POST', path, undefined, { 'idempotency-key': 'code-lost' });
    expect(retry.status, retry.text).toBe(201);
    // The retry's code takes the lost one's place: same agent, same expiry.
    expect(retry.json).toMatchObject({ agentId: id, expiresAt: first.json.expiresAt, redeemed: false });
    expect(retry.json.code).not.toBe(first.json.code);

    // Another request (another key) replaces it; a late retry of the first request then voids nothing.
    const newer = await api('POST', path, undefined, { 'idempotency-key': 'code-newer' });
    expect(newer.status, newer.text).toBe(201);
    await loseAnswer('code-lost');
    const late = await api('POST', path, undefined, { 'idempotency-key': 'code-lost' });
    expect([late.status, late.json.code], late.text).toEqual([400, 'DEVICE_CODE_EXPIRED']);
    for (const stale of [first.json.code, retry.json.code]) expect((await redeem(stale)).json.code).toBe('DEVICE_CODE_EXPIRED');
    const redeemed = await redeem(newer.json.code);
    expect(redeemed.status, redeemed.text).toBe(200);

    // Redeemed: a retry of its request mints no second code; the token it gave stays the agent's.
    await loseAnswer('code-newer');
    const afterRedeem = await api('POST', path, undefined, { 'idempotency-key': 'code-newer' });
    expect([afterRedeem.status, afterRedeem.json.code], afterRedeem.text).toEqual([400, 'DEVICE_CODE_ALREADY_REDEEMED']);
    expect((await as(redeemed.json.accessToken)('GET', '/agents/me')).status).toBe(200);
  });

  /**
   * A refused AUTO submission retried: `send` (the same request under the same Idempotency-Key)
   * answers the first refusal again, twice; the agent holds one FAILED action of `type` for it, its
   * usage given back.
   */
  const refusedAgain = async (me: ReturnType<typeof as>, send: () => Promise<ApiResponse>, first: ApiResponse, type: string) => {
    for (let i = 0; i < 2; i++) {
      const again = await send();
      expect(again.status, again.text).toBe(first.status);
      expect(again.json).toEqual(first.json);
    }
    const failed = await me('GET', '/agents/me/actions?status=FAILED');
    expect(failed.json.data).toHaveLength(1);
    expect(failed.json.data[0]).toMatchObject({ type, status: 'FAILED', failureReason: first.json.code });
    expect((await me('GET', '/agents/me')).json.usage).toMatchObject({ dailyTransactionCount: 0, dailySpend: 0 });
  };

  it('a refused AUTO transfer answers the same to a retry with its Idempotency-Key: the same 400, nothing moves', async () => {
    const limits = { currency: 'USD', perTransactionLimit: 100_000_000, dailyLimit: 100_000_000, monthlyLimit: 100_000_000 };
    const { token, me } = await agent(policy({ spendingLimits: limits }));
    const start = await balance();
    const send = () =>
      client('POST', '/agents/me/transfer-out', {
        body: { source: { accountId: usdAccount }, destination: { accountId: external }, amount: start + 1 },
        auth: `Bearer ${token}`,
        headers: { 'idempotency-key': 'auto-refused' },
      });
    const first = await send();
    expect([first.status, first.json.code], first.text).toEqual([400, 'INSUFFICIENT_FUNDS']);
    // The refusal is recorded as one FAILED action, its usage given back; no money moved.
    await refusedAgain(me, send, first, 'TRANSFER_OUT');
    expect(await balance()).toBe(start);
    // The same key with another transfer is still refused as a reused key.
    const other = await client('POST', '/agents/me/transfer-out', {
      body: { source: { accountId: usdAccount }, destination: { accountId: external }, amount: 100 },
      auth: `Bearer ${token}`,
      headers: { 'idempotency-key': 'auto-refused' },
    });
    expect([other.status, other.json.details?.errors?.[0]?.field]).toEqual([400, 'Idempotency-Key']);
  });

  it('a refused AUTO quote execute answers the same to a retry with its Idempotency-Key, even once funds arrived', async () => {
    const limits = { currency: 'USD', perTransactionLimit: 100_000_000, dailyLimit: 100_000_000, monthlyLimit: 100_000_000 };
    const { token, me } = await agent(policy({ spendingLimits: limits }));
    const start = await balance();
    const quote = await me('POST', '/agents/me/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: usdAccount },
      destination: { destinationType: 'ACCOUNT', accountId: eurAccount },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: start + 1,
    });
    expect(quote.status, quote.text).toBe(201);
    const path = `/agents/me/quotes/${encodeURIComponent(quote.json.id)}/execute`;
    const execute = (key: string) => client('POST', path, { auth: `Bearer ${token}`, headers: { 'idempotency-key': key } });
    const first = await execute('quote-refused');
    expect([first.status, first.json.code], first.text).toEqual([400, 'INSUFFICIENT_FUNDS']);
    // Funds arrive and the quote is still PENDING: a retry with the key (the gateway stores no 400,
    // so it reaches the agents service) is still that refusal, and nothing moves.
    const fund = await api('POST', `/sandbox/internal-accounts/${encodeURIComponent(usdAccount)}/fund`, { amount: 10_000 });
    expect(fund.status, fund.text).toBe(200);
    await refusedAgain(me, () => execute('quote-refused'), first, 'EXECUTE_QUOTE');
    expect((await me('GET', '/agents/me/actions')).json.data).toHaveLength(1);
    expect(await balance()).toBe(start + 10_000);
    // A new attempt is a new key: it executes the quote once.
    const paid = await execute('quote-funded');
    expect([paid.status, paid.json.type, paid.json.status], paid.text).toEqual([200, 'EXECUTE_QUOTE', 'APPROVED']);
    await eventually(async () => ((await balance()) === start + 10_000 - (start + 1) ? true : undefined), 30_000);
  });

  it('deleting the agent revokes its token within seconds', async () => {
    const { id, me } = await agent();
    expect((await me('GET', '/agents/me')).status).toBe(200);
    expect((await api('DELETE', `/agents/${encodeURIComponent(id)}`)).status).toBe(204);
    await eventually(async () => ((await me('GET', '/agents/me')).status === 401 ? true : undefined), 5_000);
    expect((await api('GET', `/agents/${encodeURIComponent(id)}`)).status).toBe(404);
  });
});
