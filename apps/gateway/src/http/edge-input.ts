import type { IncomingMessage } from 'node:http';
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import { CONTROL_CHARACTERS, LONE_SURROGATE, invalidInput, type FieldError } from '@sluice/core';
import { HttpError } from './error-mapping.js';

/**
 * The rules every request meets at the edge, before any schema or backend sees
 * it (the schemas then validate each route's shape):
 * - bodies are JSON in UTF-8 (other bytes: 400 on `body`), uncompressed
 *   (`Content-Encoding` other than identity: 415);
 * - a number written with a fraction or an exponent is remembered from the JSON
 *   text, so an integer field refuses `100.000000000000001` (which JavaScript
 *   reads as 100) and `1e2` (see INTEGER_LITERAL_KEYWORD);
 * - a query is percent-encoded UTF-8 (`%FF` is 400 on its parameter);
 * - no string (value or key, in the body, query or path) holds a control
 *   character or a lone UTF-16 surrogate, is longer than MAX_STRING_LENGTH, or
 *   sits deeper than MAX_DEPTH;
 * - a route without a body schema takes no body (none, null or `{}`);
 * - a body declared larger than the limit is 413 before anything else runs (refuseOversizedBodies).
 */

/**
 * How much of a body declared over the limit is read, and discarded, before its 413: at most this
 * many times the limit, for at most OVERSIZED_DRAIN_MS.
 */
const OVERSIZED_DRAIN_FACTOR = 4;
const OVERSIZED_DRAIN_MS = 10_000;

/** Longest string accepted anywhere (schemas set tighter bounds per field). */
export const MAX_STRING_LENGTH = 16_384;
/** Deepest nesting of a JSON body. */
export const MAX_DEPTH = 32;
/** Longest path segment (an id in the URL); longer is 414 (the router's maxParamLength). */
export const MAX_PATH_SEGMENT_LENGTH = 500;
/** The request line and headers together, at most (Node's default maxHeaderSize); more is 431. */
export const MAX_HEADER_BYTES = 16_384;
/** Decodes a body, throwing on bytes that are not UTF-8. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** At most this many problems are reported for one request. */
const MAX_PROBLEMS = 20;

/** Ajv keyword added to every `integer` of a body schema: fails when the number was written with a fraction or exponent. */
export const INTEGER_LITERAL_KEYWORD = 'integerLiteral';

const kNonIntegerLiterals = Symbol('sluice.nonIntegerLiterals');
type Marked = { [kNonIntegerLiterals]?: Set<string> };

/** The JSON pointers (`/a/b/0`, Ajv's instancePath form) of the numbers written with `.`, `e` or `E`. */
export function nonIntegerLiterals(text: string): Set<string> {
  const found = new Set<string>();
  if (!/[0-9][.eE]/.test(text)) return found;
  type Frame = { array: boolean; path: string; index: number; key: string | undefined };
  const stack: Frame[] = [];
  let expectKey = false;
  const valuePath = (): string => {
    const top = stack[stack.length - 1];
    if (!top) return '';
    const seg = top.array ? String(top.index) : (top.key ?? '').replace(/~/g, '~0').replace(/\//g, '~1');
    return `${top.path}/${seg}`;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '{' || c === '[') {
      stack.push({ array: c === '[', path: valuePath(), index: 0, key: undefined });
      expectKey = c === '{';
      i++;
    } else if (c === '}' || c === ']') {
      stack.pop();
      i++;
    } else if (c === ',') {
      const top = stack[stack.length - 1];
      if (top?.array) top.index++;
      else expectKey = true;
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (expectKey) {
        stack[stack.length - 1]!.key = JSON.parse(text.slice(i, j + 1)) as string;
        expectKey = false;
      }
      i = j + 1;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      let j = i + 1;
      while (j < text.length && /[0-9.eE+-]/.test(text[j]!)) j++;
      if (/[.eE]/.test(text.slice(i, j))) found.add(valuePath());
      i = j;
    } else {
      i++;
    }
  }
  return found;
}

/** True when the body's number at `instancePath` was written with a fraction or exponent. */
export function writtenAsNonInteger(rootData: unknown, instancePath: string): boolean {
  return (rootData as Marked | null)?.[kNonIntegerLiterals]?.has(instancePath) ?? false;
}

