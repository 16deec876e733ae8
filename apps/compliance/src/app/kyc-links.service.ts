import { createHash, randomBytes } from 'node:crypto';
import { FieldErrors, validIds, type Clock, type Environment } from '@sluice/core';
import { transactional, type MikroORM } from '@sluice/store';
import { customerNotFound, fail } from '../domain/errors.js';
import type { KycLinkRepository } from '../store/kyc-link.repository.js';
import type { CustomerDirectory, PlatformDirectory } from './ports.js';

/** A hosted KYC link (REST KycLinkResponse). */
export interface KycLink {
  kycUrl: string;
  expiresAt: Date;
  provider: 'SUMSUB';
  token?: string;
}

/** The deployment's part of hosted links (the platform's pattern comes from identity). */
export interface KycLinkSettings {
  /**
   * The pattern of sandbox platforms that set none: a stub page (SANDBOX_KYC_LINK_URL_TEMPLATE).
   * Production has no deployment-wide pattern: a production platform sets its own.
   */
  sandboxTemplate: string;
  ttlMs: number;
}

/**
 * Hosted KYC links: a fresh single-use token per call (only its SHA-256 is kept), placed into a
 * URL pattern with `{token}` (and optionally `{customerId}`, `{redirectUri}`), valid for `ttlMs`.
 * The pattern is the platform's `kycLinkUrlTemplate` (identity's platform config, validated there);
 * a sandbox platform without one gets the deployment's stub page; a production platform without one
 * is refused (KYC_LINK_NOT_CONFIGURED). The customer's kycStatus does not change.
 */
export class KycLinksService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly links: KycLinkRepository,
    private readonly customers: CustomerDirectory,
    private readonly platforms: PlatformDirectory,
    private readonly settings: KycLinkSettings,
  ) {}

  async create(
    platformId: string,
    environment: Environment,
    customerId: string,
    redirectUri: string | undefined,
  ): Promise<KycLink> {
    validIds(['platformId', platformId, 'Platform'], ['customerId', customerId, 'Customer']);
    if (redirectUri !== undefined && !/^https?:\/\/[^\s]+$/.test(redirectUri))
      new FieldErrors().add('redirectUri', 'must be an http:// or https:// URL').throwIfAny();
    const [customer, platformTemplate] = await Promise.all([
      this.customers.getCustomer(platformId, customerId),
      this.platforms.kycLinkUrlTemplate(platformId),
    ]);
    if (!customer || customer.deleted) throw customerNotFound();
    const template =
      platformTemplate ?? (environment === 'SANDBOX' ? this.settings.sandboxTemplate : undefined);
    if (!template)
      throw fail(
        'KYC_LINK_NOT_CONFIGURED',
        'Hosted KYC links are not configured for this platform: set kycLinkUrlTemplate (PATCH /config)',
      );
    const token = randomBytes(24).toString('base64url');
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + this.settings.ttlMs);
    await transactional(this.orm, (em) =>
      this.links.insert(em, {
        tokenSha256: createHash('sha256').update(token).digest('hex'),
        platformId,
        customerId,
        ...(redirectUri !== undefined ? { redirectUri } : {}),
        expiresAt,
        createdAt: now,
      }),
    );
    const kycUrl = template
      .replaceAll('{token}', token)
      .replaceAll('{customerId}', encodeURIComponent(customerId))
      .replaceAll('{redirectUri}', encodeURIComponent(redirectUri ?? ''));
    return { kycUrl, expiresAt, provider: 'SUMSUB', token };
  }
}
