import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureTotals } from './capture-totals.js';

describe('captureTotals', () => {
  it('adds the files of a run, counts webhooks by type and names the types no file produced', () => {
    const dir = mkdtempSync(join(tmpdir(), 'capture-'));
    const file = (name: string, body: unknown) => {
      writeFileSync(join(dir, name), JSON.stringify(body));
      return join(dir, name);
    };
    const files = [
      file('a.json', { responses: 10, webhooks: 3, webhookTypes: { 'A.DONE': 2, TEST: 1 }, mismatches: [] }),
      file('b.json', { responses: 5, webhooks: 1, webhookTypes: { 'A.DONE': 1 }, mismatches: [{}] }),
      // a summary written before webhook types were counted
      file('c.json', { responses: 1, webhooks: 0, mismatches: [] }),
    ];
    expect(captureTotals(files, ['A.DONE', 'B.DONE'])).toEqual({
      files: 3,
      responses: 16,
      webhooks: 4,
      mismatches: 1,
      byType: { 'A.DONE': 3, TEST: 1 },
      neverProduced: ['B.DONE'],
    });
  });
});
