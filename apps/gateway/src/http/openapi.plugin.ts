import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Currency, openApiWebhooks } from '@sluice/api';
import { ErrorBody } from '../schemas/common.js';
import { SchemaRegistry } from './route-schema.normalizer.js';
import { requiredPermissions } from './types.js';
import { IDEMPOTENCY_HEADER, REPLAYED_HEADER } from './idempotency.hook.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../domain/idempotency.js';
import { MAX_DEPTH, MAX_HEADER_BYTES, MAX_PATH_SEGMENT_LENGTH, MAX_STRING_LENGTH } from './edge-input.js';

type Json = Record<string, unknown>;

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** Error responses every authenticated operation may give (added to the document unless the route declares them). */
function defaultErrors(method: string): Record<string, string> {
  const errors: Record<string, string> = {
    '400': 'Invalid input (`INVALID_INPUT` with `details.errors[{field, message}]`)',
    '401': 'Missing or invalid API credentials (`UNAUTHORIZED`)',
    '403': 'The API token lacks the permission, or the endpoint is sandbox-only',
    // Answered before any route runs, so possible on every operation (a GET can carry a body too).
    '413': 'Request body too large (`PAYLOAD_TOO_LARGE`; the limit is in the API description)',
    '414': `A path segment of the URL is longer than ${MAX_PATH_SEGMENT_LENGTH} characters (\`URI_TOO_LONG\`)`,
    '415': 'Request body is not JSON, or is encoded (`UNSUPPORTED_MEDIA_TYPE`)',
    '429':
      'Too many requests (`RATE_LIMITED`, with `Retry-After` in seconds): a rate limit per API token, per agent token, per address, or on failed authentications; counted answers carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`. Or `TOO_MANY_CONNECTIONS`: the client holds more open connections than the gateway allows (the connection is closed after the answer)',
    '431': `Request line and headers together exceed ${MAX_HEADER_BYTES} bytes (\`REQUEST_HEADERS_TOO_LARGE\`)`,
    '500': 'Internal error (`INTERNAL_ERROR`); details are never exposed',
    '503': 'Temporarily unavailable (`SERVICE_UNAVAILABLE`, with `Retry-After` in seconds): a service this operation needs is down or slow, or (quote executes, transfers) payments arrive faster than they settle and this one waited its turn too long; nothing was done, retry later',
  };
  if (method === 'POST') {
    errors['409'] =
      'Conflict, or `IDEMPOTENCY_KEY_IN_PROGRESS`: a request with the same Idempotency-Key is still running';
    errors['422'] = '`IDEMPOTENCY_KEY_REUSED`: the Idempotency-Key was used with another body or endpoint';
  }
  return errors;
}

/** A default operationId: `GET /customers/:customerId/fund` → `getCustomersByCustomerIdFund`. */
export function operationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((seg) => (seg.startsWith(':') ? `by-${seg.slice(1)}` : seg));
  const camel = words
    .join('-')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
  return method.toLowerCase() + camel;
}

export interface OpenApiOptions {
  basePath: string;
  registry: SchemaRegistry;
  /** BODY_LIMIT_BYTES, stated in the description with the other input limits. */
  bodyLimit: number;
}

/**
 * Route schema normalization, the OpenAPI 3.1 document and the docs page.
 *
 * Must be registered before any route: its onRoute hook normalizes each route
 * schema (see SchemaRegistry) before Fastify compiles it and before
 * @fastify/swagger records it. The document is generated from the same
 * schemas that validate requests and serialize responses, served at
 * `<base>/openapi.json`; the Swagger UI (assets served locally) at `<base>/docs`.
 */
