import { Type, type Static } from '@sinclair/typebox';
import type { agents } from '@sluice/contracts';
import { AGENT_ACTION_STATUSES, AGENT_ACTION_TYPES, AGENT_EXECUTION_MODES, AGENT_PERMISSIONS, MAX_AMOUNT } from '@sluice/core';
import { DateOnly, Id, Timestamp, iso, stringEnum } from '../schema.js';
import { Quote, quoteJson } from './quote.js';
import { Transaction, transactionJson } from './transaction.js';


/** A limit in the smallest unit of the policy currency: 0 to MAX_AMOUNT. */
const Limit = (description: string) => Type.Integer({ minimum: 0, maximum: Number(MAX_AMOUNT), description });
const Nullable = <T extends ReturnType<typeof Limit>>(s: T) => Type.Union([s, Type.Null()]);

export const AgentPermission = stringEnum(AGENT_PERMISSIONS, {
  $id: 'AgentPermission',
  description:
    'VIEW_TRANSACTIONS: list and read transactions and account balances; CREATE_TRANSFERS: same-currency transfers; CREATE_QUOTES: create quotes; EXECUTE_QUOTES: execute quotes; MANAGE_EXTERNAL_ACCOUNTS: list, read and create external accounts',
});
export const AgentExecutionMode = stringEnum(AGENT_EXECUTION_MODES, {
  $id: 'AgentExecutionMode',
  description: 'AUTO: actions execute at once; APPROVAL_REQUIRED: every action waits for the platform',
});

export const AgentSpendingLimits = Type.Object(
  {
    currency: Type.String({ minLength: 3, maxLength: 5, description: 'Currency every limit amount is in' }),
    perTransactionLimit: Limit('Largest amount of one action'),
    dailyLimit: Type.Optional(Nullable(Limit('Largest total per UTC day; null: none'))),
    dailyTransactionLimit: Type.Optional(Limit('Most actions per UTC day')),
    monthlyLimit: Type.Optional(Nullable(Limit('Largest total per UTC month; null: none'))),
  },
  { $id: 'AgentSpendingLimits', additionalProperties: false },
);

export const AgentAccountRule = Type.Object(
  {
    accountId: Type.String({ minLength: 1, maxLength: 100, description: 'An internal account of the customer' }),
    executionMode: Type.Optional(AgentExecutionMode),
    perTransactionLimit: Type.Optional(Nullable(Limit('Per-transaction limit for this account; null: the policy’s'))),
  },
  { $id: 'AgentAccountRule', additionalProperties: false },
);

export const AgentAccountRestrictions = Type.Object(
  {
    allowedAccountIds: Type.Optional(
      Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 100 }), Type.Null()], {
        description: 'The internal accounts the agent may act on; null: all of the customer’s',
      }),
    ),
    accountRules: Type.Optional(Type.Array(AgentAccountRule, { maxItems: 100 })),
  },
  { $id: 'AgentAccountRestrictions', additionalProperties: false },
);

export const AgentApprovalThresholds = Type.Object(
  {
    currency: Type.Optional(Type.String({ minLength: 3, maxLength: 5 })),
    amount: Type.Optional(Nullable(Limit('Actions above this amount wait for approval even in AUTO mode; null: none'))),
  },
  { $id: 'AgentApprovalThresholds', additionalProperties: false },
);

export const AgentPolicy = Type.Object(
  {
    permissions: Type.Array(AgentPermission, { maxItems: 5 }),
    defaultExecutionMode: AgentExecutionMode,
    spendingLimits: AgentSpendingLimits,
    accountRestrictions: Type.Optional(AgentAccountRestrictions),
    approvalThresholds: Type.Optional(AgentApprovalThresholds),
  },
  { $id: 'AgentPolicy', additionalProperties: false },
);
export type AgentPolicy = Static<typeof AgentPolicy>;

export const AgentUsage = Type.Object(
  {
    dailyTransactionCount: Type.Integer({ minimum: 0 }),
    dailySpend: Type.Integer({ minimum: 0, description: 'In the policy currency, this UTC day' }),
    dailyResetDate: DateOnly,
    monthlySpend: Type.Integer({ minimum: 0, description: 'In the policy currency, this UTC month' }),
    monthlyResetMonth: Type.String({ pattern: '^\\d{4}-\\d{2}$', description: 'YYYY-MM the monthly counter resets' }),
  },
  { $id: 'AgentUsage' },
);

export const Agent = Type.Object(
  {
    id: Id('Agent'),
    name: Type.String(),
    customerId: Type.String(),
    isPaused: Type.Boolean(),
    isConnected: Type.Boolean({ description: 'Whether a device code was redeemed' }),
    policy: AgentPolicy,
    usage: AgentUsage,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'Agent' },
);
export type Agent = Static<typeof Agent>;

export const AgentDeviceCode = Type.Object(
  {
    code: Type.String({ description: 'Shown once: type it into the agent software (AGENT-XXXX-XXXX-XXXX)' }),
    agentId: Id('Agent'),
    expiresAt: Timestamp,
    redeemed: Type.Boolean(),
  },
  { $id: 'AgentDeviceCode' },
);
export type AgentDeviceCode = Static<typeof AgentDeviceCode>;

