import { describe, expect, it } from 'vitest';
import { crc16 } from '@sluice/core';
import {
  base58,
  bech32m,
  clabe,
  fundingInstructions,
  fundingReference,
  isValidAbaRouting,
  isValidIban,
  SANDBOX_ROUTING_NUMBER,
} from './funding-instructions.js';
import type { InternalAccountRecord } from './internal-account.js';

type Acc = Pick<
  InternalAccountRecord,
  'id' | 'owner' | 'type' | 'currency' | 'environment' | 'fundingSeq' | 'fundingReference'
>;

function account(currency: string, seq = 7n, extra: Partial<Acc> = {}): Acc {
  return {
    id: `InternalAccount:0190c6d2-7a1e-7c4e-9a57-0d1f4b9e2a${String(seq).padStart(2, '0').slice(-2)}`,
    owner: 'CUSTOMER',
    type:
      currency === 'USDC' || currency === 'USDT' || currency === 'BTC' ? 'INTERNAL_CRYPTO' : 'INTERNAL_FIAT',
    currency,
    environment: 'SANDBOX',
    fundingSeq: seq,
    fundingReference: fundingReference(seq),
    ...extra,
  };
}

describe('sandbox funding instructions', () => {
  it('a USD account gets a USD_ACCOUNT instruction with ACH and WIRE and its own reference', () => {
    const [i, ...rest] = fundingInstructions(account('USD'));
    expect(rest).toEqual([]);
    expect(i!.isPlatformAccount).toBe(false);
    const info = i!.accountOrWalletInfo;
    expect(info).toMatchObject({
      accountType: 'USD_ACCOUNT',
      routingNumber: SANDBOX_ROUTING_NUMBER,
      paymentRails: ['ACH', 'WIRE'],
      reference: fundingReference(7n),
    });
    expect(info.accountNumber).toMatch(/^\d{12}$/);
    expect(info.bankName).toBeTruthy();
    expect(isValidAbaRouting(info.routingNumber!)).toBe(true);
    expect(i!.instructionsNotes).toContain(fundingReference(7n));
  });

  it('is stable for an account and unique across accounts', () => {
    expect(fundingInstructions(account('USD'))).toEqual(fundingInstructions(account('USD')));
    const refs = new Set<string>();
    const numbers = { USD: new Set<string>(), GBP: new Set<string>(), EUR: new Set<string>() };
    for (let seq = 1n; seq <= 20_000n; seq++) {
      refs.add(fundingReference(seq));
      numbers.USD.add(fundingInstructions(account('USD', seq))[0]!.accountOrWalletInfo.accountNumber!);
      numbers.GBP.add(fundingInstructions(account('GBP', seq))[0]!.accountOrWalletInfo.accountNumber!);
      numbers.EUR.add(fundingInstructions(account('EUR', seq))[0]!.accountOrWalletInfo.iban!);
    }
    expect(refs.size).toBe(20_000);
    expect([numbers.USD.size, numbers.GBP.size, numbers.EUR.size]).toEqual([20_000, 20_000, 20_000]);
    expect(fundingReference(1n)).toMatch(/^SLU[0-9A-HJKMNP-TV-Z]{8}$/);
  });

  it('marks platform accounts', () => {
    expect(fundingInstructions(account('USD', 7n, { owner: 'PLATFORM' }))[0]!.isPlatformAccount).toBe(true);
  });

  it('production accounts, embedded wallets and currencies without an account type get none', () => {
    expect(fundingInstructions(account('USD', 7n, { environment: 'PRODUCTION' }))).toEqual([]);
    expect(fundingInstructions(account('USDC', 7n, { type: 'EMBEDDED_WALLET' }))).toEqual([]);
    expect(fundingInstructions(account('JPY'))).toEqual([]);
  });

  it('other fiat currencies get the natural account type with the reference formats of the API', () => {
    const info = (cur: string) => fundingInstructions(account(cur))[0]!.accountOrWalletInfo;
    const eur = info('EUR');
    expect(eur).toMatchObject({ accountType: 'EUR_ACCOUNT', paymentRails: ['SEPA', 'SEPA_INSTANT'] });
    expect(eur.iban).toMatch(/^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{11,30}$/);
    expect(isValidIban(eur.iban!)).toBe(true);
    expect(eur.swiftCode).toMatch(/^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/);
    const gbp = info('GBP');
    expect(gbp.sortCode).toMatch(/^[0-9]{6}$/);
    expect(gbp.accountNumber).toMatch(/^[0-9]{8}$/);
    const mxn = info('MXN');
    expect(mxn.clabeNumber).toMatch(/^[0-9]{18}$/);
    expect(clabe(mxn.clabeNumber!.slice(0, 17))).toBe(mxn.clabeNumber);
    const cad = info('CAD');
    expect([cad.bankCode, cad.branchCode, cad.accountNumber]).toEqual([
      expect.stringMatching(/^\d{3}$/),
      expect.stringMatching(/^\d{5}$/),
      expect.stringMatching(/^\d{7,12}$/),
    ]);
    expect(info('INR').vpa).toMatch(/^[a-zA-Z0-9.\-_]+@[a-zA-Z0-9]+$/);
    expect(info('NGN').accountNumber).toMatch(/^[0-9]{10}$/);
    expect(info('PHP').accountNumber).toMatch(/^[0-9]{8,16}$/);
    const brl = info('BRL').qrCode!;
    expect(brl.startsWith('000201')).toBe(true);
    expect(brl).toContain('br.gov.bcb.pix');
    expect(brl).toContain(fundingReference(7n));
    expect(brl.slice(-4)).toBe(crc16(brl.slice(0, -4)).toString(16).toUpperCase().padStart(4, '0'));
  });

  it('crypto accounts get a wallet address for their asset', () => {
    const usdc = fundingInstructions(account('USDC'))[0]!.accountOrWalletInfo;
    expect(usdc).toMatchObject({ accountType: 'SOLANA_WALLET', assetType: 'USDC' });
    expect(usdc.address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    const usdt = fundingInstructions(account('USDT'))[0]!.accountOrWalletInfo;
    expect(usdt).toMatchObject({ accountType: 'TRON_WALLET', assetType: 'USDT' });
    expect(usdt.address).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    const btc = fundingInstructions(account('BTC'))[0]!.accountOrWalletInfo;
    expect(btc).toMatchObject({ accountType: 'SPARK_WALLET', assetType: 'BTC' });
    expect(btc.address).toMatch(/^spark1pgss[02-9ac-hj-np-z]+$/);
    expect(fundingInstructions(account('USDC', 8n))[0]!.accountOrWalletInfo.address).not.toBe(usdc.address);
  });
});

describe('check-digit and encoding helpers (published test vectors)', () => {
  it('ABA routing checksum', () => {
    expect(isValidAbaRouting('021000021')).toBe(true);
    expect(isValidAbaRouting('021000022')).toBe(false);
  });
  it('IBAN mod 97', () => {
    expect(isValidIban('DE89370400440532013000')).toBe(true);
    expect(isValidIban('DE89370400440532013001')).toBe(false);
  });
  it('CLABE control digit', () => {
    expect(clabe('00201007777777777')).toBe('002010077777777771');
  });
  it('CRC16-CCITT (0xFFFF) of "123456789" is 0x29B1', () => {
    expect(crc16('123456789')).toBe(0x29b1);
  });
  it('base58 and bech32m', () => {
    expect(base58(Buffer.from('Hello World!'))).toBe('2NEpo7TZRRrLZSi2U');
    expect(base58(Buffer.from([0, 0, 1]))).toBe('112');
    expect(bech32m('a', new Uint8Array())).toBe('a1lqfn3a');
  });
});
