import { randomBytes } from 'node:crypto';

/** How long a replaced webhook signing secret keeps signing deliveries after a rotation. */
export const WEBHOOK_SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

/** A Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface SigningSecret {
  secret: string;
  createdAt: Date;
  /** Absent on the current secret; set when a rotation replaced it. */
  expiresAt?: Date;
}

/**
 * The secrets deliveries are signed with at `now`: the current one first, then
 * the replaced ones still inside their grace period, newest first.
 */
export function activeSecrets(all: SigningSecret[], now: Date): SigningSecret[] {
  const current = all.filter((s) => !s.expiresAt);
  const previous = all
    .filter((s) => s.expiresAt && s.expiresAt.getTime() > now.getTime())
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  return [...current, ...previous];
}
