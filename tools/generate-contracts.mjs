// Lints the proto files and regenerates the ts-proto stubs into libs/contracts/src/gen, unless
// they were generated from the same inputs already: a SHA-256 of the inputs (proto/**, buf.yaml,
// buf.gen.yaml, this script, the ts-proto version) is kept in gen/.inputs-sha256, so `npm start`,
// `npm run migrate`, `bench`, `fuzz` and `chaos` pay ~0.1 s when nothing changed instead of ~6 s
// of buf plus ~5 s of Nx starting. `--force` regenerates anyway. Nx's `contracts:generate`
// target runs this too (and caches by the same inputs).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, relative } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const gen = join(root, 'libs/contracts/src/gen');
const stamp = join(gen, '.inputs-sha256');

function files(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]))
    .sort();
}

const inputs = [
  ...files(join(root, 'proto')),
  join(root, 'buf.yaml'),
  join(root, 'buf.gen.yaml'),
  fileURLToPath(import.meta.url),
  join(root, 'node_modules/ts-proto/package.json'),
].filter((f) => existsSync(f));
const hash = createHash('sha256');
for (const f of inputs) hash.update(relative(root, f)).update('\0').update(readFileSync(f)).update('\0');
const digest = hash.digest('hex');

if (!process.argv.includes('--force') && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === digest) {
  process.stdout.write('contracts: generated stubs are up to date\n');
} else {
  const buf = join(root, 'node_modules', '.bin', 'buf');
  execFileSync(buf, ['lint'], { cwd: root, stdio: 'inherit' });
  rmSync(gen, { recursive: true, force: true });
  execFileSync(buf, ['generate'], { cwd: root, stdio: 'inherit' });
  writeFileSync(stamp, `${digest}\n`);
  process.stdout.write('contracts: stubs generated\n');
}
