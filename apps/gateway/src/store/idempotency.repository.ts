import type { MikroORM } from '@sluice/store';
import {
  decide,
  type ClaimOutcome,
  type IdempotencyRecord,
  type RequestFingerprint,
} from '../domain/idempotency.js';

/** A response kept for replay. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Idempotency keys, scoped to a platform. `claim` atomically takes a key (or
 * says why not); the owner then either `complete`s it with the response or
 * `release`s it (5xx, so the client may retry).
 */
export interface IdempotencyStore {
  claim(
    platformId: string,
    key: string,
    request: RequestFingerprint,
    ownerRequestId: string,
  ): Promise<ClaimOutcome>;
  complete(platformId: string, key: string, ownerRequestId: string, response: StoredResponse): Promise<void>;
  release(platformId: string, key: string, ownerRequestId: string): Promise<void>;
  /** Deletes expired keys; returns how many. */
  purgeExpired(): Promise<number>;
}

export interface IdempotencyTimes {
  /** How long a completed key is replayed. */
  ttlMs: number;
  /** How long an in-flight claim holds before it counts as abandoned (crashed process). */
  leaseMs: number;
}

interface Row {
  request_method: string;
  request_path: string;
  request_hash: string;
  state: 'IN_PROGRESS' | 'COMPLETED';
  owner_request_id: string;
  response_status: number | null;
  response_headers: Record<string, string> | string | null;
  response_body: string | null;
}

function toRecord(r: Row): IdempotencyRecord {
  const headers =
    typeof r.response_headers === 'string'
      ? (JSON.parse(r.response_headers) as Record<string, string>)
      : r.response_headers;
  return {
    method: r.request_method,
    path: r.request_path,
    bodyHash: r.request_hash,
    state: r.state,
    ownerRequestId: r.owner_request_id,
    ...(r.response_status !== null ? { responseStatus: r.response_status } : {}),
    ...(headers ? { responseHeaders: headers } : {}),
    ...(r.response_body !== null ? { responseBody: r.response_body } : {}),
  };
}

