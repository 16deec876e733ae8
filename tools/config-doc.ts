/**
 * Writes docs/configuration.md from the apps' config schemas.
 *   npx tsx tools/config-doc.ts           regenerate
 *   npx tsx tools/config-doc.ts --check   exit 1 when the committed file is out of date
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allAppConfigSchemas } from './lib/app-config.js';
import { renderConfigurationDoc } from './lib/config-doc.js';

const file = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'docs', 'configuration.md');
const text = renderConfigurationDoc(await allAppConfigSchemas());
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // missing counts as out of date
  }
  if (current !== text) {
    process.stderr.write('docs/configuration.md is out of date: run `npx tsx tools/config-doc.ts`\n');
    process.exit(1);
  }
  process.stdout.write('docs/configuration.md is up to date\n');
} else {
  writeFileSync(file, text);
  process.stdout.write(`wrote ${file}\n`);
}
process.exit(0);
