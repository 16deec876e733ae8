import { toPage, type CursorPosition, type Page } from '@sluice/core';
import type { EntityManager } from '@sluice/store';
import { notifyOnCommit } from '@sluice/events';
import type { ActionState, AgentAction, TransferDetails } from '../domain/agent.js';
import type { ActionType } from '../domain/enforcement.js';
import type { Refusal } from '../domain/errors.js';
import { affectedRows, fromJson, insertRow, keysetPage, Where } from './sql.js';

/** TransferDetails in jsonb: the amount as decimal text. */
type StoredTransfer = Omit<TransferDetails, 'amount'> & { amount: string };

/** A row of `agents.agent_actions`. */
interface ActionRow {
  id: string;
  platform_id: string;
  agent_id: string;
  customer_id: string;
  platform_customer_id: string;
  type: ActionType;
  state: ActionState;
  quote_id: string | null;
  transfer: StoredTransfer | string | null;
  description: string | null;
  request_key: string | null;
  wallet_signature: string | null;
  signing_request_id: string | null;
  transaction_id: string | null;
  rejection_reason: string | null;
  failure_reason: string | null;
  refusal: Refusal | string | null;
  reserved_day: string;
  reserved_month: string;
  reserved_amount: string;
  expires_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const opt = <K extends string, V>(key: K, v: V | null): { [P in K]?: V } =>
  (v === null ? {} : { [key]: v }) as { [P in K]?: V };

/** The one mapper of `agents.agent_actions`: AgentAction ↔ ActionRow. */
const actionRow = {
  to(a: AgentAction): ActionRow {
    return {
      id: a.id,
      platform_id: a.platformId,
      agent_id: a.agentId,
      customer_id: a.customerId,
      platform_customer_id: a.platformCustomerId,
      type: a.type,
      state: a.state,
      quote_id: a.quoteId ?? null,
      transfer: a.transfer ? JSON.stringify({ ...a.transfer, amount: a.transfer.amount.toString() }) : null,
      description: a.description ?? null,
      request_key: a.requestKey ?? null,
      wallet_signature: a.walletSignature ?? null,
      signing_request_id: a.signingRequestId ?? null,
      transaction_id: a.transactionId ?? null,
      rejection_reason: a.rejectionReason ?? null,
      failure_reason: a.failureReason ?? null,
      refusal: a.refusal ? JSON.stringify(a.refusal) : null,
      reserved_day: a.reservation.day,
      reserved_month: a.reservation.month,
      reserved_amount: a.reservation.amount.toString(),
      expires_at: a.expiresAt ?? null,
      created_at: a.createdAt,
      updated_at: a.updatedAt,
    };
  },
  from(r: ActionRow): AgentAction {
    const transfer = r.transfer === null ? null : fromJson(r.transfer);
    return {
      id: r.id,
      platformId: r.platform_id,
      agentId: r.agent_id,
      customerId: r.customer_id,
      platformCustomerId: r.platform_customer_id,
      type: r.type,
      state: r.state,
      ...opt('quoteId', r.quote_id),
      ...(transfer ? { transfer: { ...transfer, amount: BigInt(transfer.amount) } } : {}),
      ...opt('description', r.description),
      ...opt('requestKey', r.request_key),
      ...opt('walletSignature', r.wallet_signature),
      ...opt('signingRequestId', r.signing_request_id),
      ...opt('transactionId', r.transaction_id),
      ...opt('rejectionReason', r.rejection_reason),
      ...opt('failureReason', r.failure_reason),
      ...(r.refusal !== null ? { refusal: fromJson(r.refusal) } : {}),
      reservation: { day: r.reserved_day, month: r.reserved_month, amount: BigInt(r.reserved_amount) },
      ...(r.expires_at ? { expiresAt: new Date(r.expires_at) } : {}),
      createdAt: new Date(r.created_at),
      updatedAt: new Date(r.updated_at),
    };
  },
};

const JSONB = new Set(['transfer', 'refusal']);

/** The filters of the action lists (an agent's own, or the platform's approvals). */
export interface ActionFilter {
  platformId: string;
  agentId?: string;
  customerId?: string;
  states?: ActionState[];
  createdFrom?: Date;
  createdTo?: Date;
}

/** What moving an action to another state also records. */
export interface ActionOutcome {
  transactionId?: string;
  rejectionReason?: string;
  failureReason?: string;
  /** The refusal the submission was answered with (AUTO). */
  refusal?: Refusal;
}

/** The channel that wakes the agents workers of every replica when an action starts to wait for something timed. */
export const ACTIONS_CHANNEL = 'sluice_agents_actions';

/** The states the worker watches: an approval that expires, an execution that may stall. */
const TIMED: readonly ActionState[] = ['PENDING_APPROVAL', 'EXECUTING'];

/** Agent actions in `agents.agent_actions`. */
export class ActionRepository {
  async insert(em: EntityManager, a: AgentAction): Promise<void> {
    await insertRow(em, 'agent_actions', actionRow.to(a), JSONB);
    if (TIMED.includes(a.state)) notifyOnCommit(em, ACTIONS_CHANNEL);
  }

