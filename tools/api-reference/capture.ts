/**
 * The reference check of the end-to-end suites: every answer the API client of
 * tests/e2e/support.ts receives and every webhook the stack produced (the
 * dispatcher's `webhook_deliveries`) is validated against the reference schema of
 * its operation, with the documented differences (`differences.ts`) applied.
 * `assertMatches()` (called when the stack stops) throws on any mismatch.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { referenceValidator } from './differences.js';
import { CAPTURE_DIR } from './capture-totals.js';
import type { Json, Mismatch } from './reference.js';

export class ReferenceCapture {
  private readonly validator = referenceValidator();
  private readonly mismatches = new Map<string, { mismatch: Mismatch; count: number; example: unknown }>();
  responses = 0;
  webhooks = 0;
  /** Webhooks validated, by type. */
  private readonly webhookTypes: Record<string, number> = {};

  constructor(private readonly label: string) {}

  private note(m: Mismatch | undefined, body: unknown): void {
    if (!m) return;
    const key = `${m.what}: ${[...new Set(m.errors)].join('; ')}`;
    const seen = this.mismatches.get(key);
    if (seen) seen.count++;
    else this.mismatches.set(key, { mismatch: m, count: 1, example: body });
  }

  response(method: string, path: string, status: number, body: unknown): void {
    this.responses++;
    this.note(this.validator.response(method, path, status, body), body);
  }

  webhook(payload: Json): void {
    this.webhooks++;
    const type = String(payload.type);
    this.webhookTypes[type] = (this.webhookTypes[type] ?? 0) + 1;
    this.note(this.validator.webhook(payload), payload);
  }

  /** What was checked and what did not match (also written to tmp/api-reference/<label>.json). */
  summary() {
    return {
      label: this.label,
      responses: this.responses,
      webhooks: this.webhooks,
      webhookTypes: this.webhookTypes,
      mismatches: [...this.mismatches.values()].map(({ mismatch, count, example }) => ({
        ...mismatch,
        count,
        example,
      })),
    };
  }

  /** Writes the summary (tmp/api-reference/<label>.json); the error to throw if anything did not match. */
  check(): Error | undefined {
    const s = this.summary();
    const file = join(CAPTURE_DIR, `${this.label}.json`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(s, null, 2));
    if (!s.mismatches.length) return undefined;
    return new Error(
      `${s.mismatches.length} answer(s) or webhook(s) do not match the reference document ` +
        `(of ${s.responses} responses and ${s.webhooks} webhooks; details in ${file}):\n` +
        s.mismatches.map((m) => `  ${m.what} (×${m.count}): ${m.errors.slice(0, 6).join('; ')}`).join('\n'),
    );
  }
}
