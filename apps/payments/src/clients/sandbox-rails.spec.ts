import { describe, expect, it } from 'vitest';
import { SandboxTransferRail, sandboxSuffix } from './sandbox-rails.js';

const payment = (id: string) => ({
  transactionId: 'Transaction:x',
  direction: 'PAYOUT' as const,
  amount: 1n,
  currency: 'USD',
  counterpartyIdentifier: id,
});

describe('sandbox rail', () => {
  it('takes the last three digits of the identifier (the username of user@domain forms)', () => {
    expect(sandboxSuffix('12345678002')).toBe('002');
    expect(sandboxSuffix('GB29 NWBK 6016 1331 9260 05')).toBe('005');
    expect(sandboxSuffix('$alice004@wallet.example')).toBe('004');
    expect(sandboxSuffix('alice003@pix.example')).toBe('003');
    expect(sandboxSuffix('abc')).toBeUndefined();
  });

  it('maps each suffix to its outcome', async () => {
    const rail = new SandboxTransferRail();
    expect(await rail.submit(payment('x002'))).toEqual({ accepted: false, detail: 'INSUFFICIENT_FUNDS' });
    expect(await rail.submit(payment('x003'))).toEqual({ accepted: false, detail: 'ACCOUNT_CLOSED' });
    expect(await rail.submit(payment('x004'))).toEqual({ accepted: true, checkAfterMs: 1_000 });
    expect(await rail.submit(payment('x005'))).toEqual({ accepted: true, checkAfterMs: 30_000 });
    expect(await rail.status(payment('x004'))).toEqual({ state: 'FAILED', detail: 'REJECTED_BY_BANK' });
    expect(await rail.status(payment('x005'))).toEqual({ state: 'FAILED', detail: 'TIMED_OUT' });
    expect(await rail.status(payment('x789'))).toEqual({ state: 'SETTLED' });
    expect(await rail.submit(payment('x789'))).toEqual({ accepted: true, checkAfterMs: 1_000 });
  });
});
