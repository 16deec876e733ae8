// Checks the proto files for breaking changes against main (or BUF_BREAKING_AGAINST).
import { execFileSync } from 'node:child_process';
const against = process.env.BUF_BREAKING_AGAINST ?? '.git#branch=main';
execFileSync('node_modules/.bin/buf', ['breaking', '--against', against], { stdio: 'inherit' });
