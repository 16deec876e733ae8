import { FieldErrors, decodeCursor, invalidInput, isId, newId, pageSize, type Clock, type Environment, type Page } from '@sluice/core';
import { constantTimeEqual } from '@sluice/crypto';
import { isUniqueViolation, transactional, type EntityManager, type MikroORM } from '@sluice/store';
import type { Agent, DeviceCode } from '../domain/agent.js';
import {
  accessTokenHash,
  deviceCodeHash,
  isAccessTokenShape,
  newAccessToken,
  newDeviceCode,
  normalizeDeviceCode,
} from '../domain/credentials.js';
import { checkRequestKey, fail, keyReused, requireRequestKey } from '../domain/errors.js';
import { convertAmount } from '../domain/enforcement.js';
import {
  checkAgentName,
  collectPolicy,
  parsePolicy,
  patchedPolicy,
  policyAccountIds,
  type AgentPolicy,
  type PolicyInput,
  type PolicyPatch,
} from '../domain/policy.js';
import type { AgentFilter, AgentRepository } from '../store/agent.repository.js';
import type { ActionRepository } from '../store/action.repository.js';
import type { AttemptRepository, DeviceCodeRepository } from '../store/device-code.repository.js';
import type { AccountsPort, AgentEvents, CustomerDirectory, PaymentsPort } from './ports.js';
import type { UsageReleaser } from './usage.js';

/** A device code as shown once to the platform. */
export interface IssuedDeviceCode {
  code: string;
  agentId: string;
  expiresAt: Date;
  redeemed: boolean;
}

export interface AgentsSettings {
  deviceCodeTtlMs: number;
  /** Failed device-code attempts allowed per source and per code in one window. */
  maxCodeFailures: number;
  codeFailureWindowMs: number;
}

/**
 * The platform side of agents (create, list, read, update, delete, policy, device codes) and
 * the credentials of the agent side (redeeming a code, authenticating a bearer token).
 */
