import type { EntityManager } from '@sluice/store';

/** Issued hosted-KYC links: only a SHA-256 of each token is kept. */
export class KycLinkRepository {
  async insert(
    em: EntityManager,
    l: {
      tokenSha256: string;
      platformId: string;
      customerId: string;
      redirectUri?: string;
      expiresAt: Date;
      createdAt: Date;
    },
  ): Promise<void> {
    await em.execute(
      `INSERT INTO kyc_links (token_sha256, platform_id, customer_id, redirect_uri, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
      [l.tokenSha256, l.platformId, l.customerId, l.redirectUri ?? null, l.expiresAt, l.createdAt],
    );
  }
}
