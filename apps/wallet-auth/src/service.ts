import { Type } from '@sluice/config';
import { implement } from '@sluice/rpc';
import { walletAuth } from '@sluice/contracts';
import type { ServiceSpec } from '@sluice/runtime';
import { migrations } from './store/migrations.js';

const config = Type.Object({});

/** The wallet-auth service: embedded-wallet credentials, sessions, signing requests and key custody. Later issues add its API; today it serves health. */
export const walletAuthService: ServiceSpec<typeof config> = {
  name: 'wallet-auth',
  schema: 'wallet_auth',
  domain: 'wallet_auth',
  config,
  entities: [],
  migrations,
  rpc: ({ logger }) => [
    implement<walletAuth.WalletAuthServiceServer>(walletAuth.WalletAuthServiceService, {}, logger, 'sluice.wallet_auth.v1.WalletAuthService'),
  ],
};