export class AgentsService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly settings: AgentsSettings,
    private readonly deps: {
      agents: AgentRepository;
      codes: DeviceCodeRepository;
      attempts: AttemptRepository;
      actions: ActionRepository;
      customers: CustomerDirectory;
      accounts: AccountsPort;
      /** Exchange rates, to restate the usage when the policy currency changes. */
      rates: Pick<PaymentsPort, 'exchangeRate'>;
      events: AgentEvents;
      usage: UsageReleaser;
    },
  ) {}

  /**
   * POST /agents: the agent (not connected) and its first device code. With a `requestKey` (the
   * Idempotency-Key) a create whose answer was lost, sent again, answers the agent the first one
   * made — never a second agent — and its code as `newDeviceCode` answers a key used before.
   */
  async create(req: {
    platformId: string;
    environment: Environment;
    name: string;
    customerId: string;
    policy: PolicyInput;
    requestKey?: string;
  }): Promise<{ agent: Agent; deviceCode: IssuedDeviceCode }> {
    const errors = new FieldErrors();
    checkAgentName(errors, req.name);
    if (!isId(req.customerId, 'Customer')) errors.add('customerId', 'must be a customer id (Customer:<uuid>)');
    const policy = collectPolicy(errors, req.policy);
    checkRequestKey(errors, req.requestKey);
    errors.throwIfAny();
    const key = req.requestKey;
    if (key) {
      const earlier = await this.createdBy(req.platformId, req.customerId, key);
      if (earlier) return earlier;
    }
    const customer = await this.deps.customers.customer(req.platformId, req.customerId);
    await this.checkAccounts(req.platformId, req.customerId, policy!, 'policy');
    const now = this.clock.now();
    const agent: Agent = {
      id: newId('Agent'),
      platformId: req.platformId,
      environment: req.environment,
      name: req.name,
      customerId: customer.customerId,
      platformCustomerId: customer.platformCustomerId,
      isPaused: false,
      isConnected: false,
      policy: policy!,
      createdAt: now,
      updatedAt: now,
    };
    try {
      const deviceCode = await transactional(this.orm, async (em) => {
        await this.deps.agents.insert(em, agent, key);
        return this.issueCode(em, agent.id, now, key);
      });
      return { agent, deviceCode };
    } catch (err) {
      // A concurrent twin of this request created the agent first: answer that one.
      const twin = key && isUniqueViolation(err, 'agents_request_key') ? await this.createdBy(req.platformId, req.customerId, key) : undefined;
      if (twin) return twin;
      throw err;
    }
  }

  /**
   * The agent an earlier create with this key made, and its device code answered again
   * (`codeOfRequest`); undefined when the key made none. The key with another customer is a
   * reused key; the agent deleted since is AGENT_NOT_FOUND (nothing is created again).
   */
  private async createdBy(platformId: string, customerId: string, requestKey: string) {
    return transactional(this.orm, async (em) => {
      const earlier = await this.deps.agents.byRequestKey(em, platformId, requestKey);
      if (!earlier) return undefined;
      const { agent, deleted } = earlier;
      if (agent.customerId !== customerId) throw keyReused('platform');
      if (deleted) throw fail('AGENT_NOT_FOUND', `The agent this Idempotency-Key created (${agent.id}) was deleted`, { agentId: agent.id });
      return { agent, deviceCode: await this.codeOfRequest(em, agent.id, requestKey, this.clock.now()) };
    });
  }

  async get(platformId: string, agentId: string): Promise<Agent> {
    const agent = isId(agentId, 'Agent') ? await this.deps.agents.get(this.orm.em.fork(), platformId, agentId) : undefined;
    if (!agent) throw fail('AGENT_NOT_FOUND', `Agent ${agentId} not found`);
    return agent;
  }

  async list(platformId: string, filter: AgentFilter, page: { limit?: number; cursor?: string }): Promise<Page<Agent>> {
    if (filter.customerId !== undefined && !isId(filter.customerId, 'Customer')) {
      return { data: [], hasMore: false, totalCount: 0 };
    }
    const limit = pageSize(page.limit);
    const after = decodeCursor(page.cursor);
    return this.deps.agents.list(this.orm.em.fork(), platformId, filter, { limit, ...(after ? { after } : {}) });
  }

  /** PATCH /agents/{agentId}: name and isPaused (at least one). */
  async update(platformId: string, agentId: string, patch: { name?: string; isPaused?: boolean }): Promise<Agent> {
    const errors = new FieldErrors();
    if (patch.name === undefined && patch.isPaused === undefined) errors.add('name', 'name or isPaused is required');
    checkAgentName(errors, patch.name);
    errors.throwIfAny();
    await this.get(platformId, agentId);
    return transactional(this.orm, async (em) => {
      const agent = await this.locked(em, platformId, agentId);
      const next: Agent = {
        ...agent,
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.isPaused !== undefined ? { isPaused: patch.isPaused } : {}),
        updatedAt: this.clock.now(),
      };
      await this.deps.agents.update(em, next);
      await this.deps.events.updated(em, next);
      return next;
    });
  }

  /**
   * PATCH /agents/{agentId}/policy: provided fields replace, omitted ones stay, null clears; the
   * result is validated whole (field names as the patch spells them). Effective at once for
   * actions (they read the policy under the agent's lock); cached reads follow AGENT.UPDATED.
   */
  async updatePolicy(platformId: string, agentId: string, patch: PolicyPatch): Promise<Agent> {
    const current = await this.get(platformId, agentId);
    const policy = parsePolicy(patchedPolicy(current.policy, patch), '');
    await this.checkAccounts(platformId, current.customerId, policy, '');
    const from = current.policy.spendingLimits.currency;
    const to = policy.spendingLimits.currency;
    // A new currency recasts what is used (and reserved) into it, at payments' current rate.
    const rate =
      from === to
        ? undefined
        : await this.deps.rates.exchangeRate(
            { platformId, environment: current.environment },
            { from, to, amount: current.usage?.monthlySpend || 10_000n },
          );
    return transactional(this.orm, async (em) => {
      const agent = await this.locked(em, platformId, agentId);
      const next: Agent = { ...agent, policy: parsePolicy(patchedPolicy(agent.policy, patch), ''), updatedAt: this.clock.now() };
      const was = agent.policy.spendingLimits.currency;
      const now = next.policy.spendingLimits.currency;
      if (was !== now) {
        if (was !== from || now !== to || rate === undefined) throw fail('POLICY_CHANGED', 'The agent’s policy changed during the request; retry');
        const recast = (v: bigint) => convertAmount(v, from, to, rate);
        if (agent.usage) next.usage = { ...agent.usage, dailySpend: recast(agent.usage.dailySpend), monthlySpend: recast(agent.usage.monthlySpend) };
        for (const a of await this.deps.actions.reservingOf(em, agent.id)) {
          await this.deps.actions.setReservedAmount(em, a.id, recast(a.reservation.amount));
        }
      }
      await this.deps.agents.update(em, next);
      await this.deps.events.updated(em, next);
      return next;
    });
  }

  /** DELETE /agents/{agentId}: the token stops working at once; pending actions fail. */
  async delete(platformId: string, agentId: string): Promise<void> {
    await this.get(platformId, agentId);
    await transactional(this.orm, async (em) => {
      const agent = await this.locked(em, platformId, agentId);
      for (const pending of await this.deps.actions.pendingOf(em, agent.id)) {
        await this.deps.usage.failLocked(em, agent, pending, 'PENDING_APPROVAL', 'AGENT_DELETED');
      }
      await this.deps.agents.delete(em, agent.id, this.clock.now());
      await this.deps.events.tokenRevoked(em, agent);
    });
  }

  /**
   * POST /agents/{agentId}/device-codes: a new code; the agent's unredeemed codes stop working.
   * A `requestKey` used before for this agent is answered by `codeOfRequest`.
   */
  async newDeviceCode(platformId: string, agentId: string, requestKey?: string): Promise<IssuedDeviceCode> {
    requireRequestKey(requestKey);
    await this.get(platformId, agentId);
    return transactional(this.orm, async (em) => {
      const agent = await this.locked(em, platformId, agentId);
      const now = this.clock.now();
      return requestKey ? this.codeOfRequest(em, agent.id, requestKey, now) : this.issueCode(em, agent.id, now);
    });
  }

  /** GET /agents/device-codes/{code}/status (no credentials; failures count as for redeem). */
  async deviceCodeStatus(typed: string, source: string): Promise<{ code: string; redeemed: boolean }> {
    const found = await this.findCode(typed, source);
    return { code: typed, redeemed: found.redeemedAt !== undefined };
  }

  /**
   * POST /agents/device-codes/{code}/redeem (no credentials): a fresh access token, returned
   * once (only its hash is kept), replacing the agent's previous token (AGENT_TOKEN.REVOKED).
   */
  async redeem(typed: string, source: string): Promise<{ agent: Agent; accessToken: string }> {
    const found = await this.findCode(typed, source);
    const now = this.clock.now();
    const refusal = this.codeRefusal(found, now);
    if (refusal) {
      await this.countFailure(source, found.codeHash);
      throw refusal;
    }
    const accessToken = newAccessToken();
    const agent = await transactional(this.orm, async (em) => {
      const code = await this.deps.codes.get(em, found.codeHash, true);
      const again = code ? this.codeRefusal(code, now) : fail('DEVICE_CODE_NOT_FOUND', 'Unknown device code');
      if (again) throw again;
      if (!(await this.deps.codes.redeem(em, found.codeHash, now))) {
        throw fail('DEVICE_CODE_ALREADY_REDEEMED', 'This device code was redeemed already');
      }
      const a = await this.deps.agents.getById(em, found.agentId, true);
      if (!a) throw fail('DEVICE_CODE_NOT_FOUND', 'Unknown device code');
      await this.deps.agents.setToken(em, a.id, accessTokenHash(accessToken), now);
      // The previous token (a reinstall) stops working everywhere at once.
      if (a.isConnected) await this.deps.events.tokenRevoked(em, a);
      return { ...a, isConnected: true, updatedAt: now };
    });
    return { agent, accessToken };
  }

  /** The agent of a bearer token (AGENT_TOKEN_INVALID otherwise: unknown, replaced, deleted). */
  async authenticate(token: string): Promise<Agent> {
    const invalid = () => fail('AGENT_TOKEN_INVALID', 'Invalid or missing agent access token');
    if (!isAccessTokenShape(token)) throw invalid();
    const hash = accessTokenHash(token);
    const found = await this.deps.agents.byTokenHash(this.orm.em.fork(), hash);
    if (!found || !constantTimeEqual(found.tokenHash, hash)) throw invalid();
    return found.agent;
  }

  /** Forgets device-code failure windows that are over (run periodically). */
  async purgeAttempts(): Promise<number> {
    return this.deps.attempts.purge(this.orm.em.fork(), this.clock.now(), this.settings.codeFailureWindowMs);
  }

  private async locked(em: EntityManager, platformId: string, agentId: string): Promise<Agent> {
    const agent = await this.deps.agents.get(em, platformId, agentId, true);
    if (!agent) throw fail('AGENT_NOT_FOUND', `Agent ${agentId} not found`);
    return agent;
  }

  /**
   * A fresh code for the agent (under its lock), valid until `expiresAt` (default: the lifetime
   * from now); the agent's unredeemed codes stop working in the same transaction.
   */
  private async issueCode(
    em: EntityManager,
    agentId: string,
    now: Date,
    requestKey?: string,
    expiresAt = new Date(now.getTime() + this.settings.deviceCodeTtlMs),
  ): Promise<IssuedDeviceCode> {
    const code = newDeviceCode();
    const row: DeviceCode = {
      codeHash: deviceCodeHash(normalizeDeviceCode(code)!),
      agentId,
      expiresAt,
      ...(requestKey ? { requestKey } : {}),
      createdAt: now,
    };
    await this.deps.codes.replace(em, row);
    return { code, agentId, expiresAt, redeemed: false };
  }

  /**
   * The device code of the request with this key (under the agent's lock). A key not used yet
   * issues a new code. A key used before is a retry whose answer may have been lost, and only a
   * hash of its code was kept: while that code is the agent's live one, a fresh code takes its
   * place (the same expiry; the earlier one stops working in the same transaction), so the agent
   * never has two valid codes and the retry's answer holds the one that works. Once the code was
   * redeemed, replaced by a newer request's or expired, the retry mints nothing and answers what
   * redeeming that code would (DEVICE_CODE_ALREADY_REDEEMED, DEVICE_CODE_EXPIRED).
   */
  private async codeOfRequest(em: EntityManager, agentId: string, requestKey: string, now: Date): Promise<IssuedDeviceCode> {
    const earlier = await this.deps.codes.lastOfRequest(em, agentId, requestKey);
    if (!earlier) return this.issueCode(em, agentId, now, requestKey);
    const refusal = this.codeRefusal(earlier, now, 'The device code of this Idempotency-Key', { agentId });
    if (refusal) throw refusal;
    return this.issueCode(em, agentId, now, requestKey, earlier.expiresAt);
  }

  /** Every account the policy names must be an internal account of the customer (400 naming the field). */
  private async checkAccounts(platformId: string, customerId: string, policy: AgentPolicy, prefix: string): Promise<void> {
    const named = policyAccountIds(policy, prefix);
    if (!named.length) return;
    const owned = new Set(await this.deps.accounts.internalAccountIds(platformId, customerId));
    const unknown = named.filter((n) => !owned.has(n.accountId));
    if (unknown.length) {
      throw invalidInput(unknown.map((n) => ({ field: n.field, message: 'is not an internal account of the customer' })));
    }
  }

  /**
   * The stored code a typed code names. Brute force is bounded: a source (client address) or a
   * code with maxCodeFailures failures in the current window is refused (TOO_MANY_ATTEMPTS)
   * before any lookup; every unknown, expired, replaced or redeemed code counts a failure.
   */
  private async findCode(typed: string, source: string): Promise<DeviceCode> {
    const canonical = normalizeDeviceCode(typed);
    const codeHash = canonical ? deviceCodeHash(canonical) : undefined;
    const em = this.orm.em.fork();
    const now = this.clock.now();
    const { maxCodeFailures: max, codeFailureWindowMs: windowMs } = this.settings;
    const [bySource, byCode] = await Promise.all([
      this.deps.attempts.failures(em, `source:${source}`, now, windowMs),
      codeHash ? this.deps.attempts.failures(this.orm.em.fork(), `code:${codeHash}`, now, windowMs) : 0,
    ]);
    if (bySource >= max || byCode >= max) {
      throw fail('TOO_MANY_ATTEMPTS', 'Too many failed device-code attempts; wait and retry', {
        retryAfterSeconds: Math.ceil(windowMs / 1000),
      });
    }
    const found = codeHash ? await this.deps.codes.get(em, codeHash) : undefined;
    if (!found) {
      await this.countFailure(source, codeHash);
      throw fail('DEVICE_CODE_NOT_FOUND', 'Unknown device code');
    }
    return found;
  }

  private codeRefusal(code: DeviceCode, now: Date, what = 'This device code', details?: Record<string, unknown>) {
    if (code.redeemedAt) return fail('DEVICE_CODE_ALREADY_REDEEMED', `${what} was redeemed already`, details);
    if (code.supersededAt) return fail('DEVICE_CODE_EXPIRED', `${what} was replaced by a newer one`, details);
    if (code.expiresAt.getTime() <= now.getTime()) return fail('DEVICE_CODE_EXPIRED', `${what} has expired`, details);
    return undefined;
  }

  private async countFailure(source: string, codeHash: string | undefined): Promise<void> {
    const now = this.clock.now();
    const windowMs = this.settings.codeFailureWindowMs;
    await transactional(this.orm, async (em) => {
      await this.deps.attempts.fail(em, `source:${source}`, now, windowMs);
      if (codeHash) await this.deps.attempts.fail(em, `code:${codeHash}`, now, windowMs);
    });
  }
}
