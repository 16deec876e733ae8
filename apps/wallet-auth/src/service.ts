import { Type, grpcClientConfig } from '@sluice/config';
import { defineService, type ServiceConfig } from '@sluice/runtime';
import { migrations } from './store/migrations.js';
import { composeWalletAuth } from './compose.js';

const config = Type.Object({
  ...grpcClientConfig('identity'),
  WALLET_MASTER_KEY: Type.String({ minLength: 1, description: 'base64 32-byte key sealing wallet mnemonics (required; keep in a secret store)' }),
  WALLET_MASTER_KEYS_RETIRED: Type.Optional(Type.String({ description: 'comma-separated base64 keys that only open envelopes sealed before a rotation' })),
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
});
