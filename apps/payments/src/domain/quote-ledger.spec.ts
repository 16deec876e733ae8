import { describe, expect, it } from 'vitest';
import { computeQuoteAmounts, SandboxFeeSchedule, type FeeSchedule } from './pricing.js';
import { SandboxExchangeRateProvider } from './exchange-rates.js';
import { quoteLedgerIds } from './ids.js';
import {
  isBalanced,
  quoteEntries,
  type LedgerLine,
  type QuoteFunding,
  type QuotePayee,
} from './quote-ledger.js';

const rates = new SandboxExchangeRateProvider();
const fees: FeeSchedule = new SandboxFeeSchedule();
const amounts = (from: string, to: string, amount: bigint, side: 'SENDING' | 'RECEIVING' = 'SENDING') =>
  computeQuoteAmounts({ side, amount, rate: rates.rate(from, to), fees: fees.terms(from, to) });

/** Net posted amount per `<account>:<currency>` after applying every entry. */
function net(...entries: LedgerLine[][]): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const lines of entries)
    for (const l of lines) {
      const k = `${'internalAccountId' in l.account ? l.account.internalAccountId : l.account.system}:${l.currency}`;
      out.set(k, (out.get(k) ?? 0n) + l.amount);
    }
  for (const [k, v] of out) if (v === 0n) out.delete(k);
  return out;
}

const SRC = 'InternalAccount:src';
const DST = 'InternalAccount:dst';
const ACCOUNT: QuoteFunding = { kind: 'ACCOUNT', accountId: SRC };
const RTF: QuoteFunding = { kind: 'REALTIME_FUNDING' };
const OUTSIDE: QuotePayee = { kind: 'OUTSIDE' };
/** What posting the hold `quote:<uuid>` towards CLEARING does. */
const holdPost = (a: ReturnType<typeof amounts>): LedgerLine[] => [
  { account: { internalAccountId: SRC }, currency: a.sendingCurrency, amount: -a.totalSendingAmount },
  { account: { system: 'CLEARING' }, currency: a.sendingCurrency, amount: a.totalSendingAmount },
];

describe('quote ledger entries', () => {
  it('every entry balances per currency, across corridors and amounts', () => {
    const corridors = [
      ['USD', 'EUR'],
      ['EUR', 'USD'],
      ['USD', 'BTC'],
      ['BTC', 'MXN'],
      ['USDC', 'BRL'],
      ['GBP', 'USDC'],
    ] as const;
    for (const [from, to] of corridors)
      for (const amount of [1_000_000n, 123_456_789n, 9_999_999_999n])
        for (const side of ['SENDING', 'RECEIVING'] as const) {
          const a = amounts(from, to, amount, side);
          for (const payee of [OUTSIDE, { kind: 'INTERNAL', accountId: DST } as QuotePayee]) {
            expect(isBalanced(quoteEntries.capture(a, payee))).toBe(true);
            expect(isBalanced(quoteEntries.return(a, payee))).toBe(true);
          }
          expect(isBalanced(quoteEntries.funding(a))).toBe(true);
          for (const f of [ACCOUNT, RTF]) expect(isBalanced(quoteEntries.refund(a, f))).toBe(true);
        }
  });

  it('a delivered payment: the payer pays T, FEES earns F, FX holds C against R, the outside world gets R, CLEARING ends at 0', () => {
    const a = amounts('USD', 'EUR', 10_000n);
    expect(net(holdPost(a), quoteEntries.capture(a, OUTSIDE))).toEqual(
      new Map([
        [`${SRC}:USD`, -10_000n],
        ['FEES:USD', 40n],
        ['FX:USD', 9_960n],
        ['FX:EUR', -9_223n],
        ['SETTLEMENT:EUR', 9_223n],
      ]),
    );
  });

  it('a booked payment credits the internal account instead of SETTLEMENT', () => {
    const a = amounts('USD', 'EUR', 10_000n);
    const n = net(holdPost(a), quoteEntries.capture(a, { kind: 'INTERNAL', accountId: DST }));
    expect(n.get(`${DST}:EUR`)).toBe(9_223n);
    expect(n.has('SETTLEMENT:EUR')).toBe(false);
  });

  it('returned and refunded: everyone is back where they started, fees included', () => {
    const a = amounts('USD', 'EUR', 10_000n);
    expect(
      net(
        holdPost(a),
        quoteEntries.capture(a, OUTSIDE),
        quoteEntries.return(a, OUTSIDE),
        quoteEntries.refund(a, ACCOUNT),
      ),
    ).toEqual(new Map());
  });

  it('returned but the refund failed: the whole T waits in CLEARING', () => {
    const a = amounts('USD', 'EUR', 10_000n);
    expect(net(holdPost(a), quoteEntries.capture(a, OUTSIDE), quoteEntries.return(a, OUTSIDE))).toEqual(
      new Map([
        [`${SRC}:USD`, -10_000n],
        ['CLEARING:USD', 10_000n],
      ]),
    );
  });

  it('real-time funding: funded from SETTLEMENT, refunded to SETTLEMENT when the payout fails before delivery', () => {
    const a = amounts('USD', 'EUR', 10_000n);
    expect(net(quoteEntries.funding(a), quoteEntries.refund(a, RTF))).toEqual(new Map());
    expect(net(quoteEntries.funding(a), quoteEntries.capture(a, OUTSIDE))).toEqual(
      new Map([
        ['SETTLEMENT:USD', -10_000n],
        ['FEES:USD', 40n],
        ['FX:USD', 9_960n],
        ['FX:EUR', -9_223n],
        ['SETTLEMENT:EUR', 9_223n],
      ]),
    );
  });

  it('never writes a zero line (the ledger refuses them)', () => {
    const a = { ...amounts('USD', 'EUR', 10_000n), feesIncluded: 0n };
    const lines = quoteEntries.capture({ ...a, totalSendingAmount: a.convertedSendingAmount }, OUTSIDE);
    expect(lines.every((l) => l.amount !== 0n)).toBe(true);
    expect(lines.some((l) => 'system' in l.account && l.account.system === 'FEES')).toBe(false);
  });

  it('derives every id from the quote', () => {
    expect(quoteLedgerIds('Quote:0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b').hold).toBe(
      'quote:0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    );
  });
});
