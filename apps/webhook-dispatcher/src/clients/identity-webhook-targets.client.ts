import type { identity } from '@sluice/contracts';
import { environmentFromPb, type PromiseClient } from '@sluice/rpc';
import { isDomainError } from '@sluice/core';
import type { WebhookTarget, WebhookTargetSource } from '../app/ports.js';

/**
 * Webhook targets from identity's `GetWebhookTarget`. An unknown platform has no target;
 * transport failures (identity down, deadline) are thrown so callers retry later without
 * counting an attempt.
 */
export class IdentityWebhookTargets implements WebhookTargetSource {
  constructor(
    private readonly client: Pick<PromiseClient<identity.IdentityServiceClient>, 'getWebhookTarget'>,
  ) {}

  async get(platformId: string): Promise<WebhookTarget> {
    try {
      const res = await this.client.getWebhookTarget({ platformId });
      const endpoint = res.webhookEndpoint?.trim();
      const environment = environmentFromPb(res.environment);
      const env = environment ? { environment } : {};
      if (!endpoint)
        return { secrets: res.signingSecrets, missingReason: 'no webhook endpoint configured', ...env };
      // Never send unsigned webhooks: treat it as identity not being ready (retried later).
      if (res.signingSecrets.length === 0)
        throw new Error('identity returned a webhook endpoint without signing secrets');
      return { endpoint, secrets: res.signingSecrets, ...env };
    } catch (err) {
      if (isDomainError(err) && err.kind === 'NOT_FOUND')
        return { secrets: [], missingReason: 'platform not found' };
      throw err;
    }
  }
}