export async function registerOpenApi(app: FastifyInstance, opts: OpenApiOptions): Promise<void> {
  const { basePath, registry, bodyLimit } = opts;
  registry.normalize(ErrorBody);
  registry.normalize(Currency);

  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.schema) route.schema = registry.normalizeRoute(route.schema);
  });

  const version = basePath.split('/').pop()!;
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Sluice API',
        version,
        description:
          'Payments, accounts and embedded-wallet authentication. Authenticate with HTTP Basic `<api token id>:<api client secret>`. ' +
          'Every POST accepts an `Idempotency-Key`; every response carries `X-Request-Id`. Errors are `{status, code, message, details}`. ' +
          `Input limits, on every operation: a body is JSON in UTF-8 of at most ${bodyLimit} bytes (413), nested at most ${MAX_DEPTH} levels; ` +
          `no string (value or field name, in body, query or path) is longer than ${MAX_STRING_LENGTH} characters or holds a control character or a lone surrogate; ` +
          `a query is percent-encoded UTF-8; a path segment is at most ${MAX_PATH_SEGMENT_LENGTH} characters (414); the request line and headers at most ${MAX_HEADER_BYTES} bytes (431); ` +
          'numbers are finite and integers within ±9007199254740991. A GET takes no body (400).',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: basePath, description: 'this server' }],
      components: {
        securitySchemes: {
          BasicAuth: {
            type: 'http',
            scheme: 'basic',
            description: 'API token authentication: `<api token id>:<api client secret>`',
          },
          AgentAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              'Agent routes (`/agents/me...`) only: the `accessToken` of POST /agents/device-codes/{code}/redeem. Every request is bound to the agent’s customer and subject to its policy.',
          },
        },
      },
      security: [{ BasicAuth: [] }],
    },
    transform: ({ schema, url, route }) => {
      const s = { ...((schema ?? {}) as FastifySchema & Json) };
      if (s.hide) return { schema: s, url };
      const method = (Array.isArray(route.method) ? route.method[0] : route.method) as string;
      if (s.body !== undefined) s.body = registry.toRefs(s.body, false);
      const responses: Json = {};
      for (const [status, r] of Object.entries((s.response ?? {}) as Json)) {
        const ref = registry.toRefs(r, false) as Json;
        const description = (r as Json).description;
        responses[status] = ref.$ref && typeof description === 'string' ? { description, ...ref } : ref;
      }
      for (const [status, description] of Object.entries(defaultErrors(method))) {
        responses[status] ??= { description, ...ERROR_REF };
      }
      s.response = responses;
      if (method === 'POST') {
        const headers = (s.headers ?? { type: 'object', properties: {} }) as Json & { properties?: Json };
        s.headers = {
          ...headers,
          properties: {
            ...(headers.properties ?? {}),
            [IDEMPOTENCY_HEADER]: {
              type: 'string',
              minLength: 1,
              maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
              description:
                `Makes the request safe to retry for 24 hours: the same key with the same body replays the first response ` +
                `(header \`${REPLAYED_HEADER}: true\`); with another body or endpoint it is 422; while the first is running, 409.`,
            },
          },
        };
      }
      s.operationId ??= operationId(method, url.startsWith(basePath) ? url.slice(basePath.length) : url);
      const auth = (route.config as { auth?: string } | undefined)?.auth ?? 'platform';
      if (auth === 'agent') s.security = [{ AgentAuth: [] }];
      else if (auth === 'none') s.security = [];
      else
        s['x-permissions'] = requiredPermissions(
          method,
          (route.config as { permission?: never } | undefined)?.permission,
        );
      return { schema: s, url };
    },
    transformObject: (documentObject) => {
      const doc = (documentObject as { openapiObject: Json }).openapiObject as Json & {
        components: Json & { schemas?: Json };
      };
      // The webhooks the platform receives, from the event catalogue (named schemas become $refs).
      doc.webhooks = openApiWebhooks((schema) => registry.toRefs(registry.normalize(schema), false));
      const schemas: Json = { ...(doc.components.schemas ?? {}) };
      for (const [id, schema] of registry.entries()) schemas[id] = registry.toRefs(schema, true);
      doc.components = { ...doc.components, schemas };
      return doc as never;
    },
  });

  await app.register(swaggerUi, {
    routePrefix: `${basePath}/docs`,
    uiConfig: { docExpansion: 'list', deepLinking: true },
    staticCSP:
      "default-src 'self'; base-uri 'self'; font-src 'self' data:; frame-ancestors 'none'; img-src 'self' data:; " +
      "object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'",
  });

  app.get(`${basePath}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
}
