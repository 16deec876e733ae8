import { DomainError, isDomainError, isId } from '@sluice/core';
import { common, identity } from '@sluice/contracts';
import type { Logger } from '@sluice/logging';
import { CredentialCache } from './credential.cache.js';
import type { AuthenticatedPlatform, GatewayClients, Permission } from './types.js';

/** The one 401 answer, whatever was wrong (missing, malformed, unknown, wrong secret, deleted). */
export const UNAUTHORIZED_BODY = Object.freeze({
  status: 401,
  code: 'UNAUTHORIZED',
  message: 'Invalid or missing API credentials',
});

/** Thrown for every authentication failure; rendered as UNAUTHORIZED_BODY with `WWW-Authenticate: Basic`. */
export class UnauthorizedError extends Error {
  constructor() {
    super(UNAUTHORIZED_BODY.message);
    this.name = 'UnauthorizedError';
  }
}

const MAX_SECRET_LENGTH = 1024;
const CREDENTIALS_RE =
  /^(Token:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}):([\s\S]+)$/;

/** `Basic base64(tokenId:secret)` → parts, or undefined when malformed. */
export function parseBasic(header: string | undefined): { tokenId: string; secret: string } | undefined {
  if (!header) return undefined;
  const m = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i.exec(header);
  if (!m) return undefined;
  // The token id itself contains a colon (`Token:<uuid>`), so it is matched by shape, not split at the first colon.
  const parts = CREDENTIALS_RE.exec(Buffer.from(m[1]!, 'base64').toString('utf8'));
  if (!parts) return undefined;
  const tokenId = parts[1]!;
  const secret = parts[2]!;
  if (secret.length > MAX_SECRET_LENGTH || !isId(tokenId, 'Token')) return undefined;
  return { tokenId, secret };
}

const PERMISSIONS: Record<string, Permission> = {
  [identity.Permission.VIEW]: 'VIEW',
  [identity.Permission.TRANSACT]: 'TRANSACT',
  [identity.Permission.MANAGE]: 'MANAGE',
};

/** Kinds of identity errors that mean "these credentials are not valid". */
const REJECTED = new Set([
  'UNAUTHENTICATED',
  'NOT_FOUND',
  'INVALID_ARGUMENT',
  'PERMISSION_DENIED',
  'FAILED_PRECONDITION',
]);

/**
 * Verifies HTTP Basic credentials with identity `AuthenticateToken`, through
 * the credential cache; concurrent requests with the same credentials share
 * one identity call. Identity being down is a 503, not a 401.
 */
export class Authenticator {
  private readonly inFlight = new Map<string, Promise<AuthenticatedPlatform>>();

  constructor(
    private readonly clients: Pick<GatewayClients, 'identity'>,
    readonly cache: CredentialCache,
    private readonly logger: Logger,
    private readonly deadlineMs: number,
  ) {}

  async authenticate(header: string | undefined): Promise<AuthenticatedPlatform> {
    const creds = parseBasic(header);
    if (!creds) throw new UnauthorizedError();
    const key = CredentialCache.key(creds.tokenId, creds.secret);
    const cached = this.cache.get(key);
    if (cached) return cached;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.verify(key, creds.tokenId, creds.secret).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async verify(key: string, tokenId: string, secret: string): Promise<AuthenticatedPlatform> {
    const since = Date.now();
    let res: identity.AuthenticateTokenResponse;
    try {
      res = await this.clients.identity.authenticateToken(
        { tokenId, clientSecret: secret },
        { deadlineMs: this.deadlineMs },
      );
    } catch (err) {
      if (isDomainError(err) && REJECTED.has(err.kind)) throw new UnauthorizedError();
      throw err;
    }
    const env = res.platform?.environment;
    if (
      !res.platform?.id ||
      (env !== common.Environment.SANDBOX && env !== common.Environment.PRODUCTION)
    ) {
      this.logger.error({ tokenId }, 'identity returned a platform without id or environment');
      throw new DomainError(
        'UNAVAILABLE',
        'SERVICE_UNAVAILABLE',
        'The service is temporarily unavailable; retry later',
      );
    }
    const platform: AuthenticatedPlatform = {
      id: res.platform.id,
      environment: env === common.Environment.SANDBOX ? 'SANDBOX' : 'PRODUCTION',
      tokenId: res.tokenId || tokenId,
      permissions: (res.permissions ?? [])
        .map((p) => PERMISSIONS[p])
        .filter((p): p is Permission => p !== undefined),
    };
    this.cache.set(key, platform, since);
    return platform;
  }
}
