import { MAX_LISTED_IMPORT_ERRORS } from '@sluice/api';
import { invalidInput, isDomainError, newId, type Clock, type DomainError, type FieldError } from '@sluice/core';
import { notifyOnCommit } from '@sluice/events';
import type { Counter, Metrics } from '@sluice/metrics';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import {
  MAX_IMPORT_ROWS,
  columnOf,
  correlationIdOf,
  finalStatus,
  rowToCustomerInput,
  type BulkImportJob,
  type ImportRow,
  type ImportRowError,
} from '../domain/bulk-import.js';
import { bulkImportJobNotFound, fail } from '../domain/errors.js';
import type { Platform, PlatformConfig } from '../domain/platform.js';
import type { Customer } from '../domain/customer.js';
import { validIds } from '../domain/validation.js';
import type { BulkImportRepository, RowOutcome } from '../store/bulk-import.repository.js';
import type { CustomerRepository } from '../store/customer.repository.js';
import type { PlatformConfigRepository } from '../store/platform-config.repository.js';
import type { PlatformRepository } from '../store/platform.repository.js';
import type { CustomersService } from './customers.service.js';
import { readImportCsv } from './import-csv.js';
import { requirePlatform } from './platforms.service.js';
import type { IdentityEvents } from './ports.js';

/** The channel that wakes the import workers when a job is stored (LISTEN/NOTIFY). */
export const BULK_IMPORT_CHANNEL = 'sluice_bulk_imports';

/** Rows stored per statement while a file is received. */
const RECEIVE_BATCH = 1000;

/**
 * Bulk customer imports (POST /customers/bulk/csv). Receiving a file stores its rows as a job in
 * one transaction, as the file streams in (a file that is not the CSV format, or has no data
 * row, stores nothing); the rows are then imported in the background, `batchSize` rows per
 * transaction: each row creates its customer exactly as POST /customers does (CustomersService,
 * in a savepoint, so a row that fails leaves the others), and its outcome and the job's progress
 * are written in the same transaction — a crash repeats no row and loses none. Idempotent by
 * platformCustomerId: a row whose platformCustomerId is already a live customer of the platform
 * (of the same type) creates nothing and counts as successful, so uploading a file again creates
 * each customer once. When the last row is done the job is COMPLETED (or FAILED when no row has
 * its customer) and BULK_UPLOAD.COMPLETED / FAILED is written with it.
 */
