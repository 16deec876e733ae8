/**
 * The totals of the reference check over one run of the end-to-end files (each writes
 * `tmp/api-reference/<label>.json` when its stack stops). No heavy imports: `npm test` reads it.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where each end-to-end file writes what it checked (`<label>.json`). */
export const CAPTURE_DIR = join(
  resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'),
  'tmp',
  'api-reference',
);

/**
 * What the end-to-end files of one run checked together (their `<label>.json` files): answers and
 * webhooks validated, the webhooks by type, and the catalogue's webhook types no file produced.
 */
export function captureTotals(files: string[], webhookTypes: readonly string[]) {
  const byType: Record<string, number> = {};
  let responses = 0;
  let webhooks = 0;
  let mismatches = 0;
  for (const f of files) {
    const s = JSON.parse(readFileSync(f, 'utf8')) as {
      responses: number;
      webhooks: number;
      webhookTypes?: Record<string, number>;
      mismatches: unknown[];
    };
    responses += s.responses;
    webhooks += s.webhooks;
    mismatches += s.mismatches.length;
    for (const [t, n] of Object.entries(s.webhookTypes ?? {})) byType[t] = (byType[t] ?? 0) + n;
  }
  return {
    files: files.length,
    responses,
    webhooks,
    mismatches,
    byType,
    neverProduced: webhookTypes.filter((t) => !byType[t]),
  };
}
