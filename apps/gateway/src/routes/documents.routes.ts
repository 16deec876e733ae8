import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { compliance } from '@sluice/contracts';
import { Document, documentJson } from '@sluice/api';
import { invalidInput } from '@sluice/core';
import { HttpError } from '../http/error-mapping.js';
import { headerOf as requestHeader } from '../http/request.helpers.js';
import type { GatewayClients, RouteModule } from '../http/types.js';
import { fileTooLarge, multipartValidators, streamFilePart, streamedBody, type PendingUpload } from '../http/multipart.js';
import { toFieldErrors } from '../http/validator.compiler.js';
import { envelope, errorResponses, pageOf } from '../schemas/common.js';
import {
  DocumentList,
  DocumentListQuery,
  DocumentParams,
  DocumentReplaceFields,
  DocumentReplaceRequest,
  DocumentUploadFields,
  DocumentUploadRequest,
} from '../schemas/compliance.schemas.js';

const TAGS = ['Documents'];
const errors = errorResponses();
const uploadErrors = errorResponses(413, 415);

/** Largest document accepted: 10 MiB; exactly this many bytes is accepted. */
export const MAX_DOCUMENT_BYTES = 10_485_760;
/** How long an upload may take end to end (a slow client streams 10 MiB). */
const UPLOAD_DEADLINE_MS = 120_000;
/** Metadata fields of a form (besides `file`) and the longest value of one. */
const MAX_FIELDS = 8;
const MAX_FIELD_BYTES = 1024;


const checkUpload = multipartValidators({ schema: DocumentUploadFields, httpPart: 'body', method: 'POST', url: '' });
const checkReplace = multipartValidators({ schema: DocumentReplaceFields, httpPart: 'body', method: 'PUT', url: '' });

function fail(field: string, message: string): never {
  throw invalidInput([{ field, message }]);
}

const tooLarge = () => fileTooLarge(MAX_DOCUMENT_BYTES, '10 MiB');

/**
 * The proto header of an upload from its validated fields. A new document carries the request's
 * Idempotency-Key as its request key: if this gateway dies after compliance stored the document
 * but before the key's answer was recorded, the retry (once the key's lease ran out) gets that
 * document back instead of a second one.
 */
function headerOf(
  platformId: string,
  fields: Record<string, string>,
  fileName: string,
  documentId: string | undefined,
  requestKey: string | undefined,
): compliance.DocumentHeader {
  return {
    platformId,
    ...(documentId ? { documentId } : { documentHolder: fields.documentHolder }),
    ...(!documentId && requestKey ? { requestKey } : {}),
    documentType: `DOCUMENT_TYPE_${fields.documentType}` as compliance.DocumentType,
    country: fields.country!,
    side: fields.side
      ? (`DOCUMENT_SIDE_${fields.side}` as compliance.DocumentSide)
      : compliance.DocumentSide.UNSPECIFIED,
    ...(fields.documentNumber !== undefined ? { documentNumber: fields.documentNumber } : {}),
    fileName,
  };
}

/**
 * Reads a multipart form: the metadata fields first (checked against their schema before a byte
 * of the file is read), then the one `file` part, streamed through. A field after the file, a
 * second file, an unknown field or a missing file is 400 naming it.
 */
async function receive(
  request: FastifyRequest,
  clients: GatewayClients,
  documentId: string | undefined,
): Promise<compliance.Document> {
  if (!request.isMultipart())
    throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the document as multipart/form-data');
  const fields: Record<string, string> = {};
  let upload: PendingUpload<compliance.UploadDocumentResponse> | undefined;
  const parts = request.parts({
    limits: {
      fileSize: MAX_DOCUMENT_BYTES + 1,
      files: 1,
      fields: MAX_FIELDS,
      fieldSize: MAX_FIELD_BYTES,
      parts: MAX_FIELDS + 1,
    },
  });
  try {
    for await (const part of parts) {
      if (part.type === 'field') {
        if (upload) fail(part.fieldname, 'must come before file (send the file as the last part)');
        if (part.fieldname === 'file') fail('file', 'must be a file part (with a filename)');
        if (part.valueTruncated || typeof part.value !== 'string')
          fail(part.fieldname, `must be text of at most ${MAX_FIELD_BYTES} bytes`);
        if (part.fieldname in fields) fail(part.fieldname, 'must be sent once');
        fields[part.fieldname] = part.value as string;
        continue;
      }
      if (part.fieldname !== 'file')
        fail(part.fieldname, 'is not a field of this request (the file goes in `file`)');
      const check = documentId ? checkReplace : checkUpload;
      if (!check(fields))
        throw invalidInput(toFieldErrors((check as unknown as { errors: never[] }).errors, 'body'));
      const header = headerOf(request.platform.id, fields, part.filename ?? '', documentId, requestHeader(request, 'Idempotency-Key'));
      const call = clients.compliance.uploadDocument({ deadlineMs: UPLOAD_DEADLINE_MS });
      upload = await streamFilePart(call, part, header, MAX_DOCUMENT_BYTES, tooLarge);
    }
  } catch (err) {
    // A form refused after its file (a field after it): the upload is abandoned, nothing stored.
    upload?.cancel();
    throw err;
  }
  if (!upload) fail('file', 'is required');
  return (await upload.finish()).document!;
}