  async get(em: EntityManager, platformId: string, actionId: string, lock = false): Promise<AgentAction | undefined> {
    const rows = await em.execute<ActionRow[]>(
      `SELECT * FROM agent_actions WHERE id = ? AND platform_id = ?${lock ? ' FOR UPDATE' : ''}`,
      [actionId, platformId],
    );
    return rows[0] ? actionRow.from(rows[0]) : undefined;
  }

  /** The action an agent submitted with this request key, if any. */
  async byRequestKey(em: EntityManager, agentId: string, requestKey: string): Promise<AgentAction | undefined> {
    const rows = await em.execute<ActionRow[]>(`SELECT * FROM agent_actions WHERE agent_id = ? AND request_key = ?`, [
      agentId,
      requestKey,
    ]);
    return rows[0] ? actionRow.from(rows[0]) : undefined;
  }

  /** The live (not REJECTED or FAILED) action of a quote, if any. */
  async liveOfQuote(em: EntityManager, quoteId: string): Promise<AgentAction | undefined> {
    const rows = await em.execute<ActionRow[]>(
      `SELECT * FROM agent_actions WHERE quote_id = ? AND state NOT IN ('REJECTED', 'FAILED')`,
      [quoteId],
    );
    return rows[0] ? actionRow.from(rows[0]) : undefined;
  }

  async list(
    em: EntityManager,
    f: ActionFilter,
    page: { limit: number; after?: CursorPosition; order: 'ASC' | 'DESC' },
  ): Promise<Page<AgentAction>> {
    const where = new Where()
      .add('platform_id = ?', f.platformId)
      .addIf(f.agentId, 'agent_id = ?')
      .addIf(f.customerId, 'customer_id = ?')
      .addIf(f.createdFrom, 'created_at >= ?')
      .addIf(f.createdTo, 'created_at <= ?');
    if (f.states) where.add(`state IN (${f.states.map(() => '?').join(', ')})`, ...f.states);
    const { rows, total } = await keysetPage<ActionRow>(em, 'agent_actions', where, page);
    return toPage(rows.map(actionRow.from), page.limit, total, (a) => ({ k: a.createdAt.toISOString(), id: a.id }), (a) => a);
  }

  /**
   * Moves an action from one state to another, once: the guarded UPDATE is what makes approve,
   * reject, expiry and the recovery worker exclusive. Returns the action as moved, or undefined
   * when it was not in `from` any more.
   */
  async transition(
    em: EntityManager,
    actionId: string,
    from: ActionState | ActionState[],
    to: ActionState,
    now: Date,
    outcome: ActionOutcome = {},
  ): Promise<AgentAction | undefined> {
    const froms = Array.isArray(from) ? from : [from];
    const rows = await em.execute<ActionRow[]>(
      `UPDATE agent_actions SET state = ?, updated_at = ?,
         transaction_id = COALESCE(?, transaction_id),
         rejection_reason = COALESCE(?, rejection_reason),
         failure_reason = COALESCE(?, failure_reason),
         refusal = COALESCE(?::jsonb, refusal)
       WHERE id = ? AND state IN (${froms.map(() => '?').join(', ')})
       RETURNING *`,
      [
        to,
        now,
        outcome.transactionId ?? null,
        outcome.rejectionReason ?? null,
        outcome.failureReason ?? null,
        outcome.refusal ? JSON.stringify(outcome.refusal) : null,
        actionId,
        ...froms,
      ],
    );
    if (rows[0] && TIMED.includes(to)) notifyOnCommit(em, ACTIONS_CHANNEL);
    return rows[0] ? actionRow.from(rows[0]) : undefined;
  }