/** Parses a JSON body and remembers which numbers were not written as integers. */
function markLiterals(text: string, parsed: unknown): unknown {
  if (parsed !== null && typeof parsed === 'object') {
    const literals = nonIntegerLiterals(text);
    if (literals.size) Object.defineProperty(parsed, kNonIntegerLiterals, { value: literals });
  }
  return parsed;
}

function join(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  return base ? `${base}.${key}` : key;
}

/** Problems of one string (a value or a key). */
function textProblem(s: string): string | undefined {
  if (s.length > MAX_STRING_LENGTH) return `must have at most ${MAX_STRING_LENGTH} characters`;
  if (CONTROL_CHARACTERS.test(s)) return 'must not contain control characters';
  if (LONE_SURROGATE.test(s)) return 'must be valid Unicode text (it holds a lone surrogate)';
  return undefined;
}

/**
 * Every string of `value` (values and keys, at any depth) checked: field errors
 * named as JSON paths (`address.line1`, `tags[1]`), `part` for the root.
 */
export function textProblems(value: unknown, part: string): FieldError[] {
  const problems: FieldError[] = [];
  const todo: { v: unknown; field: string; depth: number }[] = [{ v: value, field: '', depth: 0 }];
  while (todo.length && problems.length < MAX_PROBLEMS) {
    const { v, field, depth } = todo.pop()!;
    if (typeof v === 'string') {
      const p = textProblem(v);
      if (p) problems.push({ field: field || part, message: p });
    } else if (v !== null && typeof v === 'object') {
      if (depth >= MAX_DEPTH) {
        problems.push({ field: field || part, message: `must not be nested more than ${MAX_DEPTH} levels deep` });
        continue;
      }
      if (Array.isArray(v)) v.forEach((x, i) => todo.push({ v: x, field: join(field, i), depth: depth + 1 }));
      else
        for (const [k, x] of Object.entries(v)) {
          const p = textProblem(k);
          // A bad key is reported where it sits, never echoed.
          if (p) problems.push({ field: field || part, message: `a field name here ${p}` });
          else todo.push({ v: x, field: join(field, k), depth: depth + 1 });
        }
    }
  }
  return problems;
}


/**
 * The query parameters of `url` whose percent-encoding is not UTF-8 (`%FF`, `%ED%A0%80`): the
 * query parser would keep them as raw text, so a filter would search for `%FF` literally.
 */
export function queryEncodingProblems(url: string): FieldError[] {
  const at = url.indexOf('?');
  if (at < 0) return [];
  const problems: FieldError[] = [];
  const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
  for (const pair of url.slice(at + 1).split('&')) {
    const eq = pair.indexOf('=');
    const [key, value] = eq < 0 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
    let name = 'query';
    try {
      const decoded = decode(key);
      if (!textProblem(decoded) && decoded.length <= 100) name = decoded;
      decode(value);
    } catch {
      if (problems.length < MAX_PROBLEMS) problems.push({ field: name, message: 'is not valid percent-encoded UTF-8' });
    }
  }
  return problems;
}

/**
 * Installs the edge rules on the whole app: the JSON parser (the only body
 * type), 415 for encoded bodies, and the string checks of body, query and path.
 */
export function installEdgeInput(app: FastifyInstance): void {
  // JSON only (anything else is 415); an empty body with Content-Type: application/json is "no body", not a parse error.
  const jsonParser = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    let text: string;
    try {
      // Strict: bytes that are not UTF-8 are refused, never read as U+FFFD into a stored field.
      text = typeof body === 'string' ? body : UTF8.decode(body);
    } catch {
      done(invalidInput([{ field: 'body', message: 'is not valid UTF-8' }]) as never, undefined);
      return;
    }
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    jsonParser(request, text, (err, parsed) => {
      // The parser refuses a `__proto__` key (prototype pollution) as if the JSON were malformed: name it.
      if (err && /"__proto__"\s*:/.test(text))
        done(invalidInput([{ field: '__proto__', message: 'is not accepted as a field name' }]) as never, undefined);
      else if (err) done(err, undefined);
      else done(null, markLiterals(text, parsed));
    });
  });

  // The gateway does not decompress: an encoded body would be read as plain text.
  app.addHook('preParsing', async (request: FastifyRequest) => {
    const encoding = request.headers['content-encoding']?.trim().toLowerCase();
    if (encoding && encoding !== 'identity')
      throw new HttpError(
        415,
        'UNSUPPORTED_MEDIA_TYPE',
        'Content-Encoding is not supported: send the body uncompressed (Content-Type: application/json)',
      );
  });

  app.addHook('preValidation', async (request: FastifyRequest) => {
    const problems = [
      ...queryEncodingProblems(request.url),
      ...textProblems(request.params, 'path'),
      ...textProblems(request.query, 'query'),
      ...textProblems(request.body, 'body'),
    ];
    if (problems.length) throw invalidInput(problems.slice(0, MAX_PROBLEMS));
  });
}

