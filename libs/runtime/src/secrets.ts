import { ConfigError, Type } from '@sluice/config';
import {
  blindIndex,
  EnvelopeError,
  loadMasterKeyring,
  openValue,
  rewrapValue,
  sealValue,
  type KeyringNames,
  type MasterKeyring,
  type SealedValueScheme,
} from '@sluice/crypto';
import type { Logger } from '@sluice/logging';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';

/**
 * The two variables of a service's master keyring (envelope encryption at rest): `<names.current>`
 * (required, base64 of 32 bytes) and `<names.retired>` (optional, comma-separated), described once
 * for the configuration document.
 */
export function masterKeyConfig(names: KeyringNames, protects: string) {
  return {
    [names.current]: Type.String({
      minLength: 1,
      description: `base64 32-byte master key wrapping the data keys of ${protects} (required; keep in a secret store; rotate with the \`rewrap\` command)`,
    }),
    [names.retired]: Type.Optional(
      Type.String({
        description: `comma-separated base64 keys that only open ${protects} sealed before a rotation (drop one once \`rewrap\` moved every row off it)`,
      }),
    ),
  };
}

/**
 * A service's keyring from its configuration; a key that is not 32 bytes of base64 is a
 * ConfigError naming the variable (the process stops with exit code 78, like any bad variable).
 */
export function keyringFromConfig(config: object, names: KeyringNames): MasterKeyring {
  const env = config as Record<string, unknown>;
  const current = env[names.current];
  const retired = env[names.retired];
  try {
    return loadMasterKeyring(
      typeof current === 'string' ? current : '',
      typeof retired === 'string' ? retired : undefined,
      names,
    );
  } catch (err) {
    if (err instanceof EnvelopeError && err.code === 'CONFIG_INVALID')
      throw new ConfigError([
        { variable: err.variable ?? names.current, message: err.message.replace(/^\S+ /, '') },
      ]);
    throw err;
  }
}

/** One table whose sealed rows a rewrap visits (see `rewrapRows`). */
export interface RewrapJob<R> {
  /** What the rows are, the prefix of their counts (`customers`). */
  name: string;
  /**
   * Up to `limit` rows with an id after `afterId` (id order) that still need work: sealed under
   * another key than the current one, or legacy plaintext. Lock them (FOR UPDATE SKIP LOCKED):
   * another replica running the command at once takes other rows.
   */
  next(em: EntityManager, afterId: string, limit: number): Promise<R[]>;
  idOf(row: R): string;
  /** Rewrites one row under the current key; answers what it did (`rewrapped`, `sealed`). */
  apply(em: EntityManager, row: R): Promise<string>;
}

/**
 * Moves every row of `jobs` to the current master key, `batch` rows per transaction. Resumable
 * and idempotent: what is done is in the rows themselves (a row under the current key is not
 * selected again), so an interrupted run is simply run again. A row that does not open (its key
 * is not configured, or it was tampered with) is counted as `failed`, logged by id and left as
 * it is. Answers counts by `<job>.<outcome>`.
 */
export async function rewrapRows(
  orm: MikroORM,
  jobs: RewrapJob<unknown>[],
  o: { batch: number; logger: Logger },
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  const add = (k: string) => (counts[k] = (counts[k] ?? 0) + 1);
  for (const job of jobs) {
    counts[`${job.name}.failed`] = 0;
    let afterId = '';
    for (;;) {
      const done = await transactional(orm, async (em) => {
        const rows = await job.next(em, afterId, o.batch);
        const outcomes: string[] = [];
        for (const row of rows) {
          try {
            outcomes.push(await job.apply(em, row));
          } catch (err) {
            if (!(err instanceof EnvelopeError)) throw err;
            outcomes.push('failed');
            o.logger.error({ id: job.idOf(row), code: err.code }, `${job.name}: a row does not open; left as it is`);
          }
        }
        return { last: rows.length ? job.idOf(rows[rows.length - 1]) : undefined, outcomes };
      });
      done.outcomes.forEach((x) => add(`${job.name}.${x}`));
      if (!done.last) break;
      afterId = done.last;
      o.logger.info({ job: job.name, afterId, counts }, 'rewrap progress');
    }
  }
  return counts;
}