export class BulkImportService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly store: {
      platforms: PlatformRepository;
      configs: PlatformConfigRepository;
      customers: CustomerRepository;
      imports: BulkImportRepository;
    },
    private readonly customers: CustomersService,
    private readonly events: IdentityEvents,
    private readonly batchSize: number,
    metrics?: Metrics,
  ) {
    this.rowsImported = metrics?.counter({
      name: 'bulk_import_rows_total',
      help: 'Rows of bulk customer imports processed, by outcome (created, existed, failed)',
      labelNames: ['outcome'],
    });
    this.jobsFinished = metrics?.counter({
      name: 'bulk_import_jobs_finished_total',
      help: 'Bulk customer import jobs finished, by status (COMPLETED, FAILED)',
      labelNames: ['status'],
    });
  }

  private readonly rowsImported: Counter<'outcome'> | undefined;
  private readonly jobsFinished: Counter<'status'> | undefined;

  /**
   * Stores a CSV file's rows as a PENDING job. Not retried on a serialization failure: the bytes
   * are read once (nothing here takes a lock another writer waits for).
   */
  async receive(platformId: string, fileName: string, bytes: AsyncIterable<Uint8Array>): Promise<BulkImportJob> {
    validIds(['platformId', platformId, 'Platform']);
    const id = newId('Job');
    const now = this.clock.now();
    const job = await this.orm.em.fork().transactional(async (tem) => {
      const em = tem as EntityManager;
      await requirePlatform(this.store.platforms, em, platformId);
      await this.store.imports.insertJob(em, { id, platformId, fileName: fileName.slice(0, 255), now });
      let total = 0;
      let batch: ImportRow[] = [];
      for await (const row of readImportCsv(bytes)) {
        if (++total > MAX_IMPORT_ROWS)
          throw invalidInput([
            { field: 'file', message: `has more than ${MAX_IMPORT_ROWS} data rows (split it into several files)` },
          ]);
        batch.push(row);
        if (batch.length === RECEIVE_BATCH) {
          await this.store.imports.insertRows(em, id, batch);
          batch = [];
        }
      }
      await this.store.imports.insertRows(em, id, batch);
      if (total === 0) throw invalidInput([{ field: 'file', message: 'has a header but no data row' }]);
      await this.store.imports.setTotal(em, id, total);
      notifyOnCommit(em, BULK_IMPORT_CHANNEL); // the import workers start on commit
      const stored: BulkImportJob = {
        id,
        platformId,
        status: 'PENDING',
        total,
        processed: 0,
        successful: 0,
        failed: 0,
        errors: [],
        createdAt: now,
      };
      return stored;
    });
    return job;
  }

  /** A job of the platform with its progress and its first failed rows. */
  async get(platformId: string, jobId: string): Promise<BulkImportJob> {
    validIds(['platformId', platformId, 'Platform']);
    const job = await this.store.imports.find(this.orm.em.fork(), platformId, jobId, MAX_LISTED_IMPORT_ERRORS);
    if (!job) throw bulkImportJobNotFound();
    return job;
  }

  /**
   * Imports the next rows of the unfinished job that waited longest, in one transaction. True
   * when it did something (there may be more to do).
   */
  async importNextBatch(): Promise<boolean> {
    const done = await transactional(this.orm, async (em) => {
      const job = await this.store.imports.claimNext(em);
      if (!job) return undefined;
      const rows = await this.store.imports.pendingRows(em, job.id, this.batchSize);
      const platform = await requirePlatform(this.store.platforms, em, job.platformId);
      // Share-locked as a single creation does (see CustomersService.create).
      const config = await this.store.configs.get(em, job.platformId, 'share');
      const parsed = rows.map((r) => ({ r, parsed: rowToCustomerInput(r) }));
      // The live customers the batch's platformCustomerIds already name, read at once (a row
      // creating one adds it, so a later row of the batch with the same id finds it).
      const existing = await this.store.customers.findLiveByPlatformCustomerIds(
        em,
        job.platformId,
        parsed.flatMap(({ parsed: p }) => ('input' in p ? [p.input.platformCustomerId!] : [])),
      );
      const outcomes: RowOutcome[] = [];
      for (const { r, parsed: p } of parsed)
        outcomes.push(await this.importRow(em, { platform, config }, r, p, existing));
      await this.store.imports.recordOutcomes(em, job.id, outcomes);
      const failed = outcomes.filter((o) => o.outcome === 'FAILED').length;
      const now = this.clock.now();
      const next: BulkImportJob = {
        ...job,
        processed: job.processed + outcomes.length,
        successful: job.successful + outcomes.length - failed,
        failed: job.failed + failed,
        status: 'PROCESSING',
      };
      if (next.processed >= next.total) {
        next.status = finalStatus(next);
        next.completedAt = now;
        next.errors = await this.store.imports.errors(em, job.id, MAX_LISTED_IMPORT_ERRORS);
      }
      await this.store.imports.updateProgress(em, next, now);
      if (next.completedAt) await this.events.bulkImportFinished(em, next);
      return { outcomes, finished: next.completedAt ? next.status : undefined };
    });
    if (!done) return false;
    // Counted once committed (a retried transaction is not counted twice).
    for (const o of done.outcomes) this.rowsImported?.inc({ outcome: o.outcome.toLowerCase() });
    if (done.finished) this.jobsFinished?.inc({ status: done.finished });
    return true;
  }

  /** One row: its customer created (or found), or why not. */
  private async importRow(
    em: EntityManager,
    ctx: { platform: Platform; config: PlatformConfig },
    r: ImportRow,
    parsed: ReturnType<typeof rowToCustomerInput>,
    live: Map<string, Customer>,
  ): Promise<RowOutcome> {
    if ('problems' in parsed) return failedRow(r, invalidInput(parsed.problems));
    const { input } = parsed;
    const existing = live.get(input.platformCustomerId!);
    if (existing) {
      if (existing.customerType === input.customerType)
        return { row: r.row, outcome: 'EXISTED', customerId: existing.id };
      return failedRow(
        r,
        fail(
          'CUSTOMER_ALREADY_EXISTS',
          `A ${existing.customerType} customer with platformCustomerId ${input.platformCustomerId} already exists`,
          { customerId: existing.id },
        ),
      );
    }
    try {
      const customer = await em.transactional((savepoint) =>
        this.customers.insertNew(savepoint as EntityManager, ctx, input),
      );
      live.set(customer.platformCustomerId, customer);
      return { row: r.row, outcome: 'CREATED', customerId: customer.id };
    } catch (err) {
      if (this.store.customers.uniqueKeyViolated(err) === 'PLATFORM_CUSTOMER_ID') {
        // Another import (or POST /customers) created it since this batch looked: the same
        // idempotent answer as if it had been there before.
        const now = await this.store.customers.findLiveByPlatformCustomerId(em, ctx.platform.id, input.platformCustomerId!);
        if (now && now.customerType === input.customerType)
          return { row: r.row, outcome: 'EXISTED', customerId: now.id };
      }
      const refusal = isDomainError(err)
        ? err
        : await this.customers.conflict(err, ctx.platform.id, input.platformCustomerId, input.umaAddress);
      if (!isDomainError(refusal)) throw err;
      return failedRow(r, refusal);
    }
  }
}

/** The outcome of a row that created no customer, its errors named by CSV column. */
function failedRow(r: ImportRow, e: DomainError): RowOutcome {
  const fieldErrors = ((e.details?.errors as FieldError[] | undefined) ?? []).map((f) => ({
    field: columnOf(f.field),
    message: f.message,
  }));
  const error: ImportRowError = {
    correlationId: correlationIdOf(r),
    code: e.code,
    message: fieldErrors.length === 1 ? `${fieldErrors[0]!.field}: ${fieldErrors[0]!.message}` : e.message,
    row: r.row,
    line: r.line,
    errors: fieldErrors,
  };
  const customerId = e.details?.customerId;
  if (typeof customerId === 'string') error.customerId = customerId;
  return { row: r.row, outcome: 'FAILED', error };
}