export const AgentTransferDetails = Type.Object(
  {
    amount: Type.Integer(),
    currency: Type.String(),
    sourceAccountId: Type.String(),
    destinationAccountId: Type.String(),
  },
  { $id: 'AgentTransferDetails' },
);

export const AgentAction = Type.Object(
  {
    id: Id('AgentAction'),
    agentId: Id('Agent'),
    customerId: Type.String(),
    platformCustomerId: Type.String(),
    status: stringEnum(AGENT_ACTION_STATUSES),
    type: stringEnum(AGENT_ACTION_TYPES),
    quote: Type.Optional(Quote),
    transferDetails: Type.Optional(AgentTransferDetails),
    transaction: Type.Optional(Transaction),
    rejectionReason: Type.Optional(Type.String()),
    failureReason: Type.Optional(
      Type.String({
        description:
          'Sluice extension, FAILED actions: why (the payments error code such as QUOTE_EXPIRED or INSUFFICIENT_FUNDS, APPROVAL_EXPIRED, AGENT_DELETED)',
      }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'AgentAction' },
);
export type AgentAction = Static<typeof AgentAction>;

/** The public AgentPolicy of a proto AgentPolicy. */
export function agentPolicyJson(p: agents.AgentPolicy): AgentPolicy {
  const l = p.spendingLimits!;
  const r = p.accountRestrictions;
  const t = p.approvalThresholds;
  return {
    permissions: p.permissions as AgentPolicy['permissions'],
    defaultExecutionMode: p.defaultExecutionMode as AgentPolicy['defaultExecutionMode'],
    spendingLimits: {
      currency: l.currency,
      perTransactionLimit: Number(l.perTransactionLimit),
      dailyLimit: l.dailyLimit === undefined ? null : Number(l.dailyLimit),
      ...(l.dailyTransactionLimit !== undefined ? { dailyTransactionLimit: Number(l.dailyTransactionLimit) } : {}),
      monthlyLimit: l.monthlyLimit === undefined ? null : Number(l.monthlyLimit),
    },
    ...(r
      ? {
          accountRestrictions: {
            allowedAccountIds: r.restrictAccounts ? r.allowedAccountIds : null,
            accountRules: r.accountRules.map((rule) => ({
              accountId: rule.accountId,
              ...(rule.executionMode ? { executionMode: rule.executionMode as AgentPolicy['defaultExecutionMode'] } : {}),
              perTransactionLimit: rule.perTransactionLimit === undefined ? null : Number(rule.perTransactionLimit),
            })),
          },
        }
      : {}),
    ...(t
      ? {
          approvalThresholds: {
            ...(t.currency ? { currency: t.currency } : {}),
            amount: t.amount === undefined ? null : Number(t.amount),
          },
        }
      : {}),
  };
}

/** The public Agent of a proto Agent. */
export function agentJson(a: agents.Agent): Agent {
  const u = a.usage!;
  return {
    id: a.id,
    name: a.name,
    customerId: a.customerId,
    isPaused: a.isPaused,
    isConnected: a.isConnected,
    policy: agentPolicyJson(a.policy!),
    usage: {
      dailyTransactionCount: Number(u.dailyTransactionCount),
      dailySpend: Number(u.dailySpend),
      dailyResetDate: u.dailyResetDate,
      monthlySpend: Number(u.monthlySpend),
      monthlyResetMonth: u.monthlyResetMonth,
    },
    createdAt: iso(a.createdAt)!,
    updatedAt: iso(a.updatedAt)!,
  };
}

/** The public AgentDeviceCode of a proto DeviceCode. */
export function agentDeviceCodeJson(d: agents.DeviceCode): AgentDeviceCode {
  return { code: d.code, agentId: d.agentId, expiresAt: iso(d.expiresAt)!, redeemed: d.redeemed };
}

/** The public AgentAction of a proto AgentAction (REST responses and the AGENT_ACTION.* webhooks). */
export function agentActionJson(a: agents.AgentAction): AgentAction {
  const t = a.transferDetails;
  return {
    id: a.id,
    agentId: a.agentId,
    customerId: a.customerId,
    platformCustomerId: a.platformCustomerId,
    status: a.status as AgentAction['status'],
    type: a.type as AgentAction['type'],
    ...(a.quote ? { quote: quoteJson(a.quote) } : {}),
    ...(t
      ? {
          transferDetails: {
            amount: Number(t.amount),
            currency: t.currency,
            sourceAccountId: t.sourceAccountId,
            destinationAccountId: t.destinationAccountId,
          },
        }
      : {}),
    ...(a.transaction ? { transaction: transactionJson(a.transaction) } : {}),
    ...(a.rejectionReason !== undefined ? { rejectionReason: a.rejectionReason } : {}),
    ...(a.failureReason !== undefined ? { failureReason: a.failureReason } : {}),
    createdAt: iso(a.createdAt)!,
    updatedAt: iso(a.updatedAt)!,
  };
}
