import {
  AGENT_EXECUTION_MODES as EXECUTION_MODES,
  AGENT_PERMISSIONS,
  CONTROL_CHARACTERS,
  FieldErrors,
  MAX_AMOUNT,
  isCurrencyCode,
  isId,
  type AgentExecutionMode as ExecutionMode,
  type AgentPermission,
} from '@sluice/core';

export { AGENT_PERMISSIONS, EXECUTION_MODES, type AgentPermission, type ExecutionMode };

/** Longest agent name. */
export const AGENT_NAME_MAX_LENGTH = 255;
/** Most accounts an allow-list or a rule list may name. */
export const MAX_POLICY_ACCOUNTS = 100;

/** Amounts in the smallest unit of `currency`; an absent limit is no limit. */
export interface SpendingLimits {
  currency: string;
  perTransactionLimit: bigint;
  dailyLimit?: bigint;
  dailyTransactionLimit?: bigint;
  monthlyLimit?: bigint;
}

/** A per-account override (the internal account acted on). */
export interface AccountRule {
  accountId: string;
  executionMode?: ExecutionMode;
  /** In the policy's spendingLimits.currency. */
  perTransactionLimit?: bigint;
}

export interface AccountRestrictions {
  /** Absent (null): every account of the customer. */
  allowedAccountIds?: string[];
  accountRules: AccountRule[];
}

export interface ApprovalThresholds {
  currency?: string;
  /** Actions above this amount (in `currency`) wait for approval even in AUTO mode; absent: no threshold. */
  amount?: bigint;
}

/** The policy of an agent (reference AgentPolicy), valid by construction of `parsePolicy`. */
export interface AgentPolicy {
  permissions: AgentPermission[];
  defaultExecutionMode: ExecutionMode;
  spendingLimits: SpendingLimits;
  accountRestrictions?: AccountRestrictions;
  approvalThresholds?: ApprovalThresholds;
}

/** A policy as it arrives (enums still strings). */
export interface PolicyInput {
  permissions: string[];
  defaultExecutionMode: string;
  spendingLimits?: Omit<SpendingLimits, 'currency'> & { currency: string };
  accountRestrictions?: { allowedAccountIds?: string[]; accountRules: (Omit<AccountRule, 'executionMode'> & { executionMode?: string })[] };
  approvalThresholds?: ApprovalThresholds;
}

/** A partial policy (PATCH /agents/{agentId}/policy): absent fields keep their values; `null` clears. */
export interface PolicyPatch {
  permissions?: string[];
  defaultExecutionMode?: string;
  spendingLimits?: {
    currency?: string;
    perTransactionLimit?: bigint;
    dailyLimit?: bigint | null;
    dailyTransactionLimit?: bigint;
    monthlyLimit?: bigint | null;
  };
  accountRestrictions?: PolicyInput['accountRestrictions'];
  approvalThresholds?: ApprovalThresholds;
}

const isOneOf = <T extends string>(values: readonly T[], v: unknown): v is T =>
  typeof v === 'string' && (values as readonly string[]).includes(v);

function checkAmount(errors: FieldErrors, field: string, v: bigint | undefined): void {
  if (v === undefined) return;
  if (v < 0n) errors.add(field, 'must not be negative');
  else if (v > MAX_AMOUNT) errors.add(field, `must be at most ${MAX_AMOUNT}`);
}

function checkAccountId(errors: FieldErrors, field: string, v: string): void {
  if (!isId(v, 'InternalAccount')) errors.add(field, 'must be an internal account id (InternalAccount:<uuid>)');
}

/**
 * A valid policy, or INVALID_INPUT naming every bad field under `prefix` (`policy` on POST
 * /agents, `` on PATCH .../policy). Whether the named accounts exist is checked by the caller
 * (`policyAccountIds`), against the customer's internal accounts.
 */
export function parsePolicy(input: PolicyInput, prefix = 'policy'): AgentPolicy {
  const errors = new FieldErrors();
  const policy = collectPolicy(errors, input, prefix);
  errors.throwIfAny();
  return policy!;
}

