import { createRpcClient, implement } from '@sluice/rpc';
import { identity, walletAuth } from '@sluice/contracts';
import { keyringFromConfig, type Composition, type ServiceDeps } from '@sluice/runtime';
import type { WalletAuthConfig } from './service.js';
import { WalletAuthRepository } from './store/wallet-auth.repository.js';
import { WALLET_KEYRING, parseExportSigningKey } from './domain/crypto/index.js';
import { SigningService } from './app/signing.service.js';
import { CredentialsService } from './app/credentials.service.js';
import { IdentityPlatformDirectory } from './clients/identity-platforms.client.js';
import { JwksOidcVerifier } from './clients/oidc-jwks.client.js';
import { createOtpMailer } from './clients/otp.mailer.js';
import { walletAuthHandlers } from './rpc/wallet-auth.rpc.js';

/** The object graph of a running wallet-auth service. */
export interface WalletAuthGraph extends Composition {
  repo: WalletAuthRepository;
  signing: SigningService;
  credentials: CredentialsService;
}

/** The composition root of wallet-auth: every object of the service, built once. */
export function composeWalletAuth({ logger, orm, clock, config: c }: ServiceDeps<WalletAuthConfig>): WalletAuthGraph {
  const keyring = keyringFromConfig(c, WALLET_KEYRING);
  const exportSigningKey = c.WALLET_EXPORT_SIGNING_KEY ? parseExportSigningKey(c.WALLET_EXPORT_SIGNING_KEY) : undefined;
  const identityClient = createRpcClient(identity.IdentityServiceClient, c.IDENTITY_GRPC_URL);
  const mailer = createOtpMailer(c.SMTP_URL, c.SMTP_FROM, logger, { production: c.NODE_ENV === 'production' });
  const platforms = new IdentityPlatformDirectory(identityClient);
  const repo = new WalletAuthRepository(orm);
  const signing = new SigningService(repo, platforms, clock);
  const credentials = new CredentialsService({
    repo,
    signing,
    platforms,
    clock,
    logger,
    mailer,
    oidc: new JwksOidcVerifier(),
    keyring,
    ...(exportSigningKey ? { exportSigningKey } : {}),
    sessionTtlMs: c.WALLET_SESSION_TTL_SECONDS * 1000,
  });
  return {
    repo,
    signing,
    credentials,
    rpc: [
      implement<walletAuth.WalletAuthServiceServer>(
        walletAuth.WalletAuthServiceService,
        walletAuthHandlers({ credentials, signing }),
        logger,
        'sluice.wallet_auth.v1.WalletAuthService',
      ),
    ],
    close: () => {
      identityClient.close();
      mailer.close();
    },
  };
}
