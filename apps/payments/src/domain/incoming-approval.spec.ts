import { describe, expect, it } from 'vitest';
import { asksPlatform, judgeAnswer } from './incoming-approval.js';

const responded = (responseStatus: number, body?: unknown) => ({
  outcome: 'RESPONDED' as const,
  responseStatus,
  ...(body !== undefined ? { responseBody: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
});

describe('incoming approval: who is asked', () => {
  it('asks a platform with an endpoint at or above its threshold, or always without one', () => {
    const policy = { hasWebhookEndpoint: true, thresholds: { USD: 1000n } };
    expect(asksPlatform(policy, 'USD', 999n)).toBe(false);
    expect(asksPlatform(policy, 'USD', 1000n)).toBe(true);
    expect(asksPlatform(policy, 'EUR', 1n)).toBe(true);
  });

  it('asks nobody without an endpoint', () => {
    expect(asksPlatform({ hasWebhookEndpoint: false, thresholds: {} }, 'USD', 10n ** 15n)).toBe(false);
  });
});

describe('incoming approval: what an answer means', () => {
  it('any 2xx but 202 approves; 202 defers', () => {
    for (const s of [200, 201, 204, 299]) expect(judgeAnswer(responded(s), [])).toEqual({ kind: 'APPROVE' });
    expect(judgeAnswer(responded(202), [])).toEqual({ kind: 'DEFER' });
  });

  it('a 2xx without the mandatory requested receiver fields is a webhook error; with them it approves with them', () => {
    const requested = [
      { name: 'NATIONALITY', mandatory: true },
      { name: 'POSTAL_ADDRESS', mandatory: false },
    ];
    expect(judgeAnswer(responded(200), requested)).toMatchObject({ kind: 'WEBHOOK_ERROR' });
    expect(judgeAnswer(responded(200, 'not json'), requested)).toMatchObject({ kind: 'WEBHOOK_ERROR' });
    expect(
      judgeAnswer(responded(200, { receiverCustomerInfo: { FULL_NAME: 'x' } }), requested),
    ).toMatchObject({
      kind: 'WEBHOOK_ERROR',
      detail: expect.stringContaining('NATIONALITY'),
    });
    expect(judgeAnswer(responded(200, { receiverCustomerInfo: { NATIONALITY: 'US' } }), requested)).toEqual({
      kind: 'APPROVE',
      receiverCustomerInfo: { NATIONALITY: 'US' },
    });
  });

  it('403 rejects with the body reason; 422 rejects naming the required fields', () => {
    expect(judgeAnswer(responded(403, { reason: 'RESTRICTED_JURISDICTION' }), [])).toEqual({
      kind: 'REJECT',
      reason: 'RESTRICTED_JURISDICTION',
    });
    expect(judgeAnswer(responded(403), [])).toEqual({ kind: 'REJECT', reason: 'REJECTED_BY_PLATFORM' });
    expect(judgeAnswer(responded(422, { requiredFields: ['TAX_ID', 3, 'BIRTH_DATE'] }), [])).toEqual({
      kind: 'REJECT',
      reason: 'COUNTERPARTY_INFORMATION_REQUIRED: TAX_ID, BIRTH_DATE',
    });
  });

  it('any other status, no response, or no answer in time fails the payment', () => {
    for (const s of [100, 301, 400, 401, 404, 409, 410, 500, 503])
      expect(judgeAnswer(responded(s), []), String(s)).toMatchObject({ kind: 'WEBHOOK_ERROR' });
    expect(judgeAnswer({ outcome: 'NO_RESPONSE', error: 'ECONNREFUSED' }, [])).toEqual({
      kind: 'WEBHOOK_ERROR',
      detail: 'ECONNREFUSED',
    });
    expect(judgeAnswer({ outcome: 'TIMED_OUT' }, [])).toEqual({ kind: 'TIMED_OUT' });
    expect(judgeAnswer({ outcome: 'NO_ENDPOINT' }, [])).toEqual({ kind: 'APPROVE' });
  });
});
