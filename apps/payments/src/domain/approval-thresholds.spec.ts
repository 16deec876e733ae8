import { describe, expect, it } from 'vitest';
import { CURRENCIES } from '@sluice/core';
import {
  APPROVAL_THRESHOLDS_PATTERN,
  DEFAULT_APPROVAL_THRESHOLDS,
  approvalThresholds,
} from './approval-thresholds.js';

describe('incoming approval thresholds', () => {
  it('has a default for every currency', () => {
    for (const code of Object.keys(CURRENCIES))
      expect(DEFAULT_APPROVAL_THRESHOLDS[code], code).toBeGreaterThan(0n);
    expect(approvalThresholds('')).toEqual(DEFAULT_APPROVAL_THRESHOLDS);
  });

  it('overrides only the listed currencies', () => {
    const t = approvalThresholds('USD:500000,BTC:1000');
    expect(t.USD).toBe(500_000n);
    expect(t.BTC).toBe(1_000n);
    expect(t.EUR).toBe(DEFAULT_APPROVAL_THRESHOLDS.EUR);
  });

  it('refuses unknown currencies and zero amounts, naming the pair', () => {
    expect(() => approvalThresholds('XYZ:1')).toThrow(/XYZ:1/);
    expect(() => approvalThresholds('USD:0')).toThrow(/USD:0/);
  });

  it('the config pattern accepts the documented syntax only', () => {
    const re = new RegExp(APPROVAL_THRESHOLDS_PATTERN);
    for (const ok of ['', 'USD:1', 'USD:500000,BTC:1000000', 'USDC:10']) expect(re.test(ok), ok).toBe(true);
    for (const bad of ['USD', 'usd:1', 'USD:1,', 'USD:1.5', 'USD=1', ',USD:1'])
      expect(re.test(bad), bad).toBe(false);
  });
});
