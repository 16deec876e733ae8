/**
 * End to end: generated bad input on every operation (issue 17). A fixed-seed run of the
 * generator of tools/fuzz (fast-check arbitraries built from the gateway's own OpenAPI
 * document) through the real processes: every answer is a 4xx the operation documents, an
 * Error body naming the field at fault, no 5xx, and no table of any service changes.
 * `npm run fuzz -- --count N --seed S` runs more (docs/reliability.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayConfigSchema } from '../../apps/gateway/src/index.js';
import { formatReport, runFuzz } from '../../tools/fuzz/fuzz.js';
import { basic, newCredential, startE2eStack, type E2eStack } from './support.js';

const SEED = 20_261_126;
const COUNT = 1_000;

describe('generated bad input on every operation, through the real processes', () => {
  let e2e: E2eStack;
  const sandbox = newCredential();

  beforeAll(async () => {
    e2e = await startE2eStack('e2efuzz', { sandbox }, { migrate: false });
  }, 180_000);

  afterAll(async () => {
    await e2e?.stop();
  });

  it(`${COUNT} bad requests (seed ${SEED}): documented 4xx naming the field, no 5xx, no table changed`, async () => {
    const report = await runFuzz({
      baseUrl: e2e.stack.baseUrl,
      authorization: basic(sandbox),
      tokenId: sandbox.tokenId,
      bodyLimit: gatewayConfigSchema.properties.BODY_LIMIT_BYTES.default,
      db: e2e.db(),
      count: COUNT,
      seed: SEED,
    });
    const printed = formatReport(report).join('\n');
    console.info(printed.split('\nby operation:')[0]);
    expect(report.requests, printed).toBeGreaterThanOrEqual(COUNT * 0.95);
    expect(Object.keys(report.byOperation).length, 'every operation of the document is reached').toBe(report.operations);
    expect(report.serverErrors, printed).toBe(0);
    expect(report.failures, printed).toEqual([]);
    expect(report.changedTables, printed).toEqual([]);
  }, 300_000);
});
