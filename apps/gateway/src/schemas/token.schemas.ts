import { PERMISSIONS } from '@sluice/core';
import { Type } from '@sinclair/typebox';
import { Id, Page, Timestamp } from '@sluice/api';
import { DateTimeFilter, PageQuery, named } from './common.js';

/** REST schemas of `/tokens`. */

export const Permission = Type.Union(
  PERMISSIONS.map((v) => Type.Literal(v)),
  {
    $id: 'Permission',
    description:
      'VIEW: read all data (config, customers, transactions); TRANSACT: send payments; MANAGE: manage config, API tokens and customers',
  },
);

export const ApiToken = Type.Object(
  {
    id: Id('Token'),
    name: Type.String(),
    permissions: Type.Array(Permission),
    clientId: Type.String({ description: 'HTTP Basic user name (the token id)' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    clientSecret: Type.Optional(
      Type.String({
        description: 'HTTP Basic password. Returned only by POST /tokens; only a hash is stored.',
      }),
    ),
  },
  { $id: 'ApiToken', additionalProperties: false },
);

/** POST /tokens answers the reference's ApiToken, with its clientSecret. */
export const ApiTokenWithSecret = ApiToken;

export const ApiTokenList = Page(ApiToken, 'TokenListResponse');

export const ApiTokenCreateRequest = named('ApiTokenCreateRequest', Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, description: 'Name to recognize the token by' }),
    permissions: Type.Array(Permission, { minItems: 1, maxItems: PERMISSIONS.length, uniqueItems: true }),
  },
  { additionalProperties: false },
));

export const TokenListQuery = Type.Object(
  {
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'Tokens with exactly this name' }),
    ),
    createdAfter: Type.Optional(DateTimeFilter('inclusive')),
    createdBefore: Type.Optional(DateTimeFilter('inclusive')),
    updatedAfter: Type.Optional(DateTimeFilter('inclusive')),
    updatedBefore: Type.Optional(DateTimeFilter('inclusive')),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const TokenParams = Type.Object({ tokenId: Id('Token') }, { additionalProperties: false });
