import { createRpcClient } from '@sluice/rpc';
import { common, identity } from '@sluice/contracts';
import { formatCredential, type Credential, type PlatformEnvironment } from './credentials.js';

export type CredentialSource = 'env' | 'option' | 'local-file' | 'generated';

/** A platform whose API credential was ensured through identity. */
export interface BootstrappedPlatform extends Credential {
  environment: PlatformEnvironment;
  platformId: string;
  /** True when the platform was created by this call (false when it already existed). */
  created: boolean;
  /** Where the credential came from. */
  source: CredentialSource;
  /** `Basic <base64>` header value. */
  authorization: string;
}

/**
 * Makes sure a platform of the environment exists with exactly this credential
 * (identity EnsurePlatformCredential; idempotent). The same token id with a
 * different secret is refused by identity (FAILED_PRECONDITION) and reported
 * as such.
 */
export async function ensurePlatformCredential(
  identityAddress: string,
  wanted: Credential & { environment: PlatformEnvironment; source?: CredentialSource },
  opts: {
    platformName?: string;
    deadlineMs?: number;
    /** The operator's flag of a platform this call creates: it verifies its own customers. */
    isRegulatedFinancialInstitution?: boolean;
  } = {},
): Promise<BootstrappedPlatform> {
  const client = createRpcClient(identity.IdentityServiceClient, identityAddress, {
    defaultDeadlineMs: opts.deadlineMs ?? 15_000,
  });
  try {
    let res: identity.EnsurePlatformCredentialResponse;
    try {
      res = await client.ensurePlatformCredential({
        environment:
          wanted.environment === 'SANDBOX' ? common.Environment.SANDBOX : common.Environment.PRODUCTION,
        tokenId: wanted.tokenId,
        clientSecret: wanted.clientSecret,
        platformName:
          opts.platformName ??
          (wanted.environment === 'SANDBOX' ? 'Sandbox platform' : 'Production platform'),
        ...(opts.isRegulatedFinancialInstitution ? { isRegulatedFinancialInstitution: true } : {}),
      });
    } catch (err) {
      const e = err as { kind?: string; code?: string; message?: string };
      const conflict = e.kind === 'FAILED_PRECONDITION' || /FAILED_PRECONDITION/.test(String(e.code));
      throw new Error(
        `could not ensure the ${wanted.environment.toLowerCase()} platform credential ${wanted.tokenId}: ` +
          (conflict
            ? 'that token id already exists with a different secret'
            : `${e.code ?? 'error'}: ${e.message}`),
      );
    }
    if (!res.platform?.id) throw new Error('identity EnsurePlatformCredential returned no platform');
    return {
      tokenId: wanted.tokenId,
      clientSecret: wanted.clientSecret,
      environment: wanted.environment,
      platformId: res.platform.id,
      created: res.created,
      source: wanted.source ?? 'option',
      authorization: `Basic ${Buffer.from(formatCredential(wanted)).toString('base64')}`,
    };
  } finally {
    client.close();
  }
}
