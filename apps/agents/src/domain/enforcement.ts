import { AGENT_ACTION_TYPES, currency, type AgentActionType } from '@sluice/core';
import { fail } from './errors.js';
import type { AgentPermission, AgentPolicy, ExecutionMode } from './policy.js';

export const ACTION_TYPES = AGENT_ACTION_TYPES;
export type ActionType = AgentActionType;

/** The permission each action type needs. */
export const PERMISSION_OF: Readonly<Record<ActionType, AgentPermission>> = {
  EXECUTE_QUOTE: 'EXECUTE_QUOTES',
  TRANSFER_OUT: 'CREATE_TRANSFERS',
  TRANSFER_IN: 'CREATE_TRANSFERS',
};

/**
 * The usage counters of an agent for one UTC day and month. Counters belong to `day` /
 * `month`: read on another day (month) they count as zero.
 */
export interface Usage {
  /** The UTC day (YYYY-MM-DD) the daily counters count. */
  day: string;
  /** The UTC month (YYYY-MM) the monthly counter counts. */
  month: string;
  dailyTransactionCount: bigint;
  dailySpend: bigint;
  monthlySpend: bigint;
}

/** What one action holds of the counters, so that rejecting or failing it gives exactly that back. */
export interface Reservation {
  day: string;
  month: string;
  /** In the policy's spending currency as it was when reserved. */
  amount: bigint;
}

export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);
export const utcMonth = (at: Date): string => at.toISOString().slice(0, 7);

/** The day after a YYYY-MM-DD day. */
export function nextDay(day: string): string {
  const d = new Date(`${day}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return utcDay(d);
}

/** The month after a YYYY-MM month. */
export function nextMonth(month: string): string {
  const d = new Date(`${month}-01T00:00:00.000Z`);
  d.setUTCMonth(d.getUTCMonth() + 1);
  return utcMonth(d);
}

/** The counters as they stand at `now`: a new UTC day resets the daily ones, a new month the monthly one. */
export function usageAt(u: Usage | undefined, now: Date): Usage {
  const day = utcDay(now);
  const month = utcMonth(now);
  const sameDay = u?.day === day;
  const sameMonth = u?.month === month;
  return {
    day,
    month,
    dailyTransactionCount: sameDay ? u.dailyTransactionCount : 0n,
    dailySpend: sameDay ? u.dailySpend : 0n,
    monthlySpend: sameMonth ? u.monthlySpend : 0n,
  };
}

/** The public AgentUsage: the counters at `now` and when they reset (UTC). */
export function usageView(u: Usage | undefined, now: Date) {
  const cur = usageAt(u, now);
  return {
    dailyTransactionCount: cur.dailyTransactionCount,
    dailySpend: cur.dailySpend,
    monthlySpend: cur.monthlySpend,
    dailyResetDate: nextDay(cur.day),
    monthlyResetMonth: nextMonth(cur.month),
  };
}

/** 403 MISSING_PERMISSION_<PERMISSION> unless the policy grants it. */
export function requirePermission(policy: AgentPolicy, permission: AgentPermission): void {
  if (!policy.permissions.includes(permission)) {
    throw fail(`MISSING_PERMISSION_${permission}`, `The agent's policy lacks the ${permission} permission`, { permission });
  }
}

/** An action as the policy sees it. */
export interface ActionCheck {
  type: ActionType;
  /** The customer's internal account acted on (the source of EXECUTE_QUOTE and TRANSFER_OUT, the destination of TRANSFER_IN). */
  accountId: string;
  /** The amount in the policy's spendingLimits.currency (converted and rounded up when the action is in another currency). */
  limitAmount: bigint;
  /** The amount in approvalThresholds.currency, when the policy has a threshold amount. */
  thresholdAmount?: bigint;
}

/** An allowed action: how it executes, the counters with it reserved, and what it reserved. */
export interface Decision {
  mode: ExecutionMode;
  usage: Usage;
  reservation: Reservation;
}

/** The currencies an action's amount must be expressed in for this policy. */
export function currenciesToCheck(policy: AgentPolicy): { limit: string; threshold?: string } {
  const t = policy.approvalThresholds;
  return {
    limit: policy.spendingLimits.currency,
    ...(t?.amount !== undefined && t.currency ? { threshold: t.currency } : {}),
  };
}

/**
 * The policy's verdict on an action, in this order (the first failing rule answers, 403 with
 * its code): paused, permission, account restrictions (allowedAccountIds), per-transaction
 * limit (the account rule's first, else the policy's), daily spend, monthly spend, daily
 * transaction count. An allowed action reserves its amount and one transaction in the
 * counters; it runs AUTO unless the account rule's (else the default) execution mode is
 * APPROVAL_REQUIRED or its amount is above approvalThresholds.amount.
 */
