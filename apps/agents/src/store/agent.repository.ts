import { toPage, type CursorPosition, type Environment, type Page } from '@sluice/core';
import type { EntityManager } from '@sluice/store';
import type { Agent } from '../domain/agent.js';
import type { Usage } from '../domain/enforcement.js';
import type { AgentPolicy, AgentPermission, ExecutionMode } from '../domain/policy.js';
import { affectedRows, fromJson, insertRow, keysetPage, Where } from './sql.js';

/** A policy in jsonb: amounts as decimal text. */
interface StoredPolicy {
  permissions: AgentPermission[];
  defaultExecutionMode: ExecutionMode;
  spendingLimits: { currency: string; perTransactionLimit: string; dailyLimit?: string; dailyTransactionLimit?: string; monthlyLimit?: string };
  accountRestrictions?: {
    allowedAccountIds?: string[];
    accountRules: { accountId: string; executionMode?: ExecutionMode; perTransactionLimit?: string }[];
  };
  approvalThresholds?: { currency?: string; amount?: string };
}

const text = (v: bigint | undefined) => (v === undefined ? undefined : v.toString());
const int = (v: string | undefined) => (v === undefined ? undefined : BigInt(v));
/** An object without its undefined properties (jsonb keeps no undefined). */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** The one mapper of the policy column: AgentPolicy ↔ StoredPolicy. */
export const policyJson = {
  to(p: AgentPolicy): StoredPolicy {
    const l = p.spendingLimits;
    const r = p.accountRestrictions;
    return defined({
      permissions: p.permissions,
      defaultExecutionMode: p.defaultExecutionMode,
      spendingLimits: defined({
        currency: l.currency,
        perTransactionLimit: l.perTransactionLimit.toString(),
        dailyLimit: text(l.dailyLimit),
        dailyTransactionLimit: text(l.dailyTransactionLimit),
        monthlyLimit: text(l.monthlyLimit),
      }),
      accountRestrictions: r
        ? defined({
            allowedAccountIds: r.allowedAccountIds,
            accountRules: r.accountRules.map((rule) =>
              defined({ accountId: rule.accountId, executionMode: rule.executionMode, perTransactionLimit: text(rule.perTransactionLimit) }),
            ),
          })
        : undefined,
      approvalThresholds: p.approvalThresholds
        ? defined({ currency: p.approvalThresholds.currency, amount: text(p.approvalThresholds.amount) })
        : undefined,
    });
  },
  from(s: StoredPolicy): AgentPolicy {
    const l = s.spendingLimits;
    const r = s.accountRestrictions;
    return defined({
      permissions: s.permissions,
      defaultExecutionMode: s.defaultExecutionMode,
      spendingLimits: defined({
        currency: l.currency,
        perTransactionLimit: BigInt(l.perTransactionLimit),
        dailyLimit: int(l.dailyLimit),
        dailyTransactionLimit: int(l.dailyTransactionLimit),
        monthlyLimit: int(l.monthlyLimit),
      }),
      accountRestrictions: r
        ? defined({
            allowedAccountIds: r.allowedAccountIds,
            accountRules: r.accountRules.map((rule) =>
              defined({ accountId: rule.accountId, executionMode: rule.executionMode, perTransactionLimit: int(rule.perTransactionLimit) }),
            ),
          })
        : undefined,
      approvalThresholds: s.approvalThresholds
        ? defined({ currency: s.approvalThresholds.currency, amount: int(s.approvalThresholds.amount) })
        : undefined,
    });
  },
};

/** A row of `agents.agents`. */
interface AgentRow {
  id: string;
  platform_id: string;
  environment: Environment;
  name: string;
  customer_id: string;
  platform_customer_id: string;
  is_paused: boolean;
  is_connected: boolean;
  policy: StoredPolicy | string;
  usage_day: string | null;
  usage_month: string | null;
  daily_transaction_count: string;
  daily_spend: string;
  monthly_spend: string;
  created_at: Date | string;
  updated_at: Date | string;
}

