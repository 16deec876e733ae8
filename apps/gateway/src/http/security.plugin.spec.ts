import { describe, expect, it } from 'vitest';
import { ConfigError } from '@sluice/config';
import type { FastifyRequest } from 'fastify';
import { parseAllowedOrigins, SECURITY_HEADERS, SecurityHeaders } from './security.plugin.js';

function problems(value: string): string[] {
  try {
    parseAllowedOrigins(value);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems.map((p) => {
      expect(p.variable).toBe('CORS_ALLOWED_ORIGINS');
      return p.message;
    });
  }
  throw new Error(`${value} was accepted`);
}

describe('CORS_ALLOWED_ORIGINS', () => {
  it('unset or blank: no origin (CORS closed)', () => {
    expect(parseAllowedOrigins(undefined)).toEqual([]);
    expect(parseAllowedOrigins('  ')).toEqual([]);
  });

  it('exact https origins, and http on loopback hosts, trimmed and deduplicated', () => {
    expect(
      parseAllowedOrigins(
        'https://app.example.com, https://admin.example.com:8443,http://localhost:3000,http://127.0.0.1:5173,http://[::1]:8080,https://app.example.com',
      ),
    ).toEqual([
      'https://app.example.com',
      'https://admin.example.com:8443',
      'http://localhost:3000',
      'http://127.0.0.1:5173',
      'http://[::1]:8080',
    ]);
  });

  it('refuses plain http off loopback, naming each bad entry', () => {
    const p = problems('https://ok.example.com,http://app.example.com,http://10.0.0.1');
    expect(p).toHaveLength(2);
    expect(p[0]).toMatch(/"http:\/\/app\.example\.com" must use https/);
    expect(p[1]).toMatch(/"http:\/\/10\.0\.0\.1" must use https/);
  });

  it('refuses what a browser never sends as Origin: a path, a trailing slash, upper case, a default port, no scheme, an empty entry; and wildcards', () => {
    for (const bad of [
      'https://app.example.com/',
      'https://app.example.com/path',
      'https://App.example.com',
      'https://app.example.com:443',
      'app.example.com',
      'https://app.example.com,',
    ])
      expect(problems(bad).join(' '), bad).toMatch(/is not an origin/);
    for (const wildcard of ['*', 'https://*.example.com'])
      expect(problems(wildcard)[0]).toMatch(/wildcards are not accepted/);
  });
});

describe('SECURITY_HEADERS (helmet, computed once)', () => {
  it('are the headers of a JSON API, without Strict-Transport-Security or a banner', () => {
    expect(SECURITY_HEADERS).toMatchObject({
      'content-security-policy': "default-src 'none';frame-ancestors 'none'",
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
    });
    expect(Object.keys(SECURITY_HEADERS)).not.toContain('strict-transport-security');
    expect(Object.keys(SECURITY_HEADERS)).not.toContain('x-powered-by');
  });
});

describe('SecurityHeaders', () => {
  const over = (protocol: 'http' | 'https') => ({ protocol }) as FastifyRequest;

  it('adds Strict-Transport-Security with the configured max-age only to requests Fastify sees as https', () => {
    const headers = new SecurityHeaders(600);
    expect(headers.for(over('https'))).toEqual({
      ...SECURITY_HEADERS,
      'strict-transport-security': 'max-age=600',
    });
    expect(headers.for(over('http'))).toEqual(SECURITY_HEADERS);
  });

  it('max-age 0 is sent as such (it tells browsers to forget the policy)', () => {
    expect(new SecurityHeaders(0).for(over('https'))['strict-transport-security']).toBe('max-age=0');
  });
});
