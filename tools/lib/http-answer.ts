import type { IncomingMessage } from 'node:http';

/** An HTTP answer read whole: status, Content-Type, text, and the JSON it holds (undefined when none). */
export interface HttpAnswer {
  status: number;
  contentType: string;
  /** The Retry-After header, when given. */
  retryAfter?: string;
  /** The X-Request-Id the gateway answered with (the id its log lines for the request carry). */
  requestId?: string;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read field by field
  json: any;
}

/** Reads a node:http response to its end (the measuring and fuzzing clients' one reader). */
export function readAnswer(res: IncomingMessage, resolve: (a: HttpAnswer) => void, reject: (e: Error) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const retryAfter = res.headers['retry-after'];
    const requestId = res.headers['x-request-id'];
    resolve({
      status: res.statusCode ?? 0,
      contentType: String(res.headers['content-type'] ?? ''),
      ...(retryAfter ? { retryAfter: String(retryAfter) } : {}),
      ...(requestId ? { requestId: String(requestId) } : {}),
      text,
      json,
    });
  });
  res.on('error', reject);
}
