import { Webhook } from 'standardwebhooks';

/** Headers of a webhook request signed per the Standard Webhooks specification. */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs `payload` with every secret (`whsec_<base64>`), current first: the
 * `webhook-signature` header lists one `v1,<base64 HMAC-SHA256>` per secret,
 * space separated, so a receiver still holding the previous secret during a
 * rotation verifies too. Signed content is `<id>.<unix seconds>.<payload>`.
 */
export function signWebhook(
  secrets: readonly string[],
  webhookId: string,
  at: Date,
  payload: string,
): SignedHeaders {
  if (secrets.length === 0) throw new Error('no signing secret');
  const signatures = secrets.map((s) => new Webhook(s).sign(webhookId, at, payload));
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': [...new Set(signatures)].join(' '),
  };
}
