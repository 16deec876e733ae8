import { describe, expect, it } from 'vitest';
import { parseUmaAddress, SANDBOX_RECEIVER_LOCAL_PARTS } from '../domain/uma.js';
import { SandboxUmaCounterparty } from './sandbox-uma.js';

describe('sandbox UMA counterparty', () => {
  it('knows exactly the five sandbox receivers at its domain', async () => {
    const uma = new SandboxUmaCounterparty('sandbox.sluice.local');
    expect(SANDBOX_RECEIVER_LOCAL_PARTS).toEqual([
      'success.usd',
      'success.eur',
      'success.mxn',
      'pending.long.usd',
      'fail.compliance.usd',
    ]);
    const pending = await uma.lookupReceiver(parseUmaAddress('$pending.long.usd@sandbox.sluice.local'));
    expect(pending).toMatchObject({ currencies: ['USD'], sandboxBehavior: 'LONG_PENDING' });
    expect(await uma.lookupReceiver(parseUmaAddress('$success.usd@other.example'))).toBeUndefined();
    expect(await uma.lookupReceiver(parseUmaAddress('$success.gbp@sandbox.sluice.local'))).toBeUndefined();
  });
});
