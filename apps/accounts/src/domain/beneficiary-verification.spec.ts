import { describe, expect, it } from 'vitest';
import {
  partialMatchName,
  ProductionBeneficiaryVerifier,
  SandboxBeneficiaryVerifier,
  sandboxScenario,
  verificationScenario,
} from './beneficiary-verification.js';

describe('sandboxScenario', () => {
  it.each([
    ['123456789102', '102'],
    ['DE51370400440532013102', '102'],
    ['maria105@example.com', '105'],
    ['+5511987654103', '103'],
    ['0x5aaeb6053f3e94c9b9a09f33669435e7ef1be002', '002'],
    ['alice@wallet.example', undefined],
    ['abc12', undefined],
    ['12a45', undefined],
    ['user@domain107.com', undefined],
  ])('%s → %s', (id, suffix) => expect(sandboxScenario(id)).toBe(suffix));
});

describe('SandboxBeneficiaryVerifier (one test per suffix row)', () => {
  const verifier = new SandboxBeneficiaryVerifier();
  const verify = (primaryIdentifier: string, beneficiaryName: string | undefined = 'John Doe') =>
    verifier.verify({ accountType: 'USD_ACCOUNT', currency: 'USD', primaryIdentifier, beneficiaryName });

  it('102: NOT_MATCHED with another holder name', async () => {
    const r = await verify('1234567102');
    expect(r).toMatchObject({ outcome: 'VERIFIED', status: 'NOT_MATCHED' });
    expect(r.outcome === 'VERIFIED' && r.verifiedFullName).toBeTruthy();
    expect(r.outcome === 'VERIFIED' && r.verifiedFullName).not.toBe('John Doe');
  });
  it('103: PARTIAL_MATCH with a fuzzy variant of the name', async () => {
    expect(await verify('1234567103')).toEqual({ outcome: 'VERIFIED', status: 'PARTIAL_MATCH', verifiedFullName: 'J. Doe' });
  });
  it('104: PENDING without a name', async () => {
    expect(await verify('1234567104')).toEqual({ outcome: 'VERIFIED', status: 'PENDING' });
  });
  it('105: the account is invalid', async () => {
    expect((await verify('1234567105')).outcome).toBe('INVALID_ACCOUNT');
    expect((await verify('maria105@example.com')).outcome).toBe('INVALID_ACCOUNT');
  });
  it('106: UNSUPPORTED', async () => {
    expect(await verify('1234567106')).toEqual({ outcome: 'VERIFIED', status: 'UNSUPPORTED' });
  });
  it('107: CHECKED_BY_RECEIVING_FI', async () => {
    expect(await verify('1234567107')).toEqual({ outcome: 'VERIFIED', status: 'CHECKED_BY_RECEIVING_FI' });
  });
  it('other suffixes: MATCHED with the given name', async () => {
    for (const id of ['1234567100', '1234567108', '1234567002', 'spark1abcdefghjk'])
      expect(await verify(id)).toEqual({ outcome: 'VERIFIED', status: 'MATCHED', verifiedFullName: 'John Doe' });
    expect(
      await verifier.verify({ accountType: 'SPARK_WALLET', currency: 'BTC', primaryIdentifier: '1234567890', beneficiaryName: undefined }),
    ).toEqual({ outcome: 'VERIFIED', status: 'MATCHED' });
  });
  it('maps every 1xx row', () => {
    expect(['101', '102', '103', '104', '105', '106', '107', '108'].map((s) => verificationScenario(`99${s}`))).toEqual([
      'MATCHED',
      'NOT_MATCHED',
      'PARTIAL_MATCH',
      'PENDING',
      'INVALID_ACCOUNT',
      'UNSUPPORTED',
      'CHECKED_BY_RECEIVING_FI',
      'MATCHED',
    ]);
  });
  it('partial names differ from the original but stay recognisable', () => {
    expect(partialMatchName('Maria da Silva')).toBe('M. da Silva');
    expect(partialMatchName('Acme')).toBe('Acm.');
  });
});

describe('ProductionBeneficiaryVerifier', () => {
  it('reports UNSUPPORTED and never refuses, whatever the suffix', async () => {
    const v = new ProductionBeneficiaryVerifier();
    expect(await v.verify()).toEqual({ outcome: 'VERIFIED', status: 'UNSUPPORTED' });
  });
});
