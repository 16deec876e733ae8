import { describe, expect, it } from 'vitest';
import { isDomainError } from '@sluice/core';
import { parsePolicy, patchedPolicy, policyAccountIds, type PolicyInput } from './policy.js';
import { accessTokenHash, deviceCodeHash, isAccessTokenShape, newAccessToken, newDeviceCode, normalizeDeviceCode } from './credentials.js';

const ACCOUNT = 'InternalAccount:0196f0a1-0000-7000-8000-000000000001';
const valid: PolicyInput = {
  permissions: ['VIEW_TRANSACTIONS', 'EXECUTE_QUOTES'],
  defaultExecutionMode: 'AUTO',
  spendingLimits: { currency: 'USD', perTransactionLimit: 50_000n, dailyLimit: 100_000n, dailyTransactionLimit: 5n },
  accountRestrictions: { allowedAccountIds: [ACCOUNT], accountRules: [{ accountId: ACCOUNT, executionMode: 'APPROVAL_REQUIRED' }] },
  approvalThresholds: { currency: 'USD', amount: 10_000n },
};

/** The fields an invalid policy is refused for. */
function fieldsOf(input: PolicyInput, prefix?: string): string[] {
  try {
    parsePolicy(input, prefix);
    return [];
  } catch (e) {
    if (!isDomainError(e) || e.code !== 'INVALID_INPUT') throw e;
    return (e.details!.errors as { field: string }[]).map((x) => x.field);
  }
}

describe('policy validation', () => {
  it('accepts a complete policy as given', () => {
    expect(parsePolicy(valid)).toEqual(valid);
  });

  it('names each bad field', () => {
    expect(fieldsOf({ ...valid, permissions: ['VIEW_TRANSACTIONS', 'FLY'] })).toEqual(['policy.permissions[1]']);
    expect(fieldsOf({ ...valid, permissions: ['VIEW_TRANSACTIONS', 'VIEW_TRANSACTIONS'] })).toEqual(['policy.permissions[1]']);
    expect(fieldsOf({ ...valid, defaultExecutionMode: 'SOMETIMES' })).toEqual(['policy.defaultExecutionMode']);
    expect(fieldsOf({ ...valid, spendingLimits: { ...valid.spendingLimits!, perTransactionLimit: -1n } })).toEqual([
      'policy.spendingLimits.perTransactionLimit',
    ]);
    expect(fieldsOf({ ...valid, spendingLimits: { ...valid.spendingLimits!, currency: 'XXX', monthlyLimit: -5n } })).toEqual([
      'policy.spendingLimits.currency',
      'policy.spendingLimits.monthlyLimit',
    ]);
    expect(
      fieldsOf({ ...valid, accountRestrictions: { allowedAccountIds: ['Account:1'], accountRules: [{ accountId: ACCOUNT, executionMode: 'NEVER' }] } }),
    ).toEqual(['policy.accountRestrictions.allowedAccountIds[0]', 'policy.accountRestrictions.accountRules[0].executionMode']);
    expect(fieldsOf({ ...valid, approvalThresholds: { amount: 5n } })).toEqual(['policy.approvalThresholds.currency']);
    expect(fieldsOf({ ...valid, spendingLimits: undefined }, '')).toEqual(['spendingLimits']);
  });

  it('patches: provided fields replace, omitted ones stay, null clears', () => {
    const current = parsePolicy(valid);
    const patched = parsePolicy(
      patchedPolicy(current, { spendingLimits: { dailyLimit: null, perTransactionLimit: 7n }, permissions: ['CREATE_TRANSFERS'] }),
      '',
    );
    expect(patched.spendingLimits).toEqual({ currency: 'USD', perTransactionLimit: 7n, dailyTransactionLimit: 5n });
    expect(patched.permissions).toEqual(['CREATE_TRANSFERS']);
    expect(patched.accountRestrictions).toEqual(current.accountRestrictions);
    expect(fieldsOf(patchedPolicy(current, { defaultExecutionMode: 'NOPE' }), '')).toEqual(['defaultExecutionMode']);
  });

  it('lists the accounts a policy names with their fields', () => {
    expect(policyAccountIds(parsePolicy(valid))).toEqual([
      { field: 'policy.accountRestrictions.allowedAccountIds[0]', accountId: ACCOUNT },
      { field: 'policy.accountRestrictions.accountRules[0].accountId', accountId: ACCOUNT },
    ]);
  });
});

describe('device codes and tokens', () => {
  it('device codes carry 60 random bits in a typable form, normalised before hashing', () => {
    const code = newDeviceCode();
    expect(code).toMatch(/^AGENT-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/);
    const canonical = normalizeDeviceCode(code)!;
    expect(canonical).toHaveLength(12);
    expect(normalizeDeviceCode(code.toLowerCase().replace(/-/g, ' '))).toBe(canonical);
    expect(normalizeDeviceCode('AGENT-1234')).toBeUndefined();
    expect(new Set(Array.from({ length: 200 }, () => newDeviceCode())).size).toBe(200);
    expect(deviceCodeHash(canonical)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('access tokens are 256 random bits, stored (and looked up) as a SHA-256 hash', () => {
    const token = newAccessToken();
    expect(isAccessTokenShape(token)).toBe(true);
    expect(Buffer.from(token.slice(4), 'base64url')).toHaveLength(32);
    expect(isAccessTokenShape(`${token}x`)).toBe(false);
    expect(accessTokenHash(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(accessTokenHash(token)).not.toBe(accessTokenHash(newAccessToken()));
  });
});
