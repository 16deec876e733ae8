import type { identity } from '@sluice/contracts';
import type { PromiseClient } from '@sluice/rpc';
import { isDomainError } from '@sluice/core';

/** Where and how a platform's webhooks are sent. */
export interface WebhookTarget {
  /** Absent when the platform has not configured an endpoint (or no longer exists). */
  endpoint?: string;
  /** `whsec_` secrets, current first (more than one during a rotation). */
  secrets: string[];
  /** Why there is no endpoint, for the record. */
  missingReason?: string;
}

/** Looks up a platform's webhook target (identity owns endpoints and secrets). */
export interface WebhookTargetSource {
  get(platformId: string): Promise<WebhookTarget>;
}

/**
 * Reads targets from identity's `GetWebhookTarget`. An unknown platform has no
 * target; transport failures (identity down, deadline) are thrown so callers
 * retry later without counting an attempt.
 */
export class IdentityWebhookTargets implements WebhookTargetSource {
  constructor(
    private readonly client: Pick<PromiseClient<identity.IdentityServiceClient>, 'getWebhookTarget'>,
  ) {}

  async get(platformId: string): Promise<WebhookTarget> {
    try {
      const res = await this.client.getWebhookTarget({ platformId });
      const endpoint = res.webhookEndpoint?.trim();
      if (!endpoint) return { secrets: res.signingSecrets, missingReason: 'no webhook endpoint configured' };
      // Never send unsigned webhooks: treat it as identity not being ready (retried later).
      if (res.signingSecrets.length === 0)
        throw new Error('identity returned a webhook endpoint without signing secrets');
      return { endpoint, secrets: res.signingSecrets };
    } catch (err) {
      if (isDomainError(err) && err.kind === 'NOT_FOUND')
        return { secrets: [], missingReason: 'platform not found' };
      throw err;
    }
  }
}
