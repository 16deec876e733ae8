import { Type, type Static } from '@sinclair/typebox';
import type { identity } from '@sluice/contracts';
import { Timestamp, bare, iso, stringEnum } from '../schema.js';

/**
 * The public bulk customer import job (reference `BulkCustomerImportJob`): the answer of
 * GET /customers/bulk/jobs/{jobId} and the data of the BULK_UPLOAD.COMPLETED / FAILED webhooks.
 */

export const BULK_IMPORT_JOB_STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;

/** The most failed rows a job lists in `errors` (in row order); `progress.failed` counts them all. */
export const MAX_LISTED_IMPORT_ERRORS = 1000;

export const BulkCustomerImportErrorEntry = Type.Object(
  {
    correlationId: Type.String({ description: 'The row’s platformCustomerId, or row_<n> when it has none' }),
    code: Type.String({
      description:
        'INVALID_INPUT (details.errors names each bad column), CUSTOMER_ALREADY_EXISTS (the platformCustomerId is a live customer of another type), UMA_ADDRESS_EXISTS (another customer has the umaAddress)',
    }),
    message: Type.String(),
    details: Type.Object(
      {
        row: Type.Integer({ minimum: 1, description: '1-based data row (the header row is not counted)' }),
        line: Type.Integer({ minimum: 1, description: 'the line of the file the row starts on' }),
        errors: Type.Optional(
          Type.Array(Type.Object({ field: Type.String({ description: 'the CSV column' }), message: Type.String() })),
        ),
        customerId: Type.Optional(Type.String({ description: 'the existing customer of a conflict' })),
      },
      { additionalProperties: true },
    ),
  },
  { $id: 'BulkCustomerImportErrorEntry' },
);
export type BulkCustomerImportErrorEntry = Static<typeof BulkCustomerImportErrorEntry>;

export const BulkCustomerImportJob = Type.Object(
  {
    id: Type.String({ description: 'Job:<uuid>' }),
    status: stringEnum(BULK_IMPORT_JOB_STATUSES, {
      description:
        'PENDING until the first rows are processed; COMPLETED when every row was processed and at least one created (or found) its customer; FAILED when every row failed',
    }),
    progress: Type.Object({
      total: Type.Integer({ minimum: 0, description: 'data rows in the file' }),
      processed: Type.Integer({ minimum: 0 }),
      successful: Type.Integer({
        minimum: 0,
        description: 'rows whose customer was created, or already existed with that platformCustomerId',
      }),
      failed: Type.Integer({ minimum: 0 }),
    }),
    errors: Type.Optional(
      Type.Array(BulkCustomerImportErrorEntry, {
        description: `the first ${MAX_LISTED_IMPORT_ERRORS} failed rows, in row order`,
      }),
    ),
    completedAt: Type.Optional(Timestamp),
  },
  { $id: 'BulkCustomerImportJob' },
);
export type BulkCustomerImportJob = Static<typeof BulkCustomerImportJob>;

export const BulkCustomerImportJobAccepted = Type.Object(
  {
    jobId: Type.String({ description: 'Job:<uuid>' }),
    status: stringEnum(['PENDING', 'PROCESSING'] as const),
  },
  { $id: 'BulkCustomerImportJobAccepted' },
);
export type BulkCustomerImportJobAccepted = Static<typeof BulkCustomerImportJobAccepted>;

function errorEntryJson(e: identity.BulkImportError): BulkCustomerImportErrorEntry {
  return {
    correlationId: e.correlationId,
    code: e.code,
    message: e.message,
    details: {
      row: e.row,
      line: e.line,
      ...(e.errors.length ? { errors: e.errors.map(({ field, message }) => ({ field, message })) } : {}),
      ...(e.customerId !== undefined ? { customerId: e.customerId } : {}),
    },
  };
}

/** The public BulkCustomerImportJob of an identity.v1 BulkImportJob. */
export function bulkImportJobJson(j: identity.BulkImportJob): BulkCustomerImportJob {
  const out: BulkCustomerImportJob = {
    id: j.id,
    status: bare(j.status, 'BULK_IMPORT_JOB_STATUS_') as BulkCustomerImportJob['status'],
    progress: { total: j.total, processed: j.processed, successful: j.successful, failed: j.failed },
    errors: j.errors.map(errorEntryJson),
  };
  if (j.completedAt) out.completedAt = iso(j.completedAt);
  return out;
}

/** The 202 answer of POST /customers/bulk/csv. */
export function bulkImportAcceptedJson(j: identity.BulkImportJob): BulkCustomerImportJobAccepted {
  return {
    jobId: j.id,
    status: bare(j.status, 'BULK_IMPORT_JOB_STATUS_') === 'PENDING' ? 'PENDING' : 'PROCESSING',
  };
}
