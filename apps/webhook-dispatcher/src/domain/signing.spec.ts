import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { randomBytes } from 'node:crypto';
import { signWebhook } from './signing.js';

const secret = () => `whsec_${randomBytes(24).toString('base64')}`;

describe('signWebhook', () => {
  it('produces headers the official verifier accepts, one v1 entry per secret', () => {
    const current = secret();
    const previous = secret();
    const body = '{"id":"Webhook:1","type":"TEST","timestamp":"2025-01-01T00:00:00Z","data":{}}';
    const h = signWebhook([current, previous], 'Webhook:1', new Date(), body);
    expect(h['webhook-signature'].split(' ')).toHaveLength(2);
    expect(h['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+ v1,[A-Za-z0-9+/=]+$/);
    expect(new Webhook(current).verify(body, { ...h })).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, { ...h })).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret()).verify(body, { ...h })).toThrow(/No matching signature/);
    expect(() => new Webhook(current).verify(body.replace('TEST', 'TESX'), { ...h })).toThrow();
  });

  it('refuses to sign without a secret', () => {
    expect(() => signWebhook([], 'Webhook:1', new Date(), '{}')).toThrow();
  });
});