export function evaluateAction(
  agent: { isPaused: boolean; policy: AgentPolicy },
  usage: Usage | undefined,
  check: ActionCheck,
  now: Date,
): Decision {
  const { policy } = agent;
  if (agent.isPaused) throw fail('AGENT_PAUSED', 'The agent is paused; the platform must resume it first');
  requirePermission(policy, PERMISSION_OF[check.type]);
  const restrictions = policy.accountRestrictions;
  if (restrictions?.allowedAccountIds && !restrictions.allowedAccountIds.includes(check.accountId)) {
    throw fail('ACCOUNT_NOT_ALLOWED', `The agent may not act on account ${check.accountId}`, { accountId: check.accountId });
  }
  const rule = restrictions?.accountRules.find((r) => r.accountId === check.accountId);
  const limits = policy.spendingLimits;
  const perTransaction = rule?.perTransactionLimit ?? limits.perTransactionLimit;
  const money = (v: bigint) => ({ limit: v.toString(), currency: limits.currency, amount: check.limitAmount.toString() });
  if (check.limitAmount > perTransaction) {
    throw fail(
      'PER_TRANSACTION_LIMIT_EXCEEDED',
      `The amount (${check.limitAmount} ${limits.currency}) is above the per-transaction limit of ${perTransaction}${rule?.perTransactionLimit !== undefined ? ' of this account' : ''}`,
      money(perTransaction),
    );
  }
  const cur = usageAt(usage, now);
  if (limits.dailyLimit !== undefined && cur.dailySpend + check.limitAmount > limits.dailyLimit) {
    throw fail('DAILY_LIMIT_EXCEEDED', `The daily limit of ${limits.dailyLimit} ${limits.currency} would be exceeded`, {
      ...money(limits.dailyLimit),
      spent: cur.dailySpend.toString(),
    });
  }
  if (limits.monthlyLimit !== undefined && cur.monthlySpend + check.limitAmount > limits.monthlyLimit) {
    throw fail('MONTHLY_LIMIT_EXCEEDED', `The monthly limit of ${limits.monthlyLimit} ${limits.currency} would be exceeded`, {
      ...money(limits.monthlyLimit),
      spent: cur.monthlySpend.toString(),
    });
  }
  if (limits.dailyTransactionLimit !== undefined && cur.dailyTransactionCount + 1n > limits.dailyTransactionLimit) {
    throw fail(
      'DAILY_TRANSACTION_LIMIT_EXCEEDED',
      `The limit of ${limits.dailyTransactionLimit} transactions a day is reached`,
      { limit: limits.dailyTransactionLimit.toString(), count: cur.dailyTransactionCount.toString() },
    );
  }
  const threshold = policy.approvalThresholds?.amount;
  const aboveThreshold = threshold !== undefined && check.thresholdAmount !== undefined && check.thresholdAmount > threshold;
  const mode: ExecutionMode = aboveThreshold ? 'APPROVAL_REQUIRED' : (rule?.executionMode ?? policy.defaultExecutionMode);
  return {
    mode,
    usage: {
      ...cur,
      dailyTransactionCount: cur.dailyTransactionCount + 1n,
      dailySpend: cur.dailySpend + check.limitAmount,
      monthlySpend: cur.monthlySpend + check.limitAmount,
    },
    reservation: { day: cur.day, month: cur.month, amount: check.limitAmount },
  };
}

/**
 * The counters with a rejected or failed action's reservation given back: only the parts
 * still counted (a reservation of an earlier day or month was reset already), never below zero.
 */
export function releaseReservation(usage: Usage | undefined, r: Reservation, now: Date): Usage {
  const cur = usageAt(usage, now);
  const minus = (a: bigint, b: bigint) => (a > b ? a - b : 0n);
  return {
    ...cur,
    ...(r.day === cur.day
      ? { dailyTransactionCount: minus(cur.dailyTransactionCount, 1n), dailySpend: minus(cur.dailySpend, r.amount) }
      : {}),
    ...(r.month === cur.month ? { monthlySpend: minus(cur.monthlySpend, r.amount) } : {}),
  };
}

/**
 * An amount converted at a rate given as sending-currency major units per receiving-currency
 * major unit (a decimal string, as payments' exchange rates are), rounded up: limits are
 * never under-counted.
 */
export function convertAmount(amount: bigint, from: string, to: string, sendingPerReceiving: string): bigint {
  if (from === to) return amount;
  const m = /^(\d+)(?:\.(\d+))?$/.exec(sendingPerReceiving.trim());
  if (!m) throw new Error(`not a decimal rate: ${sendingPerReceiving}`);
  const fraction = m[2] ?? '';
  const num = BigInt(m[1]! + fraction);
  const den = 10n ** BigInt(fraction.length);
  if (num === 0n) throw new Error('a zero rate');
  const top = amount * 10n ** BigInt(currency(to).decimals) * den;
  const bottom = 10n ** BigInt(currency(from).decimals) * num;
  return (top + bottom - 1n) / bottom;
}
