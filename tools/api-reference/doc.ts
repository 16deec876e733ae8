import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DIFFERENCES } from './differences.js';
import { referenceDocument } from './reference.js';

export const API_DIFFERENCES_DOC = join(
  resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'),
  'docs',
  'api-differences.md',
);

/** docs/api-differences.md, rendered from differences.ts. */
export function renderDifferencesDoc(): string {
  const lines = [
    '# Differences from the reference API',
    '',
    '<!-- Generated from tools/api-reference/differences.ts by `npx tsx tools/api-coverage.ts --write`; do not edit. -->',
    '',
    'Sluice implements the interface specification; for the request and response shapes the specification leaves',
    'open it follows the public reference document (`grid-openapi-2026-05-13.yaml`, see the shared reference README).',
    'This is every place where Sluice differs from that document, and why. Two checks keep it true:',
    '',
    '- `npx tsx tools/api-coverage.ts` (also `tools/api-reference/coverage.spec.ts`) compares every reference operation',
    "  with Sluice's generated OpenAPI document (statuses, schema names, properties, required fields, types, enums,",
    '  discriminated variants) and fails on a difference this page does not list;',
    '- every end-to-end suite validates each answer it receives and each webhook the stack produced against the',
    '  reference schema of its operation, with the overrides below applied (`tools/api-reference/capture.ts`).',
    '',
    'Deliberate differences the reference README itself lists: the wallet signature header is',
    '`Service-Wallet-Signature`; ids are `<Type>:<uuid>`; webhooks are signed as this project designs it.',
    '',
  ];
  const sections: [string, (d: (typeof DIFFERENCES)[number]) => boolean][] = [
    ['Pending: built in another issue', (d) => !!d.pending],
    ['Differences', (d) => !d.pending],
  ];
  for (const [title, pick] of sections) {
    const list = DIFFERENCES.filter(pick);
    if (!list.length) continue;
    lines.push(`## ${title}`, '');
    for (const d of list) {
      lines.push(`### ${d.title}${d.pending ? ` (${d.pending})` : ''}`, '', d.reason, '');
      if (d.extensions?.length) lines.push(...d.extensions.map((e) => `- adds \`${e}\``), '');
      if (d.coverage?.length) lines.push(...d.coverage.map((c) => `- \`${c}\``), '');
      const overrides =
        typeof d.overrides === 'function' ? d.overrides(referenceDocument()) : (d.overrides ?? []);
      for (const o of overrides)
        lines.push(
          `- schema override \`${o.pointer}\`${o.value === undefined ? ' (removed)' : `: \`${JSON.stringify(o.value)}\``}`,
        );
      if (overrides.length) lines.push('');
    }
  }
  return lines.join('\n');
}
