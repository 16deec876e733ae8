import { PERMISSIONS } from '@sluice/core';
import { Type, type Static } from '@sinclair/typebox';
import { Id, PageQuery, Timestamp } from './common.js';

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
  },
  { $id: 'ApiToken', additionalProperties: false },
);

export const ApiTokenWithSecret = Type.Object(
  {
    ...ApiToken.properties,
    clientSecret: Type.String({
      description: 'HTTP Basic password. Returned only in this response; only a hash is stored.',
    }),
  },
  { $id: 'ApiTokenWithSecret', additionalProperties: false },
);

export const ApiTokenCreateRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, description: 'Name to recognize the token by' }),
    permissions: Type.Array(Permission, { minItems: 1, uniqueItems: true }),
  },
  { additionalProperties: false },
);
export type ApiTokenCreateRequest = Static<typeof ApiTokenCreateRequest>;

export const TokenListQuery = Type.Object(
  {
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'Tokens with exactly this name' }),
    ),
    createdAfter: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive' })),
    createdBefore: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive' })),
    updatedAfter: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive' })),
    updatedBefore: Type.Optional(Type.String({ format: 'date-time', description: 'inclusive' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type TokenListQuery = Static<typeof TokenListQuery>;

export const TokenParams = Type.Object({ tokenId: Id('Token') }, { additionalProperties: false });
export type TokenParams = Static<typeof TokenParams>;
