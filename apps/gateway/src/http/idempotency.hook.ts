import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, invalidInput } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import {
  fingerprint,
  idempotencyKeyProblem,
  isReplayable,
  type RequestFingerprint,
} from '../domain/idempotency.js';
import type { IdempotencyStore } from '../store/idempotency.repository.js';
import { HttpError } from './error-mapping.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** Response headers kept with a stored response and replayed with it. */
const KEPT_HEADERS = ['content-type', 'location'];

const kState = Symbol('sluice.idempotency');

interface State {
  key: string;
  request: RequestFingerprint;
  claimed: boolean;
  finished: boolean;
}

type WithState = FastifyRequest & { [kState]?: State };

/** Whose keys a request's key is among: the agent's own (agent routes), else the platform's. */
function idempotencyScope(request: FastifyRequest): string {
  return request.agent?.id ?? request.platform.id;
}

/**
 * `Idempotency-Key` on POST routes of the authenticated API, scoped to the
 * platform:
 * - preValidation: checks the key (1..255 visible ASCII) and fingerprints the
 *   request (method, path with query, SHA-256 of the canonical JSON body);
 * - preHandler (after auth and body validation, so a rejected request claims
 *   nothing): claims the key. A completed key with the same fingerprint replays
 *   its response (`Idempotent-Replayed: true`); another fingerprint is 422
 *   IDEMPOTENCY_KEY_REUSED; a key still in flight is 409
 *   IDEMPOTENCY_KEY_IN_PROGRESS;
 * - onSend: stores the response before it leaves (status < 500, not 429), or
 *   releases the claim (5xx, 429, 400 and the rest of isReplayable) so the same key can be retried.
 * A process that dies mid-request leaves a claim that expires after
 * IDEMPOTENCY_LEASE_MS; then a retry with the same request takes it over.
 */
export function registerIdempotency(scope: FastifyInstance, store: IdempotencyStore, logger: Logger): void {
  scope.addHook('preValidation', async (request: FastifyRequest) => {
    // Unauthenticated routes (device-code redeem) have no caller to scope a key to.
    if (request.method !== 'POST' || request.routeOptions.config.auth === 'none') return;
    const raw = request.headers['idempotency-key'];
    if (raw === undefined) return;
    const key = Array.isArray(raw) ? raw[0]! : raw;
    const problem = Array.isArray(raw) && raw.length > 1 ? 'must be sent once' : idempotencyKeyProblem(key);
    if (problem) throw invalidInput([{ field: IDEMPOTENCY_HEADER, message: problem }]);
    (request as WithState)[kState] = {
      key,
      request: fingerprint(request.method, request.url, request.body),
      claimed: false,
      finished: false,
    };
  });

  scope.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const state = (request as WithState)[kState];
    if (!state) return;
    let outcome;
    try {
      outcome = await store.claim(idempotencyScope(request), state.key, state.request, request.id);
    } catch (err) {
      logger.error({ err }, 'idempotency store unavailable');
      throw new DomainError(
        'UNAVAILABLE',
        'SERVICE_UNAVAILABLE',
        'The service is temporarily unavailable; retry later',
      );
    }
    switch (outcome.kind) {
      case 'claimed':
        state.claimed = true;
        return;
      case 'replay':
        reply.code(outcome.status).headers({ ...outcome.headers, [REPLAYED_HEADER]: 'true' });
        return reply.send(outcome.body);
      case 'mismatch':
        throw new HttpError(
          422,
          'IDEMPOTENCY_KEY_REUSED',
          outcome.reason === 'path'
            ? 'This Idempotency-Key was already used for a request to another endpoint'
            : 'This Idempotency-Key was already used with a different request body',
        );
      case 'in_progress':
        throw new HttpError(
          409,
          'IDEMPOTENCY_KEY_IN_PROGRESS',
          'A request with this Idempotency-Key is still being processed; retry later',
          undefined,
          {
            'retry-after': '1',
          },
        );
    }
  });

  scope.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const state = (request as WithState)[kState];
    if (!state?.claimed || state.finished) return payload;
    state.finished = true;
    const status = reply.statusCode;
    const storable =
      payload === null || payload === undefined || typeof payload === 'string' || Buffer.isBuffer(payload);
    try {
      if (isReplayable(status) && storable) {
        const headers: Record<string, string> = {};
        for (const h of KEPT_HEADERS) {
          const v = reply.getHeader(h);
          if (v !== undefined) headers[h] = String(v);
        }
        await store.complete(idempotencyScope(request), state.key, request.id, {
          status,
          headers,
          body: payload === null || payload === undefined ? '' : payload.toString(),
        });
      } else {
        await store.release(idempotencyScope(request), state.key, request.id);
      }
    } catch (err) {
      // The operation happened; the response still goes out. The claim expires after the lease.
      logger.error({ err, status }, 'could not record the Idempotency-Key outcome');
    }
    return payload;
  });

  // Safety net: a claimed request that ended without onSend (hijacked or torn down).
  scope.addHook('onResponse', async (request: FastifyRequest) => {
    const state = (request as WithState)[kState];
    if (!state?.claimed || state.finished) return;
    state.finished = true;
    await store
      .release(idempotencyScope(request), state.key, request.id)
      .catch((err: unknown) => logger.error({ err }, 'could not release an Idempotency-Key'));
  });
}
