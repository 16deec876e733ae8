import type { EntityManager } from '@sluice/store';
import type { DeviceCode } from '../domain/agent.js';
import { affectedRows, insertRow } from './sql.js';

/** A row of `agents.device_codes`. */
interface DeviceCodeRow {
  code_hash: string;
  agent_id: string;
  expires_at: Date | string;
  redeemed_at: Date | string | null;
  superseded_at: Date | string | null;
  request_key: string | null;
  created_at: Date | string;
}

const at = (v: Date | string | null) => (v === null ? undefined : new Date(v));

/** The one mapper of `agents.device_codes`. */
const deviceCodeRow = {
  to(d: DeviceCode): DeviceCodeRow {
    return {
      code_hash: d.codeHash,
      agent_id: d.agentId,
      expires_at: d.expiresAt,
      redeemed_at: d.redeemedAt ?? null,
      superseded_at: d.supersededAt ?? null,
      request_key: d.requestKey ?? null,
      created_at: d.createdAt,
    };
  },
  from(r: DeviceCodeRow): DeviceCode {
    const redeemedAt = at(r.redeemed_at);
    const supersededAt = at(r.superseded_at);
    return {
      codeHash: r.code_hash,
      agentId: r.agent_id,
      expiresAt: new Date(r.expires_at),
      ...(redeemedAt ? { redeemedAt } : {}),
      ...(supersededAt ? { supersededAt } : {}),
      ...(r.request_key !== null ? { requestKey: r.request_key } : {}),
      createdAt: new Date(r.created_at),
    };
  },
};

/** Device codes (hashes only) in `agents.device_codes`. */
export class DeviceCodeRepository {
  /** Stores a new code; the agent's earlier unredeemed codes stop working. */
  async replace(em: EntityManager, d: DeviceCode): Promise<void> {
    await em.execute(
      `UPDATE device_codes SET superseded_at = ? WHERE agent_id = ? AND redeemed_at IS NULL AND superseded_at IS NULL`,
      [d.createdAt, d.agentId],
    );
    await insertRow(em, 'device_codes', deviceCodeRow.to(d), new Set());
  }

  /** The code of this hash (of an agent not deleted); `lock` takes its row lock. */
  async get(em: EntityManager, codeHash: string, lock = false): Promise<DeviceCode | undefined> {
    const rows = await em.execute<DeviceCodeRow[]>(
      `SELECT d.* FROM device_codes d JOIN agents a ON a.id = d.agent_id
       WHERE d.code_hash = ? AND a.deleted_at IS NULL${lock ? ' FOR UPDATE OF d' : ''}`,
      [codeHash],
    );
    return rows[0] ? deviceCodeRow.from(rows[0]) : undefined;
  }

  /**
   * The current code of the agent's request with this key (locked), if any: the one not replaced
   * (a key has at most one, each retry replacing the last), else the newest.
   */
  async lastOfRequest(em: EntityManager, agentId: string, requestKey: string): Promise<DeviceCode | undefined> {
    const rows = await em.execute<DeviceCodeRow[]>(
      `SELECT * FROM device_codes WHERE agent_id = ? AND request_key = ?
       ORDER BY superseded_at IS NULL DESC, created_at DESC LIMIT 1 FOR UPDATE`,
      [agentId, requestKey],
    );
    return rows[0] ? deviceCodeRow.from(rows[0]) : undefined;
  }

  /** Marks the code redeemed, once: false when it was redeemed already. */
  async redeem(em: EntityManager, codeHash: string, now: Date): Promise<boolean> {
    const res = await em.execute(
      `UPDATE device_codes SET redeemed_at = ? WHERE code_hash = ? AND redeemed_at IS NULL`,
      [now, codeHash],
      'run',
    );
    return affectedRows(res) === 1;
  }
}

/**
 * Failed device-code attempts per key (a source address, or an attempted code) in a fixed
 * window, in `agents.device_code_failures`: shared by every replica.
 */
export class AttemptRepository {
  /** Failures of `key` in the window that contains `now` (0 when the window is over). */
  async failures(em: EntityManager, key: string, now: Date, windowMs: number): Promise<number> {
    const rows = await em.execute<{ failures: number; window_start: Date | string }[]>(
      `SELECT failures, window_start FROM device_code_failures WHERE key = ?`,
      [key],
    );
    const r = rows[0];
    if (!r || new Date(r.window_start).getTime() + windowMs <= now.getTime()) return 0;
    return r.failures;
  }

  /** Counts one failure of `key` (a new window when the last one is over). */
  async fail(em: EntityManager, key: string, now: Date, windowMs: number): Promise<void> {
    const windowEnd = new Date(now.getTime() - windowMs);
    await em.execute(
      `INSERT INTO device_code_failures (key, window_start, failures) VALUES (?, ?, 1)
       ON CONFLICT (key) DO UPDATE SET
         failures = CASE WHEN device_code_failures.window_start <= ? THEN 1 ELSE device_code_failures.failures + 1 END,
         window_start = CASE WHEN device_code_failures.window_start <= ? THEN EXCLUDED.window_start ELSE device_code_failures.window_start END`,
      [key, now, windowEnd, windowEnd],
    );
  }

  /** Forgets windows that are over. */
  async purge(em: EntityManager, now: Date, windowMs: number): Promise<number> {
    const res = await em.execute(`DELETE FROM device_code_failures WHERE window_start <= ?`, [new Date(now.getTime() - windowMs)], 'run');
    return affectedRows(res);
  }
}

/** Which agent created which quote (`agents.agent_quotes`): an agent reads and executes only its own. */
export class AgentQuoteRepository {
  async insert(em: EntityManager, quoteId: string, agentId: string, at: Date): Promise<void> {
    await em.execute(`INSERT INTO agent_quotes (quote_id, agent_id, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`, [
      quoteId,
      agentId,
      at,
    ]);
  }

  async isAgents(em: EntityManager, quoteId: string, agentId: string): Promise<boolean> {
    const rows = await em.execute(`SELECT 1 FROM agent_quotes WHERE quote_id = ? AND agent_id = ?`, [quoteId, agentId]);
    return rows.length > 0;
  }
}