/** The one mapper of `agents.agents`: Agent ↔ AgentRow (the token hash and deletion are written by their own statements). */
const agentRow = {
  to(a: Agent): AgentRow {
    return {
      id: a.id,
      platform_id: a.platformId,
      environment: a.environment,
      name: a.name,
      customer_id: a.customerId,
      platform_customer_id: a.platformCustomerId,
      is_paused: a.isPaused,
      is_connected: a.isConnected,
      policy: JSON.stringify(policyJson.to(a.policy)),
      usage_day: a.usage?.day ?? null,
      usage_month: a.usage?.month ?? null,
      daily_transaction_count: (a.usage?.dailyTransactionCount ?? 0n).toString(),
      daily_spend: (a.usage?.dailySpend ?? 0n).toString(),
      monthly_spend: (a.usage?.monthlySpend ?? 0n).toString(),
      created_at: a.createdAt,
      updated_at: a.updatedAt,
    };
  },
  from(r: AgentRow): Agent {
    return {
      id: r.id,
      platformId: r.platform_id,
      environment: r.environment,
      name: r.name,
      customerId: r.customer_id,
      platformCustomerId: r.platform_customer_id,
      isPaused: r.is_paused,
      isConnected: r.is_connected,
      policy: policyJson.from(fromJson(r.policy)),
      ...(r.usage_day && r.usage_month
        ? {
            usage: {
              day: r.usage_day,
              month: r.usage_month,
              dailyTransactionCount: BigInt(r.daily_transaction_count),
              dailySpend: BigInt(r.daily_spend),
              monthlySpend: BigInt(r.monthly_spend),
            },
          }
        : {}),
      createdAt: new Date(r.created_at),
      updatedAt: new Date(r.updated_at),
    };
  },
};

const JSONB = new Set(['policy']);

/** The filters of GET /agents. */
export interface AgentFilter {
  customerId?: string;
  isPaused?: boolean;
  isConnected?: boolean;
  createdAfter?: Date;
  createdBefore?: Date;
  updatedAfter?: Date;
  updatedBefore?: Date;
}

/** Agents (not deleted) in `agents.agents`. */
export class AgentRepository {
  /** Inserts the agent with the key of the request that created it (unique per platform: `agents_request_key`). */
  async insert(em: EntityManager, a: Agent, requestKey?: string): Promise<void> {
    await insertRow(em, 'agents', { ...agentRow.to(a), request_key: requestKey ?? null }, JSONB);
  }

  /** The agent the request with this key created, deleted or not (locked). */
  async byRequestKey(em: EntityManager, platformId: string, requestKey: string): Promise<{ agent: Agent; deleted: boolean } | undefined> {
    const rows = await em.execute<(AgentRow & { deleted_at: Date | string | null })[]>(
      `SELECT * FROM agents WHERE platform_id = ? AND request_key = ? FOR UPDATE`,
      [platformId, requestKey],
    );
    return rows[0] ? { agent: agentRow.from(rows[0]), deleted: rows[0].deleted_at !== null } : undefined;
  }

  /** The platform's agent; `lock` takes its row lock (the usage counters are reserved under it). */
  async get(em: EntityManager, platformId: string, agentId: string, lock = false): Promise<Agent | undefined> {
    const rows = await em.execute<AgentRow[]>(
      `SELECT * FROM agents WHERE id = ? AND platform_id = ? AND deleted_at IS NULL${lock ? ' FOR UPDATE' : ''}`,
      [agentId, platformId],
    );
    return rows[0] ? agentRow.from(rows[0]) : undefined;
  }

  /** An agent by id alone (device-code redemption knows no platform). */
  async getById(em: EntityManager, agentId: string, lock = false): Promise<Agent | undefined> {
    const rows = await em.execute<AgentRow[]>(
      `SELECT * FROM agents WHERE id = ? AND deleted_at IS NULL${lock ? ' FOR UPDATE' : ''}`,
      [agentId],
    );
    return rows[0] ? agentRow.from(rows[0]) : undefined;
  }

