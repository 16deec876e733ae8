import { describe, expect, it } from 'vitest';
import { crc16 } from '@sluice/core';
import { REALTIME_FUNDING_CURRENCIES, sandboxFundingInstructions } from './payment-instructions.js';

const isValidIban = (iban: string) =>
  BigInt((iban.slice(4) + iban.slice(0, 4)).replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55))) % 97n ===
  1n;
const isValidClabe = (clabe: string) => {
  const w = [3, 7, 1];
  const sum = [...clabe.slice(0, 17)].reduce((s, d, i) => s + ((Number(d) * w[i % 3]!) % 10), 0);
  return String((10 - (sum % 10)) % 10) === clabe[17];
};
const isValidAba = (n: string) => {
  const d = [...n].map(Number);
  return (3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!)) % 10 === 0;
};

describe('sandbox real-time funding instructions', () => {
  const REF = 'SLC-ABCDEFGHJKLMNPQR';
  it('carry the reference and well-formed identifiers for every fundable currency', () => {
    expect(REALTIME_FUNDING_CURRENCIES).toEqual(
      expect.arrayContaining(['USD', 'EUR', 'GBP', 'MXN', 'BRL', 'USDC', 'BTC']),
    );
    for (const cur of REALTIME_FUNDING_CURRENCIES) {
      const [i] = sandboxFundingInstructions('Quote:1', cur, 1234n, REF)!;
      const info = i!.accountOrWalletInfo;
      expect(i!.isPlatformAccount).toBe(true);
      expect(i!.instructionsNotes).toContain('/sandbox/send');
      expect(i!.instructionsNotes).toContain('1234');
      if (info.iban) expect(isValidIban(info.iban), info.iban).toBe(true);
      if (info.clabeNumber) expect(isValidClabe(info.clabeNumber)).toBe(true);
      if (info.routingNumber) expect(isValidAba(info.routingNumber)).toBe(true);
      if (info.qrCode) {
        expect(info.qrCode).toContain(REF.replace(/-/g, ''));
        expect(info.qrCode.slice(-4)).toBe(
          crc16(info.qrCode.slice(0, -4)).toString(16).toUpperCase().padStart(4, '0'),
        );
      }
      if (!info.address && !info.qrCode) expect(info.reference).toBe(REF);
    }
  });

  it('use instant rails only', () => {
    const rails = REALTIME_FUNDING_CURRENCIES.flatMap(
      (c) => sandboxFundingInstructions('Quote:1', c, 1n, REF)![0]!.accountOrWalletInfo.paymentRails ?? [],
    );
    expect(rails).not.toContain('ACH');
    expect(rails).not.toContain('WIRE');
    expect(rails).not.toContain('SEPA');
  });

  it('none for a currency without an instant rail', () => {
    expect(sandboxFundingInstructions('Quote:1', 'JPY', 1n, REF)).toBeUndefined();
  });
});
