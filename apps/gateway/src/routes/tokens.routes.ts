import type { Static } from '@sinclair/typebox';
import type { identity } from '@sluice/contracts';
import { iso } from '@sluice/api';
import type { RouteModule } from '../http/types.js';
import { envelope, errorResponses, pageOf } from '../schemas/common.js';
import {
  ApiToken,
  ApiTokenCreateRequest,
  ApiTokenList,
  ApiTokenWithSecret,
  TokenListQuery,
  TokenParams,
} from '../schemas/token.schemas.js';

type ApiTokenJson = Static<typeof ApiToken>;

function apiTokenJson(t: identity.ApiToken): ApiTokenJson {
  return {
    id: t.id,
    name: t.name,
    permissions: t.permissions.map((p) => p.replace(/^PERMISSION_/, '') as ApiTokenJson['permissions'][number]),
    clientId: t.clientId,
    createdAt: iso(t.createdAt)!,
    updatedAt: iso(t.updatedAt)!,
  };
}

const date = (v: string | undefined) => (v === undefined ? undefined : new Date(v));

/**
 * API tokens: `POST /tokens` (the client secret is in that response only),
 * `GET /tokens`, `GET /tokens/{tokenId}`, `DELETE /tokens/{tokenId}` (revokes;
 * the platform's last token cannot be deleted). Authenticate with HTTP Basic
 * `clientId:clientSecret` (clientId is the token id).
 */
const tokensRoutes: RouteModule = (app, { clients }) => {
  const TAGS = ['API Tokens'];
  const errors = errorResponses();

  app.post(
    '/tokens',
    {
      schema: {
        tags: TAGS,
        operationId: 'createToken',
        summary: 'Create an API token',
        description:
          'Creates an API token. The clientSecret is returned in this response only; store it safely.',
        body: ApiTokenCreateRequest,
        response: { 201: ApiTokenWithSecret, ...errors },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const r = await clients.identity.createToken({
        platformId: request.platform.id,
        name: body.name,
        permissions: body.permissions.map((p) => `PERMISSION_${p}` as identity.Permission),
      });
      return reply.code(201).send({ ...apiTokenJson(r.token!), clientSecret: r.clientSecret });
    },
  );

  app.get(
    '/tokens',
    {
      schema: {
        tags: TAGS,
        operationId: 'listTokens',
        summary: 'List API tokens',
        description: 'Live (not deleted) tokens, newest first. Date filters are inclusive.',
        querystring: TokenListQuery,
        response: { 200: ApiTokenList, ...errors },
      },
    },
    async (request) => {
      const q = request.query;
      const r = await clients.identity.listTokens({
        platformId: request.platform.id,
        name: q.name,
        createdAfter: date(q.createdAfter),
        createdBefore: date(q.createdBefore),
        updatedAfter: date(q.updatedAfter),
        updatedBefore: date(q.updatedBefore),
        page: pageOf(q),
      });
      return envelope(r.tokens.map(apiTokenJson), r.page);
    },
  );

  app.get(
    '/tokens/:tokenId',
    {
      schema: {
        tags: TAGS,
        operationId: 'getTokenById',
        summary: 'Get an API token',
        params: TokenParams,
        response: { 200: ApiToken, ...errors },
      },
    },
    async (request) => {
      const r = await clients.identity.getToken({ platformId: request.platform.id, tokenId: request.params.tokenId });
      return apiTokenJson(r.token!);
    },
  );

  app.delete(
    '/tokens/:tokenId',
    {
      schema: {
        tags: TAGS,
        operationId: 'deleteTokenById',
        summary: 'Delete (revoke) an API token',
        description:
          'The token stops authenticating at once. A platform must keep at least one token (400 CANNOT_DELETE_LAST_TOKEN).',
        params: TokenParams,
        response: { 204: { type: 'null', description: 'Token deleted' }, ...errors },
      },
    },
    async (request, reply) => {
      await clients.identity.deleteToken({ platformId: request.platform.id, tokenId: request.params.tokenId });
      return reply.code(204).send();
    },
  );
};

export default tokensRoutes;
