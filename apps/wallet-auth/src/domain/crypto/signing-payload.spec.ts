import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { bodyHash, buildPayloadToSign, canonicalJson, parsePayloadToSign } from './signing-payload.js';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

const input = {
  requestId: 'Request:7c4a8d09-ca37-4e3e-9e0d-8c2b3e9a1f21',
  action: 'EXPORT_WALLET' as const,
  accountId: 'InternalAccount:019542f5-b3e7-1d02-0000-000000000002',
  body: { clientPublicKey: '04' + 'ab'.repeat(64) },
  issuedAt: new Date('2026-05-13T12:00:00.000Z'),
  expiresAt: new Date('2026-05-13T12:05:00.000Z'),
};

describe('canonicalJson', () => {
  it('sorts keys recursively, keeps array order, drops undefined members, no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, 1, { z: null, y: 'é' }], c: true }, u: undefined })).toBe(
      '{"a":{"c":true,"d":[3,1,{"y":"é","z":null}]},"b":1}',
    );
  });

  it('serialises numbers and strings as JCS does', () => {
    expect(canonicalJson([1.0, -0, 1e21, 0.1, 'a"\\\n\u2028'])).toBe('[1,0,1e+21,0.1,"a\\"\\\\\\n\u2028"]');
    expect(canonicalJson({ '\u00e9': 1, z: 2, A: 3 })).toBe('{"A":3,"z":2,"é":1}');
  });

  it('refuses values JSON cannot represent', () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
    expect(() => canonicalJson(1n)).toThrow(TypeError);
    expect(() => canonicalJson({ at: new Date() })).toThrow(TypeError);
    expect(() => canonicalJson([undefined])).toThrow(TypeError);
  });
});

describe('bodyHash', () => {
  it('ignores key order and whitespace of the request body', () => {
    const a = JSON.parse('{"privateEnabled": true, "meta": {"b": 2, "a": 1}}');
    const b = JSON.parse('{"meta":{"a":1,"b":2},\n  "privateEnabled":true}');
    expect(bodyHash(a)).toBe(bodyHash(b));
    expect(bodyHash(a)).toBe(sha('{"meta":{"a":1,"b":2},"privateEnabled":true}'));
    expect(bodyHash({ ...a, privateEnabled: false })).not.toBe(bodyHash(a));
  });

  it('hashes an absent body as {}', () => {
    expect(bodyHash(undefined)).toBe(sha('{}'));
    expect(bodyHash(undefined)).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
  });
});

describe('buildPayloadToSign', () => {
  it('matches the documented fixed vector', () => {
    const payload = buildPayloadToSign(input);
    expect(payload).toBe(
      '{"accountId":"InternalAccount:019542f5-b3e7-1d02-0000-000000000002","action":"EXPORT_WALLET",' +
        `"bodySha256":"${sha(`{"clientPublicKey":"04${'ab'.repeat(64)}"}`)}",` +
        '"expiresAt":"2026-05-13T12:05:00.000Z","issuedAt":"2026-05-13T12:00:00.000Z","kind":"SLUICE_SIGNED_REQUEST_V1",' +
        '"requestId":"Request:7c4a8d09-ca37-4e3e-9e0d-8c2b3e9a1f21"}',
    );
    expect(sha(payload)).toBe(sha(buildPayloadToSign({ ...input, body: { ...input.body } })));
  });

  it('binds every field', () => {
    const base = buildPayloadToSign(input);
    expect(buildPayloadToSign({ ...input, body: { clientPublicKey: '04' + 'cd'.repeat(64) } })).not.toBe(
      base,
    );
    expect(buildPayloadToSign({ ...input, action: 'EXECUTE_QUOTE' })).not.toBe(base);
    expect(buildPayloadToSign({ ...input, accountId: 'InternalAccount:x' })).not.toBe(base);
    expect(buildPayloadToSign({ ...input, requestId: 'Request:y' })).not.toBe(base);
  });

  it('refuses invalid inputs', () => {
    expect(() => buildPayloadToSign({ ...input, action: 'TRANSFER_ALL' as never })).toThrow(/unknown action/);
    expect(() => buildPayloadToSign({ ...input, expiresAt: input.issuedAt })).toThrow(/expiresAt/);
    expect(() => buildPayloadToSign({ ...input, requestId: '' })).toThrow(/requestId/);
    expect(() => buildPayloadToSign({ ...input, issuedAt: new Date('nope') })).toThrow(/issuedAt/);
  });

  it('parses back only exact canonical payloads', () => {
    const payload = buildPayloadToSign(input);
    expect(parsePayloadToSign(payload)).toMatchObject({
      action: 'EXPORT_WALLET',
      bodySha256: bodyHash(input.body),
      expiresAt: '2026-05-13T12:05:00.000Z',
    });
    expect(parsePayloadToSign(JSON.stringify(JSON.parse(payload), null, 1))).toBeNull();
    expect(parsePayloadToSign(payload.replace('SLUICE_SIGNED_REQUEST_V1', 'OTHER'))).toBeNull();
    expect(parsePayloadToSign(payload.replace('"action":"EXPORT_WALLET",', ''))).toBeNull();
    expect(parsePayloadToSign('not json')).toBeNull();
  });
});