  /**
   * When the worker has something to do next: the earliest approval expiry, or the moment the
   * oldest execution has been quiet for `stallMs` (undefined: no action waits).
   */
  async nextDueAt(em: EntityManager, stallMs: number): Promise<Date | undefined> {
    const rows = await em.execute<{ at: Date | string | null }[]>(
      `SELECT LEAST(
         (SELECT min(expires_at) FROM agent_actions WHERE state = 'PENDING_APPROVAL'),
         (SELECT min(updated_at) FROM agent_actions WHERE state = 'EXECUTING') + make_interval(secs => ? / 1000.0)
       ) AS at`,
      [stallMs],
    );
    return rows[0]?.at ? new Date(rows[0].at) : undefined;
  }

  /** Records the transaction of an executing action (known before its outcome), once. */
  async setTransaction(em: EntityManager, actionId: string, transactionId: string, now: Date): Promise<boolean> {
    const res = await em.execute(
      `UPDATE agent_actions SET transaction_id = ?, updated_at = ? WHERE id = ? AND transaction_id IS NULL`,
      [transactionId, now, actionId],
      'run',
    );
    return affectedRows(res) === 1;
  }

  /** PENDING_APPROVAL actions past their expiry, oldest first. */
  async expired(em: EntityManager, now: Date, limit: number): Promise<AgentAction[]> {
    const rows = await em.execute<ActionRow[]>(
      `SELECT * FROM agent_actions WHERE state = 'PENDING_APPROVAL' AND expires_at <= ? ORDER BY expires_at LIMIT ?`,
      [now, limit],
    );
    return rows.map(actionRow.from);
  }

  /** EXECUTING actions not touched since `before` (their executor may have died), oldest first. */
  async stalled(em: EntityManager, before: Date, limit: number): Promise<AgentAction[]> {
    const rows = await em.execute<ActionRow[]>(
      `SELECT * FROM agent_actions WHERE state = 'EXECUTING' AND updated_at <= ? ORDER BY updated_at LIMIT ?`,
      [before, limit],
    );
    return rows.map(actionRow.from);
  }

  /** Touches an executing action (a new lease for its executor); false when it is not EXECUTING. */
  async touch(em: EntityManager, actionId: string, now: Date, before: Date): Promise<boolean> {
    const res = await em.execute(
      `UPDATE agent_actions SET updated_at = ? WHERE id = ? AND state = 'EXECUTING' AND updated_at <= ?`,
      [now, actionId, before],
      'run',
    );
    return affectedRows(res) === 1;
  }

  /** Actions of an agent still holding a reservation (PENDING_APPROVAL, EXECUTING). */
  async reservingOf(em: EntityManager, agentId: string): Promise<AgentAction[]> {
    const rows = await em.execute<ActionRow[]>(
      `SELECT * FROM agent_actions WHERE agent_id = ? AND state IN ('PENDING_APPROVAL', 'EXECUTING')`,
      [agentId],
    );
    return rows.map(actionRow.from);
  }

  /** Restates an action's reservation (the policy currency changed). */
  async setReservedAmount(em: EntityManager, actionId: string, amount: bigint): Promise<void> {
    await em.execute(`UPDATE agent_actions SET reserved_amount = ? WHERE id = ?`, [amount.toString(), actionId]);
  }

  /** PENDING_APPROVAL actions of an agent. */
  async pendingOf(em: EntityManager, agentId: string): Promise<AgentAction[]> {
    const rows = await em.execute<ActionRow[]>(`SELECT * FROM agent_actions WHERE agent_id = ? AND state = 'PENDING_APPROVAL'`, [
      agentId,
    ]);
    return rows.map(actionRow.from);
  }
}
