/**
 * One-shot platform credential bootstrap for deployments (bundled into the
 * identity image as `ensure-credentials.mjs`; run by deploy/compose.yaml and
 * the Kubernetes `bootstrap-credentials` Job). `npm start` does the same itself.
 *
 * SANDBOX_PLATFORM_CREDENTIALS / PRODUCTION_PLATFORM_CREDENTIALS
 *   `<tokenId>:<secret>`: a platform of that environment exists with exactly
 *   this credential afterwards (idempotent).
 * PLATFORM_REGULATED_FINANCIAL_INSTITUTION=true
 *   a platform this run creates is a regulated financial institution: it verifies its own
 *   customers and sets their kycStatus/kybStatus (the operator's flag; not changeable by the API)
 * IDENTITY_GRPC_URL   identity's host:port (default 127.0.0.1:50051)
 * BOOTSTRAP_WAIT_MS   how long to wait for identity to serve (default 120000)
 */
import { checkGrpcHealth } from './lib/health.js';
import {
  generateCredential,
  formatCredential,
  parseCredential,
  type PlatformEnvironment,
} from './lib/credentials.js';
import { ensurePlatformCredential } from './lib/bootstrap.js';

const address = process.env.IDENTITY_GRPC_URL || '127.0.0.1:50051';
const waitMs = Number(process.env.BOOTSTRAP_WAIT_MS || 120_000);

async function main(): Promise<number> {
  const wanted: { variable: string; environment: PlatformEnvironment }[] = [
    { variable: 'SANDBOX_PLATFORM_CREDENTIALS', environment: 'SANDBOX' },
    { variable: 'PRODUCTION_PLATFORM_CREDENTIALS', environment: 'PRODUCTION' },
  ];
  const given = wanted.filter((w) => process.env[w.variable]);
  if (given.length === 0) {
    process.stdout.write(
      'No SANDBOX_PLATFORM_CREDENTIALS or PRODUCTION_PLATFORM_CREDENTIALS set; nothing to bootstrap.\n' +
        `To create a sandbox platform, set for example SANDBOX_PLATFORM_CREDENTIALS='${formatCredential(generateCredential())}'\n`,
    );
    return 0;
  }
  const creds = given.map((w) => ({
    ...parseCredential(process.env[w.variable]!, w.variable),
    environment: w.environment,
  }));
  const deadline = Date.now() + waitMs;
  for (;;) {
    const h = await checkGrpcHealth(address, 2000);
    if ('status' in h && h.status === 'SERVING') break;
    if (Date.now() > deadline) {
      process.stderr.write(
        `identity at ${address} did not serve within ${waitMs} ms (${'error' in h ? h.error : h.status})\n`,
      );
      return 1;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  for (const c of creds) {
    const p = await ensurePlatformCredential(
      address,
      { ...c, source: 'env' },
      {
        platformName: process.env.PLATFORM_NAME || undefined,
        isRegulatedFinancialInstitution: process.env.PLATFORM_REGULATED_FINANCIAL_INSTITUTION === 'true',
      },
    );
    process.stdout.write(
      `${p.environment.toLowerCase()} platform ${p.platformId} ${p.created ? 'created' : 'already present'} with token ${p.tokenId}\n`,
    );
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  },
);