/** One sealed column beside the plaintext column (or columns) it replaced (`sealedColumnJob`). */
export interface SealedColumn {
  /** The job's name, the prefix of its counts (`receiverLookups`). */
  name: string;
  table: string;
  /** The row id column: what the sealed value is bound to. */
  id: string;
  /**
   * The plaintext column of rows written before sealing, or an SQL expression over several
   * (`jsonb_build_object('email', email, ...)`, with `plainIs: 'fields'` and `clears`), or SQL reading
   * the plaintext out of `plainColumn` (`destination->>'umaAddress'`).
   */
  plain: string;
  /** The column that holds the plaintext when `plain` is an expression (`destination`); `plain` otherwise. */
  plainColumn?: string;
  sealed: string;
  scheme: SealedValueScheme;
  /**
   * How the plaintext is read into the text that is sealed: as it is, a jsonb value as JSON text,
   * or a jsonb object of fields as JSON text without its null fields (what a mapper seals of an
   * object whose absent fields are left out).
   */
  plainIs: 'text' | 'json' | 'fields';
  /** SQL that holds when the plaintext column has something to seal (`x IS NOT NULL`, `x <> '{}'::jsonb`). */
  plainPending: string;
  /** SQL written into the plaintext column once the value is sealed (`NULL`, `'{}'::jsonb`, `destination - 'umaAddress'`). */
  cleared: string;
  /** The plaintext columns set to `cleared` when `plain` is an expression over several (default: `plain`). */
  clears?: string[];
  /**
   * Columns computed from the plaintext under the current key, written with the value (a blind
   * index): column → value. A rewrapped value is opened for them.
   */
  derived?: (plaintext: string, keyring: MasterKeyring) => Record<string, unknown>;
  /**
   * The column holding a blind index of the value (`blindIndex` of @sluice/crypto under `label`), for
   * equality filters: rewrap writes it under the current key, rows indexed under another are selected too.
   */
  blindIndex?: { column: string; label: string };
}

/** The text sealed of a row written before sealing, from its plaintext as selected (`SealedColumn.plainIs`). */
function plaintextOf(plainIs: SealedColumn['plainIs'], plain: unknown): string {
  if (plainIs === 'text') return String(plain);
  const json: unknown = typeof plain === 'string' ? JSON.parse(plain) : plain;
  return JSON.stringify(
    plainIs === 'fields' ? Object.fromEntries(Object.entries(json as object).filter(([, v]) => v !== null)) : json,
  );
}

/**
 * The rewrap job of one sealed column: rows sealed under another master key than the current one
 * (rewrapped; a plaintext value beside it, which the mappers never write, is cleared) or written
 * before sealing (sealed now, the plaintext column cleared). Rows with nothing in either are never
 * selected. The text sealed is what the table's row mapper seals (a map as its JSON); `derived`
 * columns are recomputed from it under the current key. With a `blindIndex`, rows indexed under
 * another key are selected too, and every row visited gets the current key's index of its value.
 */
export function sealedColumnJob(keyring: MasterKeyring, c: SealedColumn): RewrapJob<Record<string, unknown>> {
  const bi = c.blindIndex;
  return {
    name: c.name,
    next: (em, afterId, limit) =>
      em.execute<Record<string, unknown>[]>(
        `SELECT ${c.id} AS id, ${c.sealed} AS sealed, ${c.plain} AS plain FROM ${c.table}
         WHERE ${c.id} > ? AND (${c.plainPending} OR split_part(${c.sealed}, '.', 2) <> ?${
           bi ? ` OR split_part(${bi.column}, '.', 2) <> ?` : ''
         })
         ORDER BY ${c.id} LIMIT ? FOR UPDATE SKIP LOCKED`,
        [afterId, keyring.current.id, ...(bi ? [keyring.current.id] : []), limit],
      ),
    idOf: (r) => r.id as string,
    async apply(em, r) {
      const id = r.id as string;
      const was = r.sealed as string | null;
      const text = was ? undefined : plaintextOf(c.plainIs, r.plain);
      const sealed = was ? rewrapValue(keyring, c.scheme, id, was) : sealValue(keyring, c.scheme, id, text!);
      const needsText = c.derived || bi;
      const value = needsText ? (text ?? openValue(keyring, c.scheme, id, sealed)) : undefined;
      const derived = Object.entries({
        ...(c.derived ? c.derived(value!, keyring) : {}),
        ...(bi ? { [bi.column]: blindIndex(keyring, bi.label, value!) } : {}),
      });
      await em.execute(
        `UPDATE ${c.table} SET ${[
          `${c.sealed} = ?`,
          ...(c.clears ?? [c.plainColumn ?? c.plain]).map((column) => `${column} = ${c.cleared}`),
          ...derived.map(([column]) => `${column} = ?`),
        ].join(', ')} WHERE ${c.id} = ?`,
        [sealed, ...derived.map(([, v]) => v), id],
      );
      return was ? 'rewrapped' : 'sealed';
    },
  };
}
