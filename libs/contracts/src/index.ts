/**
 * Generated gRPC contracts (ts-proto, `@grpc/grpc-js` services), one namespace
 * per service package `sluice.<service>.v1`. Regenerate with `npm run generate`
 * (an Nx target cached on the proto files).
 */
export * as common from './gen/sluice/common/v1/common.js';
export * as identity from './gen/sluice/identity/v1/identity.js';
export * as accounts from './gen/sluice/accounts/v1/accounts.js';
export * as payments from './gen/sluice/payments/v1/payments.js';
export * as walletAuth from './gen/sluice/wallet_auth/v1/wallet_auth.js';
export * as compliance from './gen/sluice/compliance/v1/compliance.js';
export * as agents from './gen/sluice/agents/v1/agents.js';
export * as webhooks from './gen/sluice/webhooks/v1/webhooks.js';
