import { describe, expect, it } from 'vitest';
import {
  newId,
  isId,
  idUuid,
  ManualClock,
  currency,
  currencyView,
  parseAmount,
  encodeCursor,
  decodeCursor,
  pageSize,
  toPage,
  DomainError,
  defineErrors,
  invalidInput,
} from './index.js';

describe('ids', () => {
  it('are <Type>:<uuidv7>, time ordered', () => {
    const a = newId('Customer');
    const b = newId('Customer');
    expect(a).toMatch(/^Customer:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(isId(a, 'Customer')).toBe(true);
    expect(isId(a, 'Quote')).toBe(false);
    expect(isId('Customer:not-a-uuid')).toBe(false);
    expect(idUuid(a) < idUuid(b) || idUuid(a).slice(0, 13) === idUuid(b).slice(0, 13)).toBe(true);
  });
});

describe('money', () => {
  it('knows decimals of fiat and crypto', () => {
    expect(currency('USD').decimals).toBe(2);
    expect(currency('JPY').decimals).toBe(0);
    expect(currency('USDC')).toMatchObject({ decimals: 6, kind: 'CRYPTO' });
    expect(currency('BTC').decimals).toBe(8);
    expect(currencyView('EUR')).toEqual({ code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 });
    expect(() => currency('XXX')).toThrow(DomainError);
  });
  it('parses integer amounts only', () => {
    expect(parseAmount(100)).toBe(100n);
    expect(parseAmount('9000000000000000')).toBe(9000000000000000n);
    expect(parseAmount(1.5)).toBeUndefined();
    expect(parseAmount('1.5')).toBeUndefined();
    expect(parseAmount(Number.MAX_SAFE_INTEGER + 2)).toBeUndefined();
  });
});

describe('pagination', () => {
  it('round-trips cursors and rejects forged ones with a field error', () => {
    const c = encodeCursor({ k: '2026-01-01T00:00:00.000Z', id: 'Customer:x' });
    expect(decodeCursor(c)).toEqual({ k: '2026-01-01T00:00:00.000Z', id: 'Customer:x' });
    const forged = (k: string) => Buffer.from(JSON.stringify({ v: 1, k, id: 'x' })).toString('base64url');
    // A text key (a name) is accepted only where the list says its key is text.
    expect(decodeCursor(forged('Aurora Pay'), 'text')).toEqual({ k: 'Aurora Pay', id: 'x' });
    for (const bad of [
      'nope!',
      Buffer.from('{"a":1}').toString('base64url'),
      'e30',
      // Well-formed cursors whose timestamp key is not one this API writes: never reach SQL.
      forged('not-a-date'),
      forged('99999-01-01'),
      forged('2026-02-30T00:00:00.000Z'),
      forged('2026-01-01'),
      forged('Aurora Pay'),
      'A'.repeat(2000),
    ]) {
      try {
        decodeCursor(bad);
        expect.unreachable();
      } catch (e) {
        expect((e as DomainError).code).toBe('INVALID_INPUT');
        expect((e as DomainError).details).toEqual({
          errors: [{ field: 'cursor', message: expect.any(String) }],
        });
      }
    }
  });
  it('validates limit 1..100, default 20', () => {
    expect(pageSize(undefined)).toBe(20);
    expect(pageSize(100)).toBe(100);
    expect(() => pageSize(101)).toThrow(/limit/);
    expect(() => pageSize(-1)).toThrow(/limit/);
  });
  it('builds the envelope from limit+1 rows', () => {
    const rows = [1, 2, 3].map((n) => ({ id: `r${n}`, at: `t${n}` }));
    const p = toPage(
      rows,
      2,
      7,
      (r) => ({ k: r.at, id: r.id }),
      (r) => r.id,
    );
    expect(p.data).toEqual(['r1', 'r2']);
    expect(p.hasMore).toBe(true);
    expect(decodeCursor(p.nextCursor, 'text')).toEqual({ k: 't2', id: 'r2' });
    expect(p.totalCount).toBe(7);
    const last = toPage(
      rows.slice(0, 2),
      2,
      2,
      (r) => ({ k: r.at, id: r.id }),
      (r) => r.id,
    );
    expect(last.hasMore).toBe(false);
    expect('nextCursor' in last).toBe(false);
  });
});

describe('errors', () => {
  it('carry code, kind and details from one table', () => {
    const fail = defineErrors({ THING_NOT_FOUND: 'NOT_FOUND', THING_EXISTS: 'ALREADY_EXISTS' });
    const e = fail('THING_EXISTS', 'exists', { id: 'x' });
    expect(e).toMatchObject({ kind: 'ALREADY_EXISTS', code: 'THING_EXISTS', details: { id: 'x' } });
    expect(invalidInput([{ field: 'a.b', message: 'is required' }])).toMatchObject({
      kind: 'INVALID_ARGUMENT',
      code: 'INVALID_INPUT',
      message: 'a.b: is required',
    });
  });
});

describe('clock', () => {
  it('moves only when told', () => {
    const c = new ManualClock('2026-01-01T00:00:00Z');
    c.advance(1500);
    expect(c.now().toISOString()).toBe('2026-01-01T00:00:01.500Z');
  });
});
