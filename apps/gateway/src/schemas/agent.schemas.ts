import { Type, type Static } from '@sinclair/typebox';
import type { agents } from '@sluice/contracts';
import {
  Agent,
  AgentAccountRestrictions,
  AgentAction,
  AgentApprovalThresholds,
  AgentDeviceCode,
  AgentExecutionMode,
  AgentPermission,
  AgentPolicy,
  AgentSpendingLimits,
  Id,
  Memo,
  Page,
  stringEnum,
} from '@sluice/api';
import { AGENT_ACTION_STATUSES } from '@sluice/core';
import { DateTimeFilter, PageQuery } from './common.js';
import { TransactionsQuery } from './transaction.schemas.js';

/** Request and response schemas of the agent routes (the resources themselves are in @sluice/api). */

const AgentName = Type.String({ minLength: 1, maxLength: 255, description: 'A name to recognise the agent by' });

export const AgentCreateRequest = Type.Object(
  { name: AgentName, customerId: Id('Customer'), policy: AgentPolicy },
  { additionalProperties: false, $id: 'AgentCreateRequest' },
);

export const AgentCreateResponse = Type.Object(
  { agent: Agent, deviceCode: AgentDeviceCode },
  { $id: 'AgentCreateResponse' },
);

export const AgentUpdateRequest = Type.Object(
  { name: Type.Optional(AgentName), isPaused: Type.Optional(Type.Boolean({ description: 'true pauses every action; false resumes' })) },
  { additionalProperties: false, minProperties: 1, $id: 'AgentUpdateRequest' },
);

const { currency, perTransactionLimit, dailyLimit, dailyTransactionLimit, monthlyLimit } = AgentSpendingLimits.properties;
export const AgentPolicyUpdateRequest = Type.Object(
  {
    permissions: Type.Optional(Type.Array(AgentPermission, { maxItems: 5, description: 'Replaces the permissions' })),
    defaultExecutionMode: Type.Optional(AgentExecutionMode),
    spendingLimits: Type.Optional(
      Type.Object(
        {
          currency: Type.Optional(currency),
          perTransactionLimit: Type.Optional(perTransactionLimit),
          dailyLimit,
          dailyTransactionLimit,
          monthlyLimit,
        },
        { additionalProperties: false, description: 'Only the given limits change; null removes dailyLimit or monthlyLimit' },
      ),
    ),
    accountRestrictions: Type.Optional(AgentAccountRestrictions),
    approvalThresholds: Type.Optional(AgentApprovalThresholds),
  },
  { additionalProperties: false, $id: 'AgentPolicyUpdateRequest' },
);

export const AgentListQuery = Type.Object(
  {
    customerId: Type.Optional(Id('Customer')),
    isPaused: Type.Optional(Type.Boolean()),
    isConnected: Type.Optional(Type.Boolean({ description: 'Whether a device code was redeemed' })),
    createdAfter: Type.Optional(DateTimeFilter('Inclusive')),
    createdBefore: Type.Optional(DateTimeFilter('Inclusive')),
    updatedAfter: Type.Optional(DateTimeFilter('Inclusive')),
    updatedBefore: Type.Optional(DateTimeFilter('Inclusive')),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const AgentList = Page(Agent, 'AgentListResponse');
export const AgentActionList = Page(AgentAction, 'AgentActionListResponse');

export const AgentParams = Type.Object({ agentId: Id('Agent') }, { additionalProperties: false });
export const AgentActionParams = Type.Object(
  { agentId: Id('Agent'), actionId: Id('AgentAction') },
  { additionalProperties: false },
);
export const OwnActionParams = Type.Object({ actionId: Id('AgentAction') }, { additionalProperties: false });
export const DeviceCodeParams = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 64, description: 'The device code (AGENT-XXXX-XXXX-XXXX)' }) },
  { additionalProperties: false },
);