  /** The environment of an agent, deleted or not (an action of a deleted agent may still be executing). */
  async environmentOf(em: EntityManager, agentId: string): Promise<Environment | undefined> {
    const rows = await em.execute<{ environment: Environment }[]>(`SELECT environment FROM agents WHERE id = ?`, [agentId]);
    return rows[0]?.environment;
  }

  /** The agent holding the token of this hash, with the stored hash (compared by the caller). */
  async byTokenHash(em: EntityManager, tokenHash: string): Promise<{ agent: Agent; tokenHash: string } | undefined> {
    const rows = await em.execute<(AgentRow & { token_hash: string })[]>(
      `SELECT * FROM agents WHERE token_hash = ? AND deleted_at IS NULL`,
      [tokenHash],
    );
    return rows[0] ? { agent: agentRow.from(rows[0]), tokenHash: rows[0].token_hash } : undefined;
  }

  async list(
    em: EntityManager,
    platformId: string,
    f: AgentFilter,
    page: { limit: number; after?: CursorPosition },
  ): Promise<Page<Agent>> {
    const where = new Where()
      .add('platform_id = ?', platformId)
      .add('deleted_at IS NULL')
      .addIf(f.customerId, 'customer_id = ?')
      .addIf(f.isPaused, 'is_paused = ?')
      .addIf(f.isConnected, 'is_connected = ?')
      .addIf(f.createdAfter, 'created_at >= ?')
      .addIf(f.createdBefore, 'created_at <= ?')
      .addIf(f.updatedAfter, 'updated_at >= ?')
      .addIf(f.updatedBefore, 'updated_at <= ?');
    const { rows, total } = await keysetPage<AgentRow>(em, 'agents', where, { ...page, order: 'DESC' });
    return toPage(rows.map(agentRow.from), page.limit, total, (a) => ({ k: a.createdAt.toISOString(), id: a.id }), (a) => a);
  }

  /** Writes the agent's name, pause, policy, usage and updated_at. */
  async update(em: EntityManager, a: Agent): Promise<void> {
    const r = agentRow.to(a);
    await em.execute(
      `UPDATE agents SET name = ?, is_paused = ?, policy = ?::jsonb, usage_day = ?, usage_month = ?,
         daily_transaction_count = ?, daily_spend = ?, monthly_spend = ?, updated_at = ?
       WHERE id = ? AND deleted_at IS NULL`,
      [
        r.name,
        r.is_paused,
        r.policy,
        r.usage_day,
        r.usage_month,
        r.daily_transaction_count,
        r.daily_spend,
        r.monthly_spend,
        r.updated_at,
        r.id,
      ],
    );
  }

  /** Writes only the usage counters (under the row lock of the reservation). */
  async saveUsage(em: EntityManager, agentId: string, u: Usage): Promise<void> {
    await em.execute(
      `UPDATE agents SET usage_day = ?, usage_month = ?, daily_transaction_count = ?, daily_spend = ?, monthly_spend = ? WHERE id = ?`,
      [u.day, u.month, u.dailyTransactionCount.toString(), u.dailySpend.toString(), u.monthlySpend.toString(), agentId],
    );
  }

  /** The agent's one token is now this one (the previous stops working); the agent is connected. */
  async setToken(em: EntityManager, agentId: string, tokenHash: string, at: Date): Promise<void> {
    await em.execute(`UPDATE agents SET token_hash = ?, is_connected = true, updated_at = ? WHERE id = ?`, [tokenHash, at, agentId]);
  }

  /** Deletes the agent (kept for its actions' history, never read again); its token stops working. */
  async delete(em: EntityManager, agentId: string, at: Date): Promise<boolean> {
    const res = await em.execute(
      `UPDATE agents SET deleted_at = ?, token_hash = NULL, updated_at = ? WHERE id = ? AND deleted_at IS NULL`,
      [at, at, agentId],
      'run',
    );
    return affectedRows(res) === 1;
  }
}
