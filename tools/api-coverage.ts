/**
 * The coverage of the reference document by Sluice's OpenAPI document.
 *   npx tsx tools/api-coverage.ts            print every reference operation, the counts and any undocumented difference
 *   npx tsx tools/api-coverage.ts --write    also rewrite docs/api-differences.md from tools/api-reference/differences.ts
 * Exits 1 on an undocumented difference or a stale entry of differences.ts.
 */
import { writeFileSync } from 'node:fs';
import { coverageReport, documentedBy } from './api-reference/coverage.js';
import { API_DIFFERENCES_DOC, renderDifferencesDoc } from './api-reference/doc.js';
import { referenceDocument } from './api-reference/reference.js';
import { sluiceOpenApiDocument } from './api-reference/sluice-document.js';

const report = coverageReport(referenceDocument(), await sluiceOpenApiDocument());
for (const r of report.results) {
  const state = !r.present
    ? `missing${documentedBy(r.findings[0]!)?.pending ? ` (pending: ${documentedBy(r.findings[0]!)!.pending})` : ''}`
    : r.findings.length === 0
      ? 'same'
      : r.findings.every((f) => documentedBy(f))
        ? `documented differences (${r.findings.length})`
        : `UNDOCUMENTED differences`;
  process.stdout.write(`${r.operation.padEnd(56)} ${state}\n`);
}
const present = report.same.length + report.documented.length;
process.stdout.write(
  `\n${report.total} reference operations: ${present + report.results.filter((r) => r.present && r.findings.some((f) => !documentedBy(f))).length} present ` +
    `(${report.same.length} with the same shapes, ${report.documented.length} with documented differences), ` +
    `${report.results.filter((r) => !r.present).length} missing (${report.missingDocumented.length} documented)\n`,
);
if (process.argv.includes('--write')) {
  writeFileSync(API_DIFFERENCES_DOC, renderDifferencesDoc());
  process.stdout.write(`wrote ${API_DIFFERENCES_DOC}\n`);
}
for (const e of report.extensions) process.stdout.write(`extension (documented): ${e}\n`);
for (const f of report.undocumented) process.stdout.write(`undocumented: ${f}\n`);
for (const p of report.stale)
  process.stdout.write(`stale entry of differences.ts (no such difference any more): ${p}\n`);
process.exit(report.undocumented.length || report.stale.length ? 1 : 0);
