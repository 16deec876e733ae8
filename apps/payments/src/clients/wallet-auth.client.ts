import { walletAuth } from '@sluice/contracts';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import type { SigningChallenge, WalletSignatures } from '../app/ports.js';

/**
 * The one client of payments to the wallet-auth service (`sluice.wallet_auth.v1.WalletAuthService`):
 * the signed retry (EXECUTE_QUOTE) of EMBEDDED_WALLET quote executions. wallet-auth's 401
 * DomainErrors pass through.
 */
export class WalletAuthClient implements WalletSignatures {
  private readonly client: PromiseClient<walletAuth.WalletAuthServiceClient>;

  constructor(address: string, deadlineMs = 5000) {
    this.client = createRpcClient(walletAuth.WalletAuthServiceClient, address, { defaultDeadlineMs: deadlineMs });
  }

  async challenge(platformId: string, accountId: string, bodyJson: string): Promise<SigningChallenge> {
    const { signingChallenge } = await this.client.createSigningRequest({
      platformId,
      accountId,
      action: walletAuth.SignedAction.EXECUTE_QUOTE,
      bodyJson,
    });
    const c = signingChallenge!;
    return { requestId: c.requestId, payloadToSign: c.payloadToSign, expiresAt: c.expiresAt! };
  }

  async verify(
    platformId: string,
    accountId: string,
    signed: { bodyJson: string; signature?: string; requestId?: string },
  ): Promise<void> {
    await this.client.verifySignedRequest({
      platformId,
      accountId,
      action: walletAuth.SignedAction.EXECUTE_QUOTE,
      signed,
    });
  }

  close(): void {
    this.client.close();
  }
}