/** `attachment; filename=...` with an ASCII fallback and the UTF-8 name. */
function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^A-Za-z0-9._ -]/g, '_') || 'document';
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/**
 * Verification documents (compliance service). `POST /documents` and `PUT /documents/{id}` take
 * multipart/form-data, streamed to compliance (never held whole here); `GET /documents/{id}/file`
 * streams the decrypted file back, chunk by chunk.
 */
const documentsRoutes: RouteModule = async (app, { clients }) => {
  await app.register(multipart, { throwFileSizeLimit: false });

  app.post(
    '/documents',
    {
      validatorCompiler: streamedBody,
      schema: {
        tags: TAGS,
        operationId: 'uploadDocument',
        summary: 'Upload a document',
        description:
          'multipart/form-data: the fields documentType, country, documentHolder, side and documentNumber, then `file` as the last part. The file is streamed to the compliance service, which decides its type by its content (PDF, JPEG or PNG magic bytes; anything else, whatever its name or declared type, is 400 on `file`), encrypts it at rest and records its SHA-256. More than 10 MiB (10,485,760 bytes) is 413 PAYLOAD_TOO_LARGE, answered at the first byte too many (the connection is then closed: the rest is not read) with nothing stored; exactly 10 MiB is accepted. The holder must be a customer or beneficial owner of the platform (404 DOCUMENT_HOLDER_NOT_FOUND). The Idempotency-Key fingerprint of an upload covers method and path only; the key also reaches compliance, so a retry after a gateway crash answers the document already stored instead of storing a second one.',
        consumes: ['multipart/form-data'],
        body: DocumentUploadRequest,
        response: { 201: Document, ...uploadErrors },
      },
    },
    async (request, reply) => reply.code(201).send(documentJson(await receive(request, clients, undefined))),
  );

  app.get(
    '/documents',
    {
      schema: {
        tags: TAGS,
        operationId: 'listDocuments',
        summary: 'List documents',
        description: 'Documents of the platform, newest first, optionally of one holder.',
        querystring: DocumentListQuery,
        response: { 200: DocumentList, ...errors },
      },
    },
    async (request) => {
      const q = request.query;
      const r = await clients.compliance.listDocuments({
        platformId: request.platform.id,
        documentHolder: q.documentHolder,
        page: pageOf(q),
      });
      return envelope(r.documents.map(documentJson), r.page);
    },
  );

  app.get(
    '/documents/:documentId',
    {
      schema: {
        tags: TAGS,
        operationId: 'getDocument',
        summary: 'Get a document',
        params: DocumentParams,
        response: { 200: Document, ...errors },
      },
    },
    async (request) => {
      const { document } = await clients.compliance.getDocument({
        platformId: request.platform.id,
        documentId: request.params.documentId,
      });
      return documentJson(document!);
    },
  );

  app.put(
    '/documents/:documentId',
    {
      validatorCompiler: streamedBody,
      schema: {
        tags: TAGS,
        operationId: 'replaceDocument',
        summary: 'Replace a document',
        description:
          'Replaces the file and metadata of a document (same rules as the upload; the holder stays). The old file is deleted once the new one is stored.',
        consumes: ['multipart/form-data'],
        params: DocumentParams,
        body: DocumentReplaceRequest,
        response: { 200: Document, ...uploadErrors },
      },
    },
    async (request) => documentJson(await receive(request, clients, request.params.documentId)),
  );

  app.delete(
    '/documents/:documentId',
    {
      schema: {
        tags: TAGS,
        operationId: 'deleteDocument',
        summary: 'Delete a document',
        description:
          'Deletes the document and its stored file. 409 DOCUMENT_IN_VERIFICATION while a verification of its customer is under way (IN_PROGRESS or PENDING_MANUAL_REVIEW).',
        params: DocumentParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      await clients.compliance.deleteDocument({
        platformId: request.platform.id,
        documentId: request.params.documentId,
      });
      return reply.code(204).send();
    },
  );

  app.get(
    '/documents/:documentId/file',
    {
      schema: {
        tags: TAGS,
        operationId: 'downloadDocumentFile',
        summary: 'Download the file of a document',
        description:
          'The file as uploaded (decrypted and authenticated chunk by chunk, streamed), with the Content-Type its content was recognised as and Content-Disposition: attachment with its file name. Not in the reference API (see docs/api-differences.md).',
        params: DocumentParams,
        response: {
          200: {
            description: 'The file',
            content: {
              'application/pdf': { schema: { type: 'string', format: 'binary' } },
              'image/jpeg': { schema: { type: 'string', format: 'binary' } },
              'image/png': { schema: { type: 'string', format: 'binary' } },
            },
          },
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const platformId = request.platform.id;
      const documentId = request.params.documentId;
      const first = await clients.compliance.readDocumentContent({ platformId, documentId, chunkIndex: 0 });
      const d = first.document!;
      async function* chunks(): AsyncGenerator<Buffer> {
        yield first.data;
        for (let i = 1; i < d.chunkCount; i++)
          yield (await clients.compliance.readDocumentContent({ platformId, documentId, chunkIndex: i }))
            .data;
      }
      return reply
        .header('content-type', d.contentType)
        .header('content-length', String(d.sizeBytes))
        .header('content-disposition', contentDisposition(d.fileName))
        .send(Readable.from(chunks(), { objectMode: false, highWaterMark: 1 }));
    },
  );
};

export default documentsRoutes;
