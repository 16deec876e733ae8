import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  decide,
  fingerprint,
  idempotencyKeyProblem,
  isReplayable,
  type IdempotencyRecord,
} from './idempotency.js';

describe('idempotency rules', () => {
  it('hashes bodies independently of key order, but not of values', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}',
    );
    expect(fingerprint('POST', '/p', { a: 1, b: 2 }).bodyHash).toBe(
      fingerprint('POST', '/p', { b: 2, a: 1 }).bodyHash,
    );
    expect(fingerprint('POST', '/p', { a: 1 }).bodyHash).not.toBe(
      fingerprint('POST', '/p', { a: '1' }).bodyHash,
    );
    expect(fingerprint('POST', '/p', undefined).bodyHash).not.toBe(fingerprint('POST', '/p', {}).bodyHash);
  });

  it('accepts 1..255 visible ASCII characters', () => {
    expect(idempotencyKeyProblem('a')).toBeUndefined();
    expect(idempotencyKeyProblem('x'.repeat(255))).toBeUndefined();
    expect(idempotencyKeyProblem('')).toMatch(/1 to 255/);
    expect(idempotencyKeyProblem('x'.repeat(256))).toMatch(/1 to 255/);
    expect(idempotencyKeyProblem('a b')).toMatch(/visible ASCII/);
    expect(idempotencyKeyProblem('clé')).toMatch(/visible ASCII/);
  });

  const req = fingerprint('POST', '/2025-10-13/customers', { a: 1 });
  const done: IdempotencyRecord = {
    ...req,
    state: 'COMPLETED',
    ownerRequestId: 'r1',
    responseStatus: 201,
    responseHeaders: { 'content-type': 'application/json' },
    responseBody: '{"id":1}',
  };

  it('replays a completed key with the same request', () => {
    expect(decide(done, req)).toEqual({
      kind: 'replay',
      status: 201,
      headers: { 'content-type': 'application/json' },
      body: '{"id":1}',
    });
  });

  it('rejects another path or method before another body', () => {
    expect(decide(done, { ...req, path: '/2025-10-13/tokens' })).toEqual({
      kind: 'mismatch',
      reason: 'path',
    });
    expect(decide(done, { ...req, method: 'PATCH' })).toEqual({ kind: 'mismatch', reason: 'path' });
    expect(decide(done, { ...req, bodyHash: 'other' })).toEqual({ kind: 'mismatch', reason: 'body' });
    expect(decide({ ...done, state: 'IN_PROGRESS' }, { ...req, bodyHash: 'other' })).toEqual({
      kind: 'mismatch',
      reason: 'body',
    });
  });

  it('reports a key in flight', () => {
    expect(decide({ ...done, state: 'IN_PROGRESS' }, req)).toEqual({ kind: 'in_progress' });
  });

  it('keeps 2xx and 4xx, releases 5xx, 429, a 202 signing challenge, a 401 refused signature and a 400 invalid input', () => {
    expect([200, 201, 403, 404, 409, 422].every(isReplayable)).toBe(true);
    expect([202, 400, 401, 429, 500, 502, 503].some(isReplayable)).toBe(false);
  });
});
