import { pgTextArray, type MikroORM } from '@sluice/store';
import {
  decide,
  type ClaimOutcome,
  type IdempotencyRecord,
  type RequestFingerprint,
} from '../domain/idempotency.js';
import { GroupCommit } from './group-commit.js';

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
  platform_id: string;
  idempotency_key: string;
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

/** A key's row: its platform (or agent) and the key. */
interface KeyRef {
  platformId: string;
  key: string;
}

/** One write of a batch (`PostgresIdempotencyStore.write`). */
type Write =
  | (KeyRef & { kind: 'claim'; request: RequestFingerprint; owner: string })
  | (KeyRef & { kind: 'complete'; owner: string; response: StoredResponse })
  | (KeyRef & { kind: 'release'; owner: string });

const rowOf = (r: KeyRef): string => `${r.platformId}\u0000${r.key}`;

/** `?::text[]` parameters, one per column, from the operations' values. */
const columns = <T>(ops: readonly T[], ...fields: ((op: T) => string)[]): string[] =>
  fields.map((f) => pgTextArray(ops.map(f)));

/**
 * Postgres store (table `gateway.idempotency_keys`, primary key
 * (platform_id, idempotency_key)). The claim is an INSERT .. ON CONFLICT: the
 * unique key decides which of two concurrent requests runs. An expired row, or
 * an in-flight row whose lease ran out (its process died) with the same
 * fingerprint, is taken over by the same statement.
 *
 * Group commit: the claims, completions and releases of concurrent requests share one statement
 * (`GroupCommit`: one batch in flight, what arrives meanwhile goes with the next, a lone request at
 * once), so under load a commit and its WAL flush carry many keys. A batch holds a key once (a
 * key's later operation waits for the next batch, in order), at most 100 operations, and each kind
 * is one part of the statement: INSERT .. SELECT FROM unnest .. ON CONFLICT for the claims,
 * UPDATE .. FROM unnest for the completions, DELETE .. USING unnest for the releases. A claim that
 * did not take its key reads the key's row with the other such claims (one SELECT per batch) and
 * decides from it. A batch that fails runs its operations again one by one, so each request is
 * answered as its own statement would have answered it.
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  /** Claims (whether each took its key), completions and releases, batched. */
  private readonly writes = new GroupCommit<Write, boolean>({ run: (ops) => this.write(ops), rowOf });
  /** The live rows of keys a claim did not take, batched. */
  private readonly lookups = new GroupCommit<KeyRef, Row | undefined>({ run: (refs) => this.lookup(refs) });

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
      if (await this.writes.submit({ kind: 'claim', platformId, key, request: req, owner }))
        return { kind: 'claimed' };
      const row = await this.lookups.submit({ platformId, key });
      // Released or expired between the two statements: try to claim again.
      if (row) return decide(toRecord(row), req);
    }
    return { kind: 'in_progress' };
  }

  async complete(platformId: string, key: string, owner: string, response: StoredResponse): Promise<void> {
    await this.writes.submit({ kind: 'complete', platformId, key, owner, response });
  }

  async release(platformId: string, key: string, owner: string): Promise<void> {
    await this.writes.submit({ kind: 'release', platformId, key, owner });
  }

  /**
   * One batch of writes (distinct keys) in one statement, so one transaction: each kind present is
   * a data-modifying part of one WITH. Answers, per operation, whether it was a claim that took its key.
   */
  private async write(ops: readonly Write[]): Promise<boolean[]> {
    const claims = ops.filter((o) => o.kind === 'claim');
    const completions = ops.filter((o) => o.kind === 'complete');
    const releases = ops.filter((o) => o.kind === 'release');
    const parts: string[] = [];
    const params: unknown[] = [];
    if (claims.length > 0) {
      // In key order, so that two replicas' batches lock shared keys in the same order.
      parts.push(`claimed AS (
        INSERT INTO idempotency_keys AS k
          (platform_id, idempotency_key, request_method, request_path, request_hash, state, owner_request_id, locked_until, expires_at)
        SELECT c.platform_id, c.idempotency_key, c.request_method, c.request_path, c.request_hash, 'IN_PROGRESS',
               c.owner_request_id, now() + ? * interval '1 millisecond', now() + ? * interval '1 millisecond'
          FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
               AS c(platform_id, idempotency_key, request_method, request_path, request_hash, owner_request_id)
         ORDER BY c.platform_id, c.idempotency_key
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
        RETURNING k.platform_id, k.idempotency_key)`);
      params.push(
        this.times.leaseMs,
        this.times.ttlMs,
        ...columns(
          claims,
          (c) => c.platformId,
          (c) => c.key,
          (c) => c.request.method,
          (c) => c.request.path,
          (c) => c.request.bodyHash,
          (c) => c.owner,
        ),
      );
    }
    if (completions.length > 0) {
      parts.push(`completed AS (
        UPDATE idempotency_keys AS k
           SET state = 'COMPLETED', response_status = c.status::int, response_headers = c.headers::jsonb,
               response_body = c.body, completed_at = now(), expires_at = now() + ? * interval '1 millisecond'
          FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
               AS c(platform_id, idempotency_key, owner_request_id, status, headers, body)
         WHERE k.platform_id = c.platform_id AND k.idempotency_key = c.idempotency_key
           AND k.owner_request_id = c.owner_request_id AND k.state = 'IN_PROGRESS')`);
      params.push(
        this.times.ttlMs,
        ...columns(
          completions,
          (c) => c.platformId,
          (c) => c.key,
          (c) => c.owner,
          (c) => String(c.response.status),
          (c) => JSON.stringify(c.response.headers),
          (c) => c.response.body,
        ),
      );
    }
    if (releases.length > 0) {
      parts.push(`released AS (
        DELETE FROM idempotency_keys AS k
         USING unnest(?::text[], ?::text[], ?::text[]) AS r(platform_id, idempotency_key, owner_request_id)
         WHERE k.platform_id = r.platform_id AND k.idempotency_key = r.idempotency_key
           AND k.owner_request_id = r.owner_request_id AND k.state = 'IN_PROGRESS')`);
      params.push(
        ...columns(
          releases,
          (r) => r.platformId,
          (r) => r.key,
          (r) => r.owner,
        ),
      );
    }
    const taken = await this.exec<{ platform_id: string; idempotency_key: string }>(
      `WITH ${parts.join(',\n')}\n${claims.length > 0 ? 'SELECT platform_id, idempotency_key FROM claimed' : 'SELECT 1'}`,
      params,
    );
    const took = new Set(taken.map((t) => rowOf({ platformId: t.platform_id, key: t.idempotency_key })));
    return ops.map((o) => o.kind === 'claim' && took.has(rowOf(o)));
  }

  /** The live rows of `refs` (one SELECT), in their order; undefined for a key without one. */
  private async lookup(refs: readonly KeyRef[]): Promise<(Row | undefined)[]> {
    const rows = await this.exec<Row>(
      `SELECT k.platform_id, k.idempotency_key, request_method, request_path, request_hash, state, owner_request_id,
              response_status, response_headers, response_body
         FROM idempotency_keys AS k
         JOIN unnest(?::text[], ?::text[]) AS r(platform_id, idempotency_key)
           ON k.platform_id = r.platform_id AND k.idempotency_key = r.idempotency_key
        WHERE k.expires_at > now()`,
      columns(
        refs,
        (r) => r.platformId,
        (r) => r.key,
      ),
    );
    const byRow = new Map(rows.map((r) => [rowOf({ platformId: r.platform_id, key: r.idempotency_key }), r]));
    return refs.map((r) => byRow.get(rowOf(r)));
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
