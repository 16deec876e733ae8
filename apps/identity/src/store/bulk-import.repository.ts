import { isId } from '@sluice/core';
import type { MasterKeyring } from '@sluice/crypto';
import { fromJson, optDate, pgTextArray, type EntityManager } from '@sluice/store';
import type { BulkImportJob, BulkImportStatus, ImportRow, ImportRowError } from '../domain/bulk-import.js';
import { openImportRow, sealImportRow } from './sealing.js';

/** A row of `bulk_import_jobs` as Postgres returns it. */
interface JobRow {
  id: string;
  platform_id: string;
  status: BulkImportStatus;
  total: number;
  processed: number;
  successful: number;
  failed: number;
  created_at: Date | string;
  completed_at: Date | string | null;
}

const JOB_COLUMNS = 'id, platform_id, status, total, processed, successful, failed, created_at, completed_at';

function jobFromRow(r: JobRow, errors: ImportRowError[]): BulkImportJob {
  const j: BulkImportJob = {
    id: r.id,
    platformId: r.platform_id,
    status: r.status,
    total: r.total,
    processed: r.processed,
    successful: r.successful,
    failed: r.failed,
    errors,
    createdAt: new Date(r.created_at),
  };
  const completedAt = optDate(r.completed_at);
  if (completedAt) j.completedAt = completedAt;
  return j;
}

/** The outcome of one processed row. */
export type RowOutcome =
  | { row: number; outcome: 'CREATED' | 'EXISTED'; customerId: string }
  | { row: number; outcome: 'FAILED'; error: ImportRowError };

/**
 * The `bulk_import_jobs` and `bulk_import_rows` tables (exact SQL). A row holds the customer's
 * values, sealed under `keyring` (`sealed_record`, store/sealing.ts), until it is processed; then
 * only its outcome is kept (the values live on in the customer it created, or nowhere). `record`
 * holds them in plain text only in rows stored before sealing, until processed or `rewrap`.
 */
export class BulkImportRepository {
  constructor(private readonly keyring: MasterKeyring) {}

  async insertJob(
    em: EntityManager,
    j: { id: string; platformId: string; fileName: string; now: Date },
  ): Promise<void> {
    await em.execute(
      `INSERT INTO bulk_import_jobs (id, platform_id, status, file_name, total, created_at, updated_at)
       VALUES (?, ?, 'PENDING', ?, 0, ?, ?)`,
      [j.id, j.platformId, j.fileName, j.now, j.now],
    );
  }

  /** Stores rows of a job being received (one statement per batch). */
  async insertRows(em: EntityManager, jobId: string, rows: readonly ImportRow[]): Promise<void> {
    if (rows.length === 0) return;
    await em.execute(
      `INSERT INTO bulk_import_rows (job_id, row_number, line, sealed_record, extra_values)
       SELECT ?, r, l, v, nullif(e, 0)
       FROM unnest(?::int[], ?::int[], ?::text[], ?::int[]) AS t(r, l, v, e)`,
      [
        jobId,
        `{${rows.map((r) => r.row).join(',')}}`,
        `{${rows.map((r) => r.line).join(',')}}`,
        pgTextArray(rows.map((r) => sealImportRow(this.keyring, jobId, r.row, r.values))),
        `{${rows.map((r) => r.extraValues ?? 0).join(',')}}`,
      ],
    );
  }

  async setTotal(em: EntityManager, jobId: string, total: number): Promise<void> {
    await em.execute(`UPDATE bulk_import_jobs SET total = ? WHERE id = ?`, [total, jobId]);
  }

  /** A job of the platform with its first `maxErrors` failed rows (a malformed id finds none). */
  async find(
    em: EntityManager,
    platformId: string,
    jobId: string,
    maxErrors: number,
  ): Promise<BulkImportJob | undefined> {
    if (!isId(jobId, 'Job')) return undefined;
    const [row] = await em.execute<JobRow[]>(
      `SELECT ${JOB_COLUMNS} FROM bulk_import_jobs WHERE id = ? AND platform_id = ?`,
      [jobId, platformId],
    );
    return row ? jobFromRow(row, await this.errors(em, jobId, maxErrors)) : undefined;
  }

  /**
   * Locks the unfinished job that advanced least recently (skipping jobs another replica is
   * working on), so concurrent imports take turns batch by batch.
   */
  async claimNext(em: EntityManager): Promise<BulkImportJob | undefined> {
    const [row] = await em.execute<JobRow[]>(
      `SELECT ${JOB_COLUMNS} FROM bulk_import_jobs
       WHERE status IN ('PENDING', 'PROCESSING')
       ORDER BY updated_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`,
    );
    return row ? jobFromRow(row, []) : undefined;
  }

  /** The next unprocessed rows of a job, in row order. */
  async pendingRows(em: EntityManager, jobId: string, limit: number): Promise<ImportRow[]> {
    const rows = await em.execute<
      {
        row_number: number;
        line: number;
        sealed_record: string | null;
        record: ImportRow['values'] | string | null;
        extra_values: number | null;
      }[]
    >(
      `SELECT row_number, line, sealed_record, record, extra_values FROM bulk_import_rows
       WHERE job_id = ? AND outcome IS NULL ORDER BY row_number LIMIT ?`,
      [jobId, limit],
    );
    return rows.map((r) => ({
      row: r.row_number,
      line: r.line,
      values: r.sealed_record
        ? openImportRow(this.keyring, jobId, r.row_number, r.sealed_record)
        : fromJson<ImportRow['values']>(r.record!),
      ...(r.extra_values ? { extraValues: r.extra_values } : {}),
    }));
  }

  /** Records the outcomes of processed rows and drops their values. */
  async recordOutcomes(em: EntityManager, jobId: string, outcomes: readonly RowOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    await em.execute(
      `UPDATE bulk_import_rows AS b SET outcome = t.o, customer_id = t.c, error = t.e::jsonb, record = NULL,
         sealed_record = NULL
       FROM unnest(?::int[], ?::text[], ?::text[], ?::text[]) AS t(r, o, c, e)
       WHERE b.job_id = ? AND b.row_number = t.r AND b.outcome IS NULL`,
      [
        `{${outcomes.map((o) => o.row).join(',')}}`,
        pgTextArray(outcomes.map((o) => o.outcome)),
        pgTextArray(outcomes.map((o) => (o.outcome === 'FAILED' ? null : o.customerId))),
        pgTextArray(outcomes.map((o) => (o.outcome === 'FAILED' ? JSON.stringify(o.error) : null))),
        jobId,
      ],
    );
  }

  /** Writes a job's counters and status (and when it completed). */
  async updateProgress(em: EntityManager, j: BulkImportJob, now: Date): Promise<void> {
    await em.execute(
      `UPDATE bulk_import_jobs SET status = ?, processed = ?, successful = ?, failed = ?, completed_at = ?, updated_at = ?
       WHERE id = ?`,
      [j.status, j.processed, j.successful, j.failed, j.completedAt ?? null, now, j.id],
    );
  }

  /** The first `limit` failed rows of a job, in row order. */
  async errors(em: EntityManager, jobId: string, limit: number): Promise<ImportRowError[]> {
    const rows = await em.execute<{ error: ImportRowError | string }[]>(
      `SELECT error FROM bulk_import_rows WHERE job_id = ? AND outcome = 'FAILED' ORDER BY row_number LIMIT ?`,
      [jobId, limit],
    );
    return rows.map((r) => fromJson(r.error));
  }
}
