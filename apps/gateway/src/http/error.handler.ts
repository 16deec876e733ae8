import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '@sluice/logging';
import { isDomainError } from '@sluice/core';
import {
  genericError,
  HttpError,
  INTERNAL_ERROR,
  invalidInputResponse,
  mapServiceError,
  type ErrorResponse,
} from './error-mapping.js';
import { toFieldErrors } from './validator.compiler.js';
import { UNAUTHORIZED_BODY, UnauthorizedError } from './auth.hook.js';
import { SECURITY_HEADERS, type SecurityHeaders } from './security.plugin.js';

interface Rendered {
  body: ErrorResponse;
  headers?: Record<string, string>;
  /** Unexpected: logged at error level with the stack. */
  unexpected?: boolean;
}

/**
 * What the multipart parser (@fastify/busboy) throws on a malformed body: plain Errors without
 * a code, known by their messages (a missing or over-long boundary, a body cut short).
 */
const MALFORMED_MULTIPART =
  /^(Multipart: Boundary not found|Boundary required|Unexpected end of multipart data|.{1,40} terminated early due to unexpected end of multipart data|The needle cannot have a length bigger than 256\.)$/;

/** Errors Fastify raises before a handler runs (body parsing, limits, routing). */
function fromFastify(err: FastifyError, bodyLimit: number): Rendered | undefined {
  if (err.validation) {
    return {
      body: invalidInputResponse(toFieldErrors(err.validation as never, err.validationContext ?? 'body')),
    };
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { body: invalidInputResponse([{ field: 'body', message: 'is not valid JSON' }]) };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return {
        body: invalidInputResponse([
          { field: 'body', message: 'is empty but Content-Type is application/json' },
        ]),
      };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        body: {
          status: 413,
          code: 'PAYLOAD_TOO_LARGE',
          message: `The request body exceeds ${bodyLimit} bytes`,
        },
      };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
    // @fastify/multipart's 406 for a multipart route sent another type: the same refusal.
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return {
        body: {
          status: 415,
          code: 'UNSUPPORTED_MEDIA_TYPE',
          message: 'Request bodies must be JSON (Content-Type: application/json)',
        },
      };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return {
        body: {
          status: 400,
          code: 'BAD_REQUEST',
          message: 'The request body does not match its Content-Length',
        },
      };
    case 'FST_ERR_BAD_URL':
      return { body: { status: 400, code: 'BAD_REQUEST', message: 'The request URL is malformed' } };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return {
        body: { status: 414, code: 'URI_TOO_LONG', message: 'A path segment of the request URL is too long' },
      };
  }
  if (
    typeof err.statusCode === 'number' &&
    err.statusCode >= 400 &&
    err.statusCode < 500 &&
    err.code?.startsWith('FST_')
  ) {
    return {
      body: {
        ...genericError(err.statusCode),
        status: err.statusCode,
        ...(err.statusCode === 400 ? { message: err.message } : {}),
      },
    };
  }
  return undefined;
}

/**
 * What the HTTP parser refuses before Fastify sees a request (headers or URL
 * over the size limit: 431; anything malformed: 400; too slow: 408), in the
 * error model too. The connection is closed afterwards.
 */
export function clientErrorAnswer(err: { code?: string }): { status: number; body: ErrorResponse } {
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body: ErrorResponse =
    status === 400 ? { status, code: 'BAD_REQUEST', message: 'The request is malformed' } : genericError(status);
  return { status, body };
}

const RAW_SECURITY_HEADERS = Object.entries(SECURITY_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');

/** Fastify's `clientErrorHandler`: the parser-level refusals of clientErrorAnswer (with the security headers). */
export function handleClientError(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, body } = clientErrorAnswer(err);
  const json = JSON.stringify(body);
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        RAW_SECURITY_HEADERS +
        `Content-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
    );
  socket.destroy(err);
}

/**
 * What an expected 5xx came from, for the log: a domain error's kind and message (a transport
 * failure is `unexpected` and logged whole instead).
 */
function causeOf(err: unknown): string {
  const cause = isDomainError(err) ? `${err.kind}: ${err.message}` : err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return cause.slice(0, 300);
}

/** Turns anything thrown while serving a request into the public `{status, code, message, details}`. */
export function renderError(err: unknown, bodyLimit: number): Rendered {
  if (err instanceof UnauthorizedError)
    return {
      body: { ...UNAUTHORIZED_BODY },
      headers: { 'www-authenticate': 'Basic realm="sluice", charset="UTF-8"' },
    };
  if (err instanceof HttpError)
    return { body: err.toResponse(), ...(err.headers ? { headers: err.headers } : {}) };
  const mapped = mapServiceError(err);
  if (mapped) {
    const headers: Record<string, string> | undefined =
      mapped.status === 503 || mapped.status === 429 ? { 'retry-after': '1' } : undefined;
    return {
      body: mapped,
      ...(headers ? { headers } : {}),
      unexpected: !isDomainError(err) && mapped.status >= 500,
    };
  }
  if (err && typeof err === 'object' && 'code' in err) {
    const f = fromFastify(err as FastifyError, bodyLimit);
    if (f) return f;
  }
  if (err instanceof Error && MALFORMED_MULTIPART.test(err.message))
    return { body: invalidInputResponse([{ field: 'body', message: 'is not a well-formed multipart/form-data body' }]) };
  return { body: INTERNAL_ERROR, unexpected: true };
}

/**
 * Fastify's `frameworkErrors`: what the router refuses before any hook runs (a
 * malformed URL, a path segment over maxParamLength) rendered like every error,
 * with the security headers the onRequest hook would have set.
 */
export function frameworkErrorHandler(bodyLimit: number, security: SecurityHeaders) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const r = renderError(err, bodyLimit);
    return reply
      .headers(security.for(request))
      .code(r.body.status)
      .type('application/json; charset=utf-8')
      .send(r.body);
  };
}

/**
 * The gateway's single error handler and its 404: every error leaves as
 * `{status, code, message, details}`; 5xx never carry internal detail (it is
 * logged with the request id instead).
 */
export function installErrorHandling(app: FastifyInstance, logger: Logger, bodyLimit: number): void {
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const r = renderError(err, bodyLimit);
    if (r.unexpected)
      logger.error({ err, route: request.routeOptions.url, method: request.method }, 'request failed');
    else if (r.body.status >= 500)
      // The client sees the public body only; the log keeps what caused it (a downstream status, a
      // transport failure), with the request id of the logging context.
      logger.warn(
        { code: r.body.code, route: request.routeOptions.url, cause: causeOf(err) },
        'request failed',
      );
    if (r.headers) reply.headers(r.headers);
    return reply.code(r.body.status).type('application/json; charset=utf-8').send(r.body);
  });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? request.url;
    return reply
      .code(404)
      .send({
        status: 404,
        code: 'NOT_FOUND',
        message: `No route ${request.method} ${path.slice(0, 200)}`,
      } satisfies ErrorResponse);
  });
}
