import type { FastifySchemaCompiler } from 'fastify';
import type { MultipartFile } from '@fastify/multipart';
import type { ClientStream, UploadMessage } from '@sluice/rpc';
import { HttpError } from './error-mapping.js';
import { createValidatorCompiler } from './validator.compiler.js';

/** The validator compiler of the multipart routes' own checks (the fields of a form, as they stream). */
export const multipartValidators = createValidatorCompiler();

/**
 * The validator compiler of a multipart route: its body is read by the handler as it streams
 * (the schema documents it in the OpenAPI document only); its params and query are validated as
 * on every route.
 */
export const streamedBody: FastifySchemaCompiler<unknown> = (route) =>
  route.httpPart === 'body' ? () => true : multipartValidators(route);

/** The 413 of a file part past its limit (Connection: close, so the rest of the body is not read). */
export function fileTooLarge(maxBytes: number, what: string): HttpError {
  return new HttpError(
    413,
    'PAYLOAD_TOO_LARGE',
    `The file is larger than ${maxBytes} bytes (${what})`,
    { maxBytes },
    { connection: 'close' },
  );
}

/** A file streamed to its service but not yet closed: the service stores nothing until `finish`. */
export interface PendingUpload<R> {
  /** Sends the trailer (the size) and waits for the service's answer. */
  finish(): Promise<R>;
  /** Abandons the upload (the service stores nothing). */
  cancel(): void;
}

/**
 * Streams a multipart file part to a client-streaming upload call as it arrives (each write
 * waiting for the transport: the gateway holds a chunk at a time, never the file): the header,
 * then the chunks. Past `maxBytes` the call is cancelled and the answer is 413 (register the
 * part's parser with `fileSize: maxBytes + 1`: that one byte too many is the refusal). The
 * upload stays open until `finish` — after the caller has read the rest of the form, so that a
 * form refused after its file (a part too many) leaves nothing stored: `cancel` then.
 */
export async function streamFilePart<H, R>(
  call: ClientStream<UploadMessage<H>, R>,
  part: MultipartFile,
  header: H,
  maxBytes: number,
  tooLarge: () => HttpError,
): Promise<PendingUpload<R>> {
  let size = 0;
  try {
    await call.write({ header });
    for await (const chunk of part.file as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw tooLarge();
      await call.write({ chunk });
    }
    if (part.file.truncated) throw tooLarge();
  } catch (err) {
    call.cancel();
    throw err;
  }
  return {
    async finish() {
      try {
        await call.write({ trailer: { sizeBytes: BigInt(size) } });
        return await call.end();
      } catch (err) {
        call.cancel();
        throw err;
      }
    },
    cancel: () => call.cancel(),
  };
}
