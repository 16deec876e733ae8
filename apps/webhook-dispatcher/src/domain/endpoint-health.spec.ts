import { describe, expect, it } from 'vitest';
import { disableReason } from './endpoint-health.js';

describe('endpoint health', () => {
  const now = new Date('2026-01-10T00:00:00Z');
  const hoursAgo = (h: number) => new Date(now.getTime() - h * 3_600_000);
  const span = 72 * 3_600_000;

  it('410 Gone disables at once, whatever came before', () => {
    expect(disableReason({ ok: false, status: 410 }, null, now, span)).toBe('the endpoint answered 410 Gone');
  });

  it('a failing endpoint is disabled once it has failed for the whole span, not before', () => {
    expect(disableReason({ ok: false, status: 500 }, hoursAgo(71), now, span)).toBeUndefined();
    expect(disableReason({ ok: false, status: 500 }, hoursAgo(72), now, span)).toMatch(
      /^every attempt failed for 72 h/,
    );
    expect(disableReason({ ok: false }, hoursAgo(100), now, span)).toMatch(/100 h/);
  });

  it('a success never disables', () => {
    expect(disableReason({ ok: true, status: 200 }, hoursAgo(100), now, span)).toBeUndefined();
  });
});
