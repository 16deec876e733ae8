import multipart from '@fastify/multipart';
import { BulkCustomerImportJob, BulkCustomerImportJobAccepted, bulkImportAcceptedJson, bulkImportJobJson } from '@sluice/api';
import type { identity } from '@sluice/contracts';
import { invalidInput } from '@sluice/core';
import { HttpError } from '../http/error-mapping.js';
import { fileTooLarge, streamFilePart, streamedBody, type PendingUpload } from '../http/multipart.js';
import type { RouteModule } from '../http/types.js';
import { errorResponses } from '../schemas/common.js';
import {
  BulkCustomerImportRequest,
  BulkImportJobParams,
  MAX_IMPORT_CSV_BYTES,
} from '../schemas/customer.schemas.js';

const TAGS = ['Customers'];
/** How long an upload may take end to end (a slow client streams 64 MiB). */
const UPLOAD_DEADLINE_MS = 600_000;
const tooLarge = () => fileTooLarge(MAX_IMPORT_CSV_BYTES, '64 MiB');
const fail = (field: string, message: string) => invalidInput([{ field, message }]);

/**
 * Bulk customer import (identity service): `POST /customers/bulk/csv` streams the CSV file to
 * identity, which checks it and stores its rows as a job (202); the customers are then created in
 * the background, and `GET /customers/bulk/jobs/{jobId}` shows the progress. BULK_UPLOAD.COMPLETED
 * or BULK_UPLOAD.FAILED is sent when the last row is done.
 */
const bulkImportRoutes: RouteModule = async (app, { clients }) => {
  await app.register(multipart, { throwFileSizeLimit: false });

  app.post(
    '/customers/bulk/csv',
    {
      validatorCompiler: streamedBody,
      schema: {
        tags: TAGS,
        operationId: 'uploadCustomersCsv',
        summary: 'Upload customers via CSV file',
        description: [
          'multipart/form-data with one part, `file`: a CSV file (UTF-8, RFC 4180; a byte order mark is skipped), its first row the header naming the columns in any order.',
          'Columns: umaAddress, platformCustomerId, customerType (INDIVIDUAL or BUSINESS), fullName, birthDate (YYYY-MM-DD), email, addressLine1, addressLine2, city, state, postalCode, country (ISO 3166-1 alpha-2), businessLegalName, businessRegistrationNumber, businessTaxId, platformAccountId, description.',
          'The header must have platformCustomerId and customerType; an INDIVIDUAL row must fill platformCustomerId, fullName, birthDate, addressLine1, city, state, postalCode and country; a BUSINESS row platformCustomerId, businessLegalName and the same address columns. An empty umaAddress is generated as on POST /customers; platformAccountId and description are accepted and not stored. A row may have fewer values than the header (the missing ones empty).',
          'The file streams through to the identity service, which checks the header and stores the rows (at most 100,000 data rows and 64 MiB; 413 past 64 MiB): a file that is not such a CSV (unknown or repeated column, a required column missing from the header, an unclosed quote, a record over 16,384 characters, not UTF-8, no data row) is 400 INVALID_INPUT on `file` naming the line or column, and nothing is stored.',
          'Then 202 with the job; the customers are created in the background, each row as POST /customers creates one (same validation, CUSTOMER.* events, internal accounts). Rows fail one by one (the job lists each with the CSV column at fault). Idempotent by platformCustomerId: a row whose platformCustomerId is already a live customer of that type creates nothing and counts as successful, so a file can be uploaded again after a failure. BULK_UPLOAD.COMPLETED (or FAILED, when no row has its customer) is sent when every row is done.',
        ].join('\n\n'),
        consumes: ['multipart/form-data'],
        body: BulkCustomerImportRequest,
        response: { 202: BulkCustomerImportJobAccepted, ...errorResponses(413, 415) },
      },
    },
    async (request, reply) => {
      if (!request.isMultipart())
        throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the CSV file as multipart/form-data');
      // Room for one part too many, so that it is refused by name (400) rather than by the parser (413).
      const parts = request.parts({
        limits: { fileSize: MAX_IMPORT_CSV_BYTES + 1, files: 2, fields: 1, parts: 2 },
      });
      let upload: PendingUpload<identity.ImportCustomersCsvResponse> | undefined;
      try {
        for await (const part of parts) {
          if (upload) throw fail(part.fieldname, 'the CSV file in `file` is the only part of this request');
          if (part.type === 'field' && part.fieldname === 'file')
            throw fail('file', 'must be a file part (with a filename), not a text field');
          if (part.type === 'field' || part.fieldname !== 'file')
            throw fail(part.fieldname, 'is not a part of this request (the CSV file goes in `file`, the only part)');
          const call = clients.identity.importCustomersCsv({ deadlineMs: UPLOAD_DEADLINE_MS });
          const header = { platformId: request.platform.id, fileName: part.filename ?? '' };
          upload = await streamFilePart(call, part, header, MAX_IMPORT_CSV_BYTES, tooLarge);
        }
      } catch (err) {
        upload?.cancel();
        throw err;
      }
      if (!upload) throw fail('file', 'is required');
      const { job } = await upload.finish();
      const accepted = bulkImportAcceptedJson(job!);
      return reply.code(202).send(accepted);
    },
  );

  app.get(
    '/customers/bulk/jobs/:jobId',
    {
      schema: {
        tags: TAGS,
        operationId: 'getBulkCustomerImportJob',
        summary: 'Get bulk import job status',
        description:
          'The job’s status and progress (rows processed, successful, failed of total), the first 1,000 failed rows in row order (each with its platformCustomerId or row_<n>, the code, and the CSV columns at fault), and completedAt once COMPLETED or FAILED. Another platform’s job, or an unknown one: 404 BULK_UPLOAD_JOB_NOT_FOUND.',
        params: BulkImportJobParams,
        response: { 200: BulkCustomerImportJob, ...errorResponses() },
      },
    },
    async (request) => {
      const { job } = await clients.identity.getBulkImportJob({
        platformId: request.platform.id,
        jobId: request.params.jobId,
      });
      return bulkImportJobJson(job!);
    },
  );
};

export default bulkImportRoutes;