/**
 * A body whose Content-Length is over the limit is 413 PAYLOAD_TOO_LARGE at once, before
 * authentication or any backend call, and after its bytes were read and discarded: the client,
 * still writing its body, can then read the answer, and the connection stays open. Answered while
 * the client still writes (Fastify's own refusal, which then closes the connection), the unread
 * bytes make the close a reset, and a client may lose the answer to its write's EPIPE (CI saw it:
 * tests/e2e/generated-input.spec.ts, an oversized body on POST /agents/me/quotes). A body more than
 * OVERSIZED_DRAIN_FACTOR times the limit, or not sent within OVERSIZED_DRAIN_MS, is not read: its
 * 413 closes the connection. A body without Content-Length (chunked) is refused by the parser
 * once it passes the limit, as before. Multipart uploads (documents, bulk imports) stream their file
 * under limits of their own (http/multipart.ts) and are left alone.
 */
export function refuseOversizedBodies(app: FastifyInstance): void {
  // Fastify's own limit (BODY_LIMIT_BYTES), the one its parser enforces: one number for both.
  const limit = app.initialConfig.bodyLimit!;
  app.addHook('onRequest', async (request, reply) => {
    const declared = Number(request.headers['content-length']);
    if (!(declared > limit) || /^\s*multipart\//i.test(request.headers['content-type'] ?? '')) return;
    const read = declared <= limit * OVERSIZED_DRAIN_FACTOR && (await discardBody(request.raw, OVERSIZED_DRAIN_MS));
    if (!read) reply.header('connection', 'close');
    throw new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();
  });
}

/** Reads a request's body to its end and drops it; false if it did not end within `ms`. */
function discardBody(req: IncomingMessage, ms: number): Promise<boolean> {
  if (req.readableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    const drop = () => {};
    const done = (ended: boolean) => {
      clearTimeout(timer);
      req.off('end', onEnd).off('error', onError).off('data', drop);
      resolve(ended);
    };
    const onEnd = () => done(true);
    const onError = () => done(false);
    const timer = setTimeout(() => done(false), ms);
    req.on('end', onEnd).on('error', onError).on('data', drop);
  });
}

/** Whether the request carries body bytes (a non-zero Content-Length, or a chunked body). */
function sentBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

/**
 * In the API scope: a route that declares no body schema takes no body (a GET
 * or HEAD with body bytes is 400 too); `{}`
 * or `null` are accepted as "nothing", anything else is 400 on `body` (it
 * would otherwise be ignored, whatever it is).
 */
export function refuseUnexpectedBodies(scope: FastifyInstance): void {
  scope.addHook('preValidation', async (request: FastifyRequest) => {
    const body = request.body;
    // Fastify does not read the body of a GET or HEAD: one sent anyway is refused, not ignored.
    if (body === undefined && (request.method === 'GET' || request.method === 'HEAD') && sentBody(request))
      throw invalidInput([{ field: 'body', message: `must be empty (${request.method} takes no body)` }]);
    if (request.routeOptions.schema?.body !== undefined || body === undefined || body === null) return;
    if (typeof body !== 'object' || Array.isArray(body))
      throw invalidInput([{ field: 'body', message: 'must be empty (this operation takes no body)' }]);
    const fields = Object.keys(body).slice(0, MAX_PROBLEMS);
    if (fields.length)
      throw invalidInput(
        fields.map((field) => ({ field, message: 'is not a field of this request (it takes no body)' })),
      );
  });
}
