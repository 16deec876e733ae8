// Lints the proto files and regenerates the ts-proto stubs into libs/contracts/src/gen.
// Run through Nx (`nx run contracts:generate`), which caches the output by the proto inputs.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const buf = join(root, 'node_modules', '.bin', 'buf');
execFileSync(buf, ['lint'], { cwd: root, stdio: 'inherit' });
rmSync(join(root, 'libs/contracts/src/gen'), { recursive: true, force: true });
execFileSync(buf, ['generate'], { cwd: root, stdio: 'inherit' });