/**
 * Postgres store (table `gateway.idempotency_keys`, primary key
 * (platform_id, idempotency_key)). The claim is one INSERT .. ON CONFLICT: the
 * unique key decides which of two concurrent requests runs. An expired row, or
 * an in-flight row whose lease ran out (its process died) with the same
 * fingerprint, is taken over by the same statement.
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly orm: MikroORM,
    private readonly times: IdempotencyTimes,
  ) {}

  private exec<T>(sql: string, params: unknown[]): Promise<T[]> {
    return this.orm.em.getConnection().execute<T[]>(sql, params, 'all');
  }

  async claim(
    platformId: string,
    key: string,
    req: RequestFingerprint,
    owner: string,
  ): Promise<ClaimOutcome> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const taken = await this.exec<{ owner_request_id: string }>(
        `INSERT INTO idempotency_keys AS k
           (platform_id, idempotency_key, request_method, request_path, request_hash, state, owner_request_id, locked_until, expires_at)
         VALUES (?, ?, ?, ?, ?, 'IN_PROGRESS', ?, now() + ? * interval '1 millisecond', now() + ? * interval '1 millisecond')
         ON CONFLICT (platform_id, idempotency_key) DO UPDATE SET
           request_method = EXCLUDED.request_method, request_path = EXCLUDED.request_path,
           request_hash = EXCLUDED.request_hash, state = 'IN_PROGRESS',
           owner_request_id = EXCLUDED.owner_request_id, locked_until = EXCLUDED.locked_until,
           response_status = NULL, response_headers = NULL, response_body = NULL,
           created_at = now(), completed_at = NULL, expires_at = EXCLUDED.expires_at
         WHERE k.expires_at <= now()
            OR (k.state = 'IN_PROGRESS' AND k.locked_until <= now()
                AND k.request_method = EXCLUDED.request_method AND k.request_path = EXCLUDED.request_path
                AND k.request_hash = EXCLUDED.request_hash)
         RETURNING owner_request_id`,
        [platformId, key, req.method, req.path, req.bodyHash, owner, this.times.leaseMs, this.times.ttlMs],
      );
      if (taken.length > 0) return { kind: 'claimed' };
      const rows = await this.exec<Row>(
        `SELECT request_method, request_path, request_hash, state, owner_request_id, response_status, response_headers, response_body
           FROM idempotency_keys WHERE platform_id = ? AND idempotency_key = ? AND expires_at > now()`,
        [platformId, key],
      );
      // Released or expired between the two statements: try to claim again.
      if (rows.length > 0) return decide(toRecord(rows[0]!), req);
    }
    return { kind: 'in_progress' };
  }

  async complete(platformId: string, key: string, owner: string, res: StoredResponse): Promise<void> {
    await this.exec(
      `UPDATE idempotency_keys
          SET state = 'COMPLETED', response_status = ?, response_headers = ?::jsonb, response_body = ?,
              completed_at = now(), expires_at = now() + ? * interval '1 millisecond'
        WHERE platform_id = ? AND idempotency_key = ? AND owner_request_id = ? AND state = 'IN_PROGRESS'
        RETURNING 1`,
      [res.status, JSON.stringify(res.headers), res.body, this.times.ttlMs, platformId, key, owner],
    );
  }

  async release(platformId: string, key: string, owner: string): Promise<void> {
    await this.exec(
      `DELETE FROM idempotency_keys
        WHERE platform_id = ? AND idempotency_key = ? AND owner_request_id = ? AND state = 'IN_PROGRESS'
        RETURNING 1`,
      [platformId, key, owner],
    );
  }

  async purgeExpired(): Promise<number> {
    let total = 0;
    for (;;) {
      const rows = await this.exec(
        `DELETE FROM idempotency_keys WHERE (platform_id, idempotency_key) IN (
           SELECT platform_id, idempotency_key FROM idempotency_keys
            WHERE expires_at <= now() AND (state = 'COMPLETED' OR locked_until <= now())
            ORDER BY expires_at LIMIT 1000 FOR UPDATE SKIP LOCKED)
         RETURNING 1`,
        [],
      );
      total += rows.length;
      if (rows.length < 1000) return total;
    }
  }
}

/**
 * In-process store for a gateway built without a database (tests of route
 * modules, a single local process). Not shared between replicas: production
 * passes the ORM and gets the Postgres store.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly rows = new Map<string, IdempotencyRecord & { lockedUntil: number; expiresAt: number }>();

  constructor(
    private readonly times: IdempotencyTimes,
    private readonly now: () => number = Date.now,
  ) {}

  private k(platformId: string, key: string): string {
    return `${platformId}\u0000${key}`;
  }

  async claim(
    platformId: string,
    key: string,
    req: RequestFingerprint,
    owner: string,
  ): Promise<ClaimOutcome> {
    const id = this.k(platformId, key);
    const now = this.now();
    const row = this.rows.get(id);
    const sameRequest =
      row && row.method === req.method && row.path === req.path && row.bodyHash === req.bodyHash;
    if (
      !row ||
      row.expiresAt <= now ||
      (row.state === 'IN_PROGRESS' && row.lockedUntil <= now && sameRequest)
    ) {
      this.rows.set(id, {
        ...req,
        state: 'IN_PROGRESS',
        ownerRequestId: owner,
        lockedUntil: now + this.times.leaseMs,
        expiresAt: now + this.times.ttlMs,
      });
      return { kind: 'claimed' };
    }
    return decide(row, req);
  }

  async complete(platformId: string, key: string, owner: string, res: StoredResponse): Promise<void> {
    const row = this.rows.get(this.k(platformId, key));
    if (!row || row.ownerRequestId !== owner || row.state !== 'IN_PROGRESS') return;
    Object.assign(row, {
      state: 'COMPLETED',
      responseStatus: res.status,
      responseHeaders: res.headers,
      responseBody: res.body,
      expiresAt: this.now() + this.times.ttlMs,
    });
  }

  async release(platformId: string, key: string, owner: string): Promise<void> {
    const id = this.k(platformId, key);
    const row = this.rows.get(id);
    if (row && row.ownerRequestId === owner && row.state === 'IN_PROGRESS') this.rows.delete(id);
  }

  async purgeExpired(): Promise<number> {
    const now = this.now();
    let n = 0;
    for (const [id, row] of this.rows) {
      if (row.expiresAt <= now && (row.state === 'COMPLETED' || row.lockedUntil <= now)) {
        this.rows.delete(id);
        n++;
      }
    }
    return n;
  }
}