export const AgentApprovalsQuery = Type.Object(
  {
    agentId: Type.Optional(Id('Agent')),
    customerId: Type.Optional(Id('Customer')),
    startDate: Type.Optional(DateTimeFilter('Inclusive lower bound on createdAt')),
    endDate: Type.Optional(DateTimeFilter('Inclusive upper bound on createdAt')),
    sortOrder: Type.Optional(stringEnum(['asc', 'desc'] as const, { default: 'desc' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const AgentActionsQuery = Type.Object(
  { status: Type.Optional(stringEnum(AGENT_ACTION_STATUSES)), ...PageQuery },
  { additionalProperties: false },
);

/** GET /agents/me/transactions: the filters of GET /transactions except the customer ones. */
export const AgentTransactionsQuery = Type.Omit(TransactionsQuery, ['customerId', 'platformCustomerId'], {
  additionalProperties: false,
});

export const AgentActionRejectRequest = Type.Object(
  { reason: Type.Optional(Memo('Why; stored on the action as rejectionReason')) },
  { additionalProperties: false, $id: 'AgentActionRejectRequest' },
);

export const AgentDeviceCodeStatusResponse = Type.Object(
  { code: Type.String(), redeemed: Type.Boolean() },
  { $id: 'AgentDeviceCodeStatusResponse' },
);

export const AgentDeviceCodeRedeemResponse = Type.Object(
  {
    agentId: Id('Agent'),
    agentName: Type.String(),
    accessToken: Type.String({ description: 'Returned once: send it as `Authorization: Bearer <accessToken>` on /agents/me...' }),
    policy: AgentPolicy,
  },
  { $id: 'AgentDeviceCodeRedeemResponse' },
);

type PolicyBody = Static<typeof AgentPolicy>;
type PatchBody = Static<typeof AgentPolicyUpdateRequest>;

function restrictionsPb(r: NonNullable<PolicyBody['accountRestrictions']>): agents.AccountRestrictions {
  return {
    restrictAccounts: r.allowedAccountIds !== undefined && r.allowedAccountIds !== null,
    allowedAccountIds: r.allowedAccountIds ?? [],
    accountRules: (r.accountRules ?? []).map((rule) => ({
      accountId: rule.accountId,
      ...(rule.executionMode ? { executionMode: rule.executionMode } : {}),
      ...(rule.perTransactionLimit !== undefined && rule.perTransactionLimit !== null
        ? { perTransactionLimit: BigInt(rule.perTransactionLimit) }
        : {}),
    })),
  };
}

function thresholdsPb(t: NonNullable<PolicyBody['approvalThresholds']>): agents.ApprovalThresholds {
  return {
    ...(t.currency !== undefined ? { currency: t.currency } : {}),
    ...(t.amount !== undefined && t.amount !== null ? { amount: BigInt(t.amount) } : {}),
  };
}

const big = (v: number | null | undefined) => (v === undefined || v === null ? undefined : BigInt(v));

/** The proto policy of a request body (meaning is the agents service's to check). */
export function policyPb(p: PolicyBody): agents.AgentPolicy {
  const l = p.spendingLimits;
  const daily = big(l.dailyLimit);
  const count = big(l.dailyTransactionLimit);
  const monthly = big(l.monthlyLimit);
  return {
    permissions: p.permissions,
    defaultExecutionMode: p.defaultExecutionMode,
    spendingLimits: {
      currency: l.currency,
      perTransactionLimit: BigInt(l.perTransactionLimit),
      ...(daily !== undefined ? { dailyLimit: daily } : {}),
      ...(count !== undefined ? { dailyTransactionLimit: count } : {}),
      ...(monthly !== undefined ? { monthlyLimit: monthly } : {}),
    },
    ...(p.accountRestrictions ? { accountRestrictions: restrictionsPb(p.accountRestrictions) } : {}),
    ...(p.approvalThresholds ? { approvalThresholds: thresholdsPb(p.approvalThresholds) } : {}),
  };
}

/** The proto patch of PATCH /agents/{agentId}/policy (absent: unchanged; null: cleared). */
export function policyPatchPb(b: PatchBody): agents.AgentPolicyPatch {
  const l = b.spendingLimits;
  const set = <K extends string>(key: K, v: number | null | undefined) =>
    (v === undefined || v === null ? {} : { [key]: BigInt(v) }) as Partial<Record<K, bigint>>;
  return {
    setPermissions: b.permissions !== undefined,
    permissions: b.permissions ?? [],
    ...(b.defaultExecutionMode ? { defaultExecutionMode: b.defaultExecutionMode } : {}),
    ...(l
      ? {
          spendingLimits: {
            ...(l.currency !== undefined ? { currency: l.currency } : {}),
            ...set('perTransactionLimit', l.perTransactionLimit),
            ...set('dailyLimit', l.dailyLimit),
            clearDailyLimit: l.dailyLimit === null,
            ...set('dailyTransactionLimit', l.dailyTransactionLimit),
            ...set('monthlyLimit', l.monthlyLimit),
            clearMonthlyLimit: l.monthlyLimit === null,
          },
        }
      : {}),
    ...(b.accountRestrictions ? { accountRestrictions: restrictionsPb(b.accountRestrictions) } : {}),
    ...(b.approvalThresholds ? { approvalThresholds: thresholdsPb(b.approvalThresholds) } : {}),
  };
}
