import { agents as pb, payments, type walletAuth } from '@sluice/contracts';
import { environmentToPb } from '@sluice/rpc';
import type { ActionView } from '../app/actions.service.js';
import type { IssuedDeviceCode } from '../app/agents.service.js';
import { publicStatus, type Agent } from '../domain/agent.js';
import { usageView } from '../domain/enforcement.js';
import type { AgentPolicy, PolicyInput, PolicyPatch } from '../domain/policy.js';

/** The proto AgentPolicy of a policy. */
export function policyToPb(p: AgentPolicy): pb.AgentPolicy {
  const l = p.spendingLimits;
  const r = p.accountRestrictions;
  const t = p.approvalThresholds;
  return {
    permissions: p.permissions,
    defaultExecutionMode: p.defaultExecutionMode,
    spendingLimits: {
      currency: l.currency,
      perTransactionLimit: l.perTransactionLimit,
      ...(l.dailyLimit !== undefined ? { dailyLimit: l.dailyLimit } : {}),
      ...(l.dailyTransactionLimit !== undefined ? { dailyTransactionLimit: l.dailyTransactionLimit } : {}),
      ...(l.monthlyLimit !== undefined ? { monthlyLimit: l.monthlyLimit } : {}),
    },
    ...(r
      ? {
          accountRestrictions: {
            restrictAccounts: r.allowedAccountIds !== undefined,
            allowedAccountIds: r.allowedAccountIds ?? [],
            accountRules: r.accountRules.map((rule) => ({
              accountId: rule.accountId,
              ...(rule.executionMode ? { executionMode: rule.executionMode } : {}),
              ...(rule.perTransactionLimit !== undefined ? { perTransactionLimit: rule.perTransactionLimit } : {}),
            })),
          },
        }
      : {}),
    ...(t ? { approvalThresholds: { ...(t.currency ? { currency: t.currency } : {}), ...(t.amount !== undefined ? { amount: t.amount } : {}) } } : {}),
  };
}

function restrictionsIn(r: pb.AccountRestrictions): NonNullable<PolicyInput['accountRestrictions']> {
  return {
    ...(r.restrictAccounts ? { allowedAccountIds: r.allowedAccountIds } : {}),
    accountRules: r.accountRules.map((rule) => ({
      accountId: rule.accountId,
      ...(rule.executionMode !== undefined ? { executionMode: rule.executionMode } : {}),
      ...(rule.perTransactionLimit !== undefined ? { perTransactionLimit: rule.perTransactionLimit } : {}),
    })),
  };
}

function thresholdsIn(t: pb.ApprovalThresholds) {
  return { ...(t.currency !== undefined ? { currency: t.currency } : {}), ...(t.amount !== undefined ? { amount: t.amount } : {}) };
}

/** The policy of a request, for the domain to validate. */
export function policyFromPb(p: pb.AgentPolicy | undefined): PolicyInput {
  const l = p?.spendingLimits;
  return {
    permissions: p?.permissions ?? [],
    defaultExecutionMode: p?.defaultExecutionMode ?? '',
    ...(l
      ? {
          spendingLimits: {
            currency: l.currency,
            perTransactionLimit: l.perTransactionLimit,
            ...(l.dailyLimit !== undefined ? { dailyLimit: l.dailyLimit } : {}),
            ...(l.dailyTransactionLimit !== undefined ? { dailyTransactionLimit: l.dailyTransactionLimit } : {}),
            ...(l.monthlyLimit !== undefined ? { monthlyLimit: l.monthlyLimit } : {}),
          },
        }
      : {}),
    ...(p?.accountRestrictions ? { accountRestrictions: restrictionsIn(p.accountRestrictions) } : {}),
    ...(p?.approvalThresholds ? { approvalThresholds: thresholdsIn(p.approvalThresholds) } : {}),
  };
}

/** The patch of PATCH /agents/{agentId}/policy. */
export function patchFromPb(p: pb.AgentPolicyPatch | undefined): PolicyPatch {
  const l = p?.spendingLimits;
  return {
    ...(p?.setPermissions ? { permissions: p.permissions } : {}),
    ...(p?.defaultExecutionMode !== undefined ? { defaultExecutionMode: p.defaultExecutionMode } : {}),
    ...(l
      ? {
          spendingLimits: {
            ...(l.currency !== undefined ? { currency: l.currency } : {}),
            ...(l.perTransactionLimit !== undefined ? { perTransactionLimit: l.perTransactionLimit } : {}),
            ...(l.clearDailyLimit ? { dailyLimit: null } : l.dailyLimit !== undefined ? { dailyLimit: l.dailyLimit } : {}),
            ...(l.dailyTransactionLimit !== undefined ? { dailyTransactionLimit: l.dailyTransactionLimit } : {}),
            ...(l.clearMonthlyLimit ? { monthlyLimit: null } : l.monthlyLimit !== undefined ? { monthlyLimit: l.monthlyLimit } : {}),
          },
        }
      : {}),
    ...(p?.accountRestrictions ? { accountRestrictions: restrictionsIn(p.accountRestrictions) } : {}),
    ...(p?.approvalThresholds ? { approvalThresholds: thresholdsIn(p.approvalThresholds) } : {}),
  };
}

/** The proto Agent, with its usage as it stands at `now` (UTC resets applied). */
export function agentToPb(a: Agent, now: Date): pb.Agent {
  const u = usageView(a.usage, now);
  return {
    id: a.id,
    platformId: a.platformId,
    name: a.name,
    customerId: a.customerId,
    platformCustomerId: a.platformCustomerId,
    isPaused: a.isPaused,
    isConnected: a.isConnected,
    policy: policyToPb(a.policy),
    usage: u,
    environment: environmentToPb(a.environment),
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
}

export function deviceCodeToPb(d: IssuedDeviceCode): pb.DeviceCode {
  return { code: d.code, agentId: d.agentId, expiresAt: d.expiresAt, redeemed: d.redeemed };
}

/** The proto AgentAction of an action and what payments says of its quote and transaction. */
export function actionToPb(v: ActionView): pb.AgentAction {
  const a = v.action;
  return {
    id: a.id,
    platformId: a.platformId,
    agentId: a.agentId,
    customerId: a.customerId,
    platformCustomerId: a.platformCustomerId,
    status: publicStatus(a.state),
    type: a.type,
    ...(v.quote ? { quote: v.quote.wire as payments.Quote } : {}),
    ...(a.transfer ? { transferDetails: { ...a.transfer } } : {}),
    ...(v.transaction ? { transaction: v.transaction.wire as payments.Transaction } : {}),
    ...(a.rejectionReason !== undefined ? { rejectionReason: a.rejectionReason } : {}),
    ...(a.failureReason !== undefined ? { failureReason: a.failureReason } : {}),
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
    ...(a.expiresAt ? { expiresAt: a.expiresAt } : {}),
  };
}

/** The signing challenge payments answered (an EMBEDDED_WALLET execute without signature). */
export const challengeToPb = (c: unknown) => c as walletAuth.SigningChallenge;