/** The policy, or undefined with its problems added to `errors` (for requests with other fields to check). */
export function collectPolicy(errors: FieldErrors, input: PolicyInput, prefix = 'policy'): AgentPolicy | undefined {
  const f = (name: string) => (prefix ? `${prefix}.${name}` : name);
  const before = errors.errors.length;
  const permissions: AgentPermission[] = [];
  input.permissions.forEach((p, i) => {
    if (!isOneOf(AGENT_PERMISSIONS, p)) errors.add(f(`permissions[${i}]`), `must be one of ${AGENT_PERMISSIONS.join(', ')}`);
    else if (permissions.includes(p)) errors.add(f(`permissions[${i}]`), `${p} is listed twice`);
    else permissions.push(p);
  });
  if (!isOneOf(EXECUTION_MODES, input.defaultExecutionMode)) {
    errors.add(f('defaultExecutionMode'), `must be one of ${EXECUTION_MODES.join(', ')}`);
  }
  const limits = input.spendingLimits;
  if (!limits) errors.add(f('spendingLimits'), 'is required');
  else {
    if (!isCurrencyCode(limits.currency)) errors.add(f('spendingLimits.currency'), 'must be a supported currency code');
    checkAmount(errors, f('spendingLimits.perTransactionLimit'), limits.perTransactionLimit);
    checkAmount(errors, f('spendingLimits.dailyLimit'), limits.dailyLimit);
    checkAmount(errors, f('spendingLimits.dailyTransactionLimit'), limits.dailyTransactionLimit);
    checkAmount(errors, f('spendingLimits.monthlyLimit'), limits.monthlyLimit);
  }
  const r = input.accountRestrictions;
  if (r) {
    if (r.allowedAccountIds && r.allowedAccountIds.length > MAX_POLICY_ACCOUNTS) {
      errors.add(f('accountRestrictions.allowedAccountIds'), `must list at most ${MAX_POLICY_ACCOUNTS} accounts`);
    }
    r.allowedAccountIds?.forEach((id, i) => checkAccountId(errors, f(`accountRestrictions.allowedAccountIds[${i}]`), id));
    if (r.accountRules.length > MAX_POLICY_ACCOUNTS) {
      errors.add(f('accountRestrictions.accountRules'), `must list at most ${MAX_POLICY_ACCOUNTS} rules`);
    }
    const seen = new Set<string>();
    r.accountRules.forEach((rule, i) => {
      const at = f(`accountRestrictions.accountRules[${i}]`);
      checkAccountId(errors, `${at}.accountId`, rule.accountId);
      if (seen.has(rule.accountId)) errors.add(`${at}.accountId`, 'has another rule');
      seen.add(rule.accountId);
      if (rule.executionMode !== undefined && !isOneOf(EXECUTION_MODES, rule.executionMode)) {
        errors.add(`${at}.executionMode`, `must be one of ${EXECUTION_MODES.join(', ')}`);
      }
      checkAmount(errors, `${at}.perTransactionLimit`, rule.perTransactionLimit);
    });
  }
  const t = input.approvalThresholds;
  if (t) {
    if (t.currency !== undefined && !isCurrencyCode(t.currency)) {
      errors.add(f('approvalThresholds.currency'), 'must be a supported currency code');
    }
    if (t.amount !== undefined && t.currency === undefined) errors.add(f('approvalThresholds.currency'), 'is required when amount is set');
    checkAmount(errors, f('approvalThresholds.amount'), t.amount);
  }
  if (errors.errors.length > before) return undefined;
  return {
    permissions,
    defaultExecutionMode: input.defaultExecutionMode as ExecutionMode,
    spendingLimits: { ...limits! },
    ...(r
      ? {
          accountRestrictions: {
            ...(r.allowedAccountIds ? { allowedAccountIds: [...r.allowedAccountIds] } : {}),
            accountRules: r.accountRules.map((rule) => ({
              accountId: rule.accountId,
              ...(rule.executionMode !== undefined ? { executionMode: rule.executionMode as ExecutionMode } : {}),
              ...(rule.perTransactionLimit !== undefined ? { perTransactionLimit: rule.perTransactionLimit } : {}),
            })),
          },
        }
      : {}),
    ...(t ? { approvalThresholds: { ...t } } : {}),
  };
}

/** The policy input a patch leaves (reference semantics: provided fields replace, omitted keep, null clears). */
export function patchedPolicy(current: AgentPolicy, patch: PolicyPatch): PolicyInput {
  const limits: SpendingLimits = { ...current.spendingLimits };
  const p = patch.spendingLimits;
  if (p) {
    if (p.currency !== undefined) limits.currency = p.currency;
    if (p.perTransactionLimit !== undefined) limits.perTransactionLimit = p.perTransactionLimit;
    if (p.dailyTransactionLimit !== undefined) limits.dailyTransactionLimit = p.dailyTransactionLimit;
    if (p.dailyLimit === null) delete limits.dailyLimit;
    else if (p.dailyLimit !== undefined) limits.dailyLimit = p.dailyLimit;
    if (p.monthlyLimit === null) delete limits.monthlyLimit;
    else if (p.monthlyLimit !== undefined) limits.monthlyLimit = p.monthlyLimit;
  }
  const restrictions = patch.accountRestrictions ?? current.accountRestrictions;
  const thresholds = patch.approvalThresholds ?? current.approvalThresholds;
  return {
    permissions: patch.permissions ?? current.permissions,
    defaultExecutionMode: patch.defaultExecutionMode ?? current.defaultExecutionMode,
    spendingLimits: limits,
    ...(restrictions ? { accountRestrictions: restrictions } : {}),
    ...(thresholds ? { approvalThresholds: thresholds } : {}),
  };
}

/** Every account a policy names, with the field that names it (checked against the customer's accounts). */
export function policyAccountIds(policy: AgentPolicy, prefix = 'policy'): { field: string; accountId: string }[] {
  const f = (name: string) => (prefix ? `${prefix}.${name}` : name);
  const r = policy.accountRestrictions;
  if (!r) return [];
  return [
    ...(r.allowedAccountIds ?? []).map((accountId, i) => ({ field: f(`accountRestrictions.allowedAccountIds[${i}]`), accountId })),
    ...r.accountRules.map((rule, i) => ({ field: f(`accountRestrictions.accountRules[${i}].accountId`), accountId: rule.accountId })),
  ];
}

/** Validates an agent name (1..255 characters, no control characters). */
export function checkAgentName(errors: FieldErrors, name: string | undefined, field = 'name'): void {
  if (name === undefined) return;
  if (name.trim().length === 0) errors.add(field, 'must not be empty');
  else if (name.length > AGENT_NAME_MAX_LENGTH) errors.add(field, `must be at most ${AGENT_NAME_MAX_LENGTH} characters`);
  else if (CONTROL_CHARACTERS.test(name)) errors.add(field, 'must not contain control characters');
}
