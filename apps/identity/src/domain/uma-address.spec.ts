import { describe, expect, it } from 'vitest';
import { generateUmaAddress, normalizeUmaAddress, normalizeUmaDomain } from './uma-address.js';
import { FieldErrors } from '@sluice/core';

describe('UMA addresses', () => {
  it('accepts $user@domain in any case and stores it in lower case', () => {
    const p = new FieldErrors();
    expect(normalizeUmaAddress(p, 'u', '$Jane.Doe+pay_1-x@Pay.Example.COM')).toBe(
      '$jane.doe+pay_1-x@pay.example.com',
    );
    expect(p.any).toBe(false);
  });

  it.each([
    'jane@example.com',
    '$@example.com',
    '$jane@',
    '$jane@localhost',
    '$ja ne@example.com',
    '$jane@exa_mple.com',
    `$${'a'.repeat(65)}@example.com`,
    '$a@b@c.com',
  ])('refuses %s', (value) => {
    const p = new FieldErrors();
    expect(normalizeUmaAddress(p, 'umaAddress', value)).toBeUndefined();
    expect(p.errors.map((e) => e.field)).toEqual(['umaAddress']);
  });

  it('generates valid, distinct addresses on the given domain', () => {
    const a = generateUmaAddress('pay.example.com');
    const b = generateUmaAddress('pay.example.com');
    expect(a).not.toBe(b);
    const p = new FieldErrors();
    expect(normalizeUmaAddress(p, 'u', a)).toBe(a);
    expect(generateUmaAddress('d.example.com', (n) => Buffer.alloc(n, 0))).toBe(
      `$u${'a'.repeat(13)}@d.example.com`,
    );
  });

  it('validates UMA domains', () => {
    const p = new FieldErrors();
    expect(normalizeUmaDomain(p, 'umaDomain', 'Pay.Example.com')).toBe('pay.example.com');
    expect(normalizeUmaDomain(p, 'umaDomain', 'https://pay.example.com')).toBeUndefined();
    expect(normalizeUmaDomain(p, 'umaDomain', 'example')).toBeUndefined();
    expect(p.errors).toHaveLength(2);
  });
});
