import { Type, grpcClientConfig } from '@sluice/config';
import { defineService, masterKeyConfig, type ServiceConfig } from '@sluice/runtime';
import { migrations } from './store/migrations.js';
import { composeWalletAuth } from './compose.js';
import { WALLET_KEYRING } from './domain/crypto/key-custody.js';
import { rewrapWalletKeys } from './store/rewrap.js';

const config = Type.Object({
  ...grpcClientConfig('identity'),
  ...masterKeyConfig(WALLET_KEYRING, 'wallet mnemonics'),
  WALLET_EXPORT_SIGNING_KEY: Type.Optional(Type.String({ description: '64-hex P-256 key signing production export bundles; production exports are refused without it' })),
  WALLET_SESSION_TTL_SECONDS: Type.Integer({ default: 900, minimum: 60, maximum: 86400, description: 'lifetime of embedded-wallet sessions' }),
  SMTP_URL: Type.Optional(Type.String({ description: 'nodemailer SMTP URL for OTP emails; unset: a capturing transport (local runs only)' })),
  SMTP_FROM: Type.String({ default: 'Sluice <no-reply@sluice.local>', description: 'From: of OTP emails' }),
});

/** The validated configuration of wallet-auth. */
export type WalletAuthConfig = ServiceConfig<typeof config>;

/** The wallet-auth service: embedded-wallet credentials, sessions, signed retries and key custody. */
export const walletAuthService = defineService({
  name: 'wallet-auth',
  schema: 'wallet_auth',
  domain: 'wallet_auth',
  config,
  migrations,
  compose: composeWalletAuth,
  commands: { rewrap: rewrapWalletKeys },
});
