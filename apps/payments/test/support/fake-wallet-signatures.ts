import { DomainError, newId } from '@sluice/core';
import type { SigningChallenge, WalletSignatures } from '../../src/index.js';

/**
 * The wallet-auth signed retry in memory: single-use signing requests; the valid stamp of a
 * request is `stamp:<requestId>`; every refusal is a 401 DomainError with wallet-auth's code.
 */
export class FakeWalletSignatures implements WalletSignatures {
  readonly requests = new Map<string, { accountId: string; bodyJson: string; used: boolean }>();
  verifyCalls = 0;

  async challenge(_p: string, accountId: string, bodyJson: string): Promise<SigningChallenge> {
    const requestId = newId('Request');
    this.requests.set(requestId, { accountId, bodyJson, used: false });
    const expiresAt = new Date(Date.now() + 5 * 60_000);
    return { requestId, payloadToSign: JSON.stringify({ requestId, accountId, bodyJson }), expiresAt };
  }

  async verify(
    _p: string,
    accountId: string,
    signed: { bodyJson: string; signature?: string; requestId?: string },
  ): Promise<void> {
    this.verifyCalls += 1;
    const deny = (code: string) =>
      new DomainError('UNAUTHENTICATED', code, 'Invalid Service-Wallet-Signature', {
        reason: 'Invalid Service-Wallet-Signature',
      });
    if (!signed.signature) throw deny('WALLET_SIGNATURE_MISSING');
    const r = signed.requestId ? this.requests.get(signed.requestId) : undefined;
    if (!r) throw deny('SIGNING_REQUEST_UNKNOWN');
    if (r.accountId !== accountId) throw deny('SIGNING_REQUEST_MISMATCH');
    if (r.used) throw deny('SIGNING_REQUEST_REUSED');
    if (r.bodyJson !== signed.bodyJson) throw deny('SIGNED_BODY_MISMATCH');
    if (signed.signature !== `stamp:${signed.requestId}`) throw deny('WALLET_SIGNATURE_INVALID');
    r.used = true;
  }
}
