import { Type, grpcClientConfig } from '@sluice/config';
import { createRpcClient, implement } from '@sluice/rpc';
import { identity, walletAuth } from '@sluice/contracts';
import type { ServiceSpec } from '@sluice/runtime';
import { migrations } from './store/migrations.js';
import { WalletAuthRepository } from './store/wallet-auth.repository.js';
import { loadMasterKeyring, parseExportSigningKey } from './domain/crypto/index.js';
import { OidcVerifier } from './domain/oidc.js';
import { SigningService } from './app/signing.service.js';
import { CredentialsService } from './app/credentials.service.js';
import { createOtpMailer } from './mail/otp.mailer.js';
import { IdentityPlatformDirectory } from './rpc/platform.directory.js';
import { walletAuthHandlers } from './rpc/wallet-auth.rpc.js';

const config = Type.Object({
  IDENTITY_GRPC_URL: grpcClientConfig('identity').IDENTITY_GRPC_URL!,
  WALLET_MASTER_KEY: Type.String({ minLength: 1, description: 'base64 32-byte key sealing wallet mnemonics (required; keep in a secret store)' }),
  WALLET_MASTER_KEYS_RETIRED: Type.Optional(Type.String({ description: 'comma-separated base64 keys that only open envelopes sealed before a rotation' })),
  WALLET_EXPORT_SIGNING_KEY: Type.Optional(Type.String({ description: '64-hex P-256 key signing production export bundles; production exports are refused without it' })),
  WALLET_SESSION_TTL_SECONDS: Type.Integer({ default: 900, minimum: 60, maximum: 86400, description: 'lifetime of embedded-wallet sessions' }),
  SMTP_URL: Type.Optional(Type.String({ description: 'nodemailer SMTP URL for OTP emails; unset: a capturing transport (local runs only)' })),
  SMTP_FROM: Type.String({ default: 'Sluice <no-reply@sluice.local>', description: 'From: of OTP emails' }),
});

/** The wallet-auth service: embedded-wallet credentials, sessions, signed retries and key custody. */
export const walletAuthService: ServiceSpec<typeof config> = {
  name: 'wallet-auth',
  schema: 'wallet_auth',
  domain: 'wallet_auth',
  config,
  entities: [],
  migrations,
  rpc: ({ logger, orm, clock, config: c }) => {
    const keyring = loadMasterKeyring(c.WALLET_MASTER_KEY, c.WALLET_MASTER_KEYS_RETIRED);
    const exportSigningKey = c.WALLET_EXPORT_SIGNING_KEY ? parseExportSigningKey(c.WALLET_EXPORT_SIGNING_KEY) : undefined;
    const identityClient = createRpcClient(identity.IdentityServiceClient, c.IDENTITY_GRPC_URL);
    const repo = new WalletAuthRepository(orm);
    const signing = new SigningService(repo, clock);
    const credentials = new CredentialsService({
      repo,
      signing,
      clock,
      logger,
      mailer: createOtpMailer(c.SMTP_URL, c.SMTP_FROM, logger, { production: c.NODE_ENV === 'production' }),
      oidc: new OidcVerifier(),
      keyring,
      ...(exportSigningKey ? { exportSigningKey } : {}),
      sessionTtlMs: c.WALLET_SESSION_TTL_SECONDS * 1000,
    });
    return [
      implement<walletAuth.WalletAuthServiceServer>(
        walletAuth.WalletAuthServiceService,
        walletAuthHandlers({
          platforms: new IdentityPlatformDirectory(identityClient),
          credentials,
          signing,
          repoTx: (fn) => repo.tx(fn as never),
        }),
        logger,
        'sluice.wallet_auth.v1.WalletAuthService',
      ),
    ];
  },
};
