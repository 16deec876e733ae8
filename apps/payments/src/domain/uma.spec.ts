import { describe, expect, it } from 'vitest';
import { missingPayerData, payerDataProblems } from './receiver-lookup.js';
import { parseUmaAddress } from './uma.js';
import { pageUmaProviders, sandboxUmaProviders } from './uma-providers.js';

describe('UMA addresses', () => {
  it('normalizes valid addresses to lower case', () => {
    expect(parseUmaAddress(' $Alice.B+1@Pay.Example.COM ')).toEqual({
      localPart: 'alice.b+1',
      domain: 'pay.example.com',
      address: '$alice.b+1@pay.example.com',
    });
  });

  it('refuses malformed ones naming the field', () => {
    for (const bad of [
      'alice@x.example',
      '$@x.example',
      '$a@x',
      '$a@-x.example',
      '$a@@x.example',
      '$a b@x.example',
      `$${'a'.repeat(65)}@x.example`,
    ]) {
      expect(() => parseUmaAddress(bad, 'senderUmaAddress'), bad).toThrow(
        expect.objectContaining({
          code: 'INVALID_UMA_ADDRESS',
          details: expect.objectContaining({ field: 'senderUmaAddress' }),
        }),
      );
    }
  });
});

describe('payer data', () => {
  it('names every mandatory field missing or blank, ignoring optional ones', () => {
    const lookup = {
      requiredPayerDataFields: [
        { name: 'FULL_NAME' as const, mandatory: true },
        { name: 'BIRTH_DATE' as const, mandatory: true },
        { name: 'NATIONALITY' as const, mandatory: false },
      ],
    };
    expect(missingPayerData(lookup, undefined)).toEqual(['FULL_NAME', 'BIRTH_DATE']);
    expect(missingPayerData(lookup, { FULL_NAME: '  ', BIRTH_DATE: '1990-01-01' })).toEqual(['FULL_NAME']);
    expect(missingPayerData(lookup, { FULL_NAME: 'Ada', BIRTH_DATE: '1990-01-01' })).toEqual([]);
    // A number, a boolean, an array or an empty object is no value for a mandatory field.
    for (const bad of [5, true, ['Ada'], {}])
      expect(payerDataProblems(lookup, { FULL_NAME: bad, BIRTH_DATE: '1990-01-01' })).toEqual([
        { name: 'FULL_NAME', problem: 'not-a-value' },
      ]);
    // A structured field may be an object.
    expect(payerDataProblems(lookup, { FULL_NAME: { first: 'Ada' }, BIRTH_DATE: '1990-01-01' })).toEqual([]);
  });
});

describe('UMA provider paging', () => {
  it('walks every provider exactly once in both orders, for every page size', async () => {
    const all = sandboxUmaProviders('sandbox.sluice.local');
    for (const sortOrder of ['asc', 'desc'] as const) {
      for (let limit = 1; limit <= 11; limit++) {
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = pageUmaProviders(all, { sortOrder, limit, ...(cursor ? { cursor } : {}) });
          expect(page.totalCount).toBe(all.length);
          seen.push(...page.data.map((p) => p.domain));
          cursor = page.nextCursor;
        } while (cursor);
        expect(new Set(seen).size, `${sortOrder} ${limit}`).toBe(all.length);
        expect(seen).toHaveLength(all.length);
      }
    }
  });
});
