import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';

/** An answer of `sendStreaming`, with how far the request body had got when it came. */
export interface StreamedAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** Whether the client had written its whole body when the answer came. */
  sentAll: boolean;
  /** Request body bytes handed to the socket when the answer came. */
  sentBytes: number;
}

/**
 * One HTTP request whose body is written piece by piece, each write waiting for the socket to
 * drain, so `sentBytes` shows how far the server let the client get before it answered (a
 * server that refuses early and closes the connection answers long before a large body is sent).
 */
export function sendStreaming(
  url: string,
  method: string,
  body: Iterable<Buffer> | AsyncIterable<Buffer> | undefined,
  headers: Record<string, string> = {},
): Promise<StreamedAnswer> {
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    let sentAll = false;
    let answered = false;
    const req = httpRequest(url, { method, headers });
    req.on('response', (res) => {
      answered = true;
      const at = { sentAll, sentBytes };
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts), ...at }),
      );
      res.on('error', reject);
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    void (async () => {
      for await (const piece of body ?? []) {
        if (answered || req.destroyed) return;
        sentBytes += piece.length;
        if (!req.write(piece)) await new Promise((r) => req.once('drain', r));
      }
      sentAll = true;
      req.end();
    })().catch(() => undefined);
  });
}

/**
 * A multipart/form-data body, generated lazily: the fields, then the file part (its bytes given
 * in pieces), then any fields `after` it.
 */
export function multipartForm(
  fields: Record<string, string>,
  file: { name: string; type?: string; pieces: Iterable<Buffer> } | undefined,
  after: Record<string, string> = {},
): { headers: Record<string, string>; body: Iterable<Buffer> } {
  const boundary = `----sluice${randomBytes(8).toString('hex')}`;
  const field = (k: string, v: string) =>
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  function* body(): Generator<Buffer> {
    for (const [k, v] of Object.entries(fields)) yield field(k, v);
    if (file) {
      yield Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type ?? 'application/octet-stream'}\r\n\r\n`,
      );
      yield* file.pieces;
      yield Buffer.from('\r\n');
    }
    for (const [k, v] of Object.entries(after)) yield field(k, v);
    yield Buffer.from(`--${boundary}--\r\n`);
  }
  return { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: body() };
}

/** A small PDF (a valid header, catalogue and trailer). */
export const SMALL_PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
  'latin1',
);
/** A 1×1 JPEG. */
export const SMALL_JPEG = Buffer.from(
  '/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkICQkKDA8MCgsOCwkJDRENDg8QEBEQCgwSExIQEw8QEBD/yQALCAABAAEBAREA/8wABgAQEAX/2gAIAQEAAD8A0s8g/9k=',
  'base64',
);
/** A 1×1 PNG. */
export const SMALL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==',
  'base64',
);

/** `size` bytes of a PDF (its header, then spaces), generated 64 KiB at a time. */
export function* pdfOfSize(size: number): Generator<Buffer> {
  const piece = 64 * 1024;
  for (let at = 0; at < size; at += piece) {
    const b = Buffer.alloc(Math.min(piece, size - at), 0x20);
    if (at === 0) SMALL_PDF.copy(b, 0, 0, Math.min(SMALL_PDF.length, b.length));
    yield b;
  }
}
