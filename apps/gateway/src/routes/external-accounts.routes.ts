import type { FastifyRequest } from 'fastify';
import { accounts } from '@sluice/contracts';
import { ExternalAccount, externalAccountJson } from '@sluice/api';
import { environmentOf } from '../http/request.helpers.js';
import type { RouteModule } from '../http/types.js';
import { envelope, errorResponses, pageOf } from '../schemas/common.js';
import {
  accountInfoPb,
  CustomerExternalAccountCreateRequest,
  CustomerExternalAccountList,
  CustomerExternalAccountsQuery,
  ExternalAccountParams,
  PlatformExternalAccountCreateRequest,
  PlatformExternalAccountList,
  PlatformExternalAccountsQuery,
} from '../schemas/external-account.schemas.js';

type ListQuery = { currency?: string; customerId?: string; limit?: number; cursor?: string };

const TAGS = ['External Accounts'];
const errors = errorResponses(409);

/**
 * Bodies of these routes are written with JSON.stringify: they are built by the one mapper
 * (`externalAccountJson`) in the public shape, and fast-json-stringify would compile an Ajv
 * validator for each of the 43 `accountInfo` variants (and their beneficiaries) on the first
 * response of each route to pick the branch to write (seconds per route). The schemas still
 * document the responses; libs/api's tests check the mapper against them and the reference.
 */
const serializerCompiler = () => (data: unknown) => JSON.stringify(data);

/**
 * External accounts (bank accounts and wallets used as payment destinations or
 * sources), of the platform's customers (`/customers/external-accounts`) and of the
 * platform itself (`/platform/external-accounts`), served by the accounts service.
 * Another platform's account id answers 404; deleted accounts are gone from reads.
 */
const externalAccountsRoutes: RouteModule = (app, deps) => {
  const { clients } = deps;

  const list = async (platformId: string, owner: accounts.Owner, q: ListQuery) => {
    const res = await clients.accounts.listExternalAccounts({
      platformId,
      owner,
      ...(q.customerId ? { customerId: q.customerId } : {}),
      ...(q.currency ? { currency: q.currency } : {}),
      page: pageOf(q),
    });
    return envelope(res.accounts.map(externalAccountJson), res.page);
  };

  const create = async (request: FastifyRequest, body: CustomerExternalAccountCreateRequest) => {
    const { account } = await clients.accounts.createExternalAccount({
      platformId: request.platform.id,
      environment: environmentOf(request),
      ...(body.customerId ? { customerId: body.customerId } : {}),
      currency: body.currency,
      accountInfo: accountInfoPb(body.accountInfo),
      ...(body.platformAccountId ? { platformAccountId: body.platformAccountId } : {}),
      ...(body.defaultUmaDepositAccount !== undefined
        ? { defaultUmaDepositAccount: body.defaultUmaDepositAccount }
        : {}),
    });
    return externalAccountJson(account!);
  };

  /** GET and DELETE by id, under both prefixes (the id is the platform's, whoever owns it). */
  const byId = (prefix: '/customers' | '/platform', opIds: { get: string; del: string }) => {
    app.get(
      `${prefix}/external-accounts/:externalAccountId`,
      {
        serializerCompiler,
        schema: {
          tags: TAGS,
          operationId: opIds.get,
          summary: 'Get an external account',
          params: ExternalAccountParams,
          response: { 200: ExternalAccount, ...errors },
        },
      },
      async (request) => {
        const { account } = await clients.accounts.getExternalAccount({
          platformId: request.platform.id,
          accountId: request.params.externalAccountId,
        });
        return externalAccountJson(account!);
      },
    );
    app.delete(
      `${prefix}/external-accounts/:externalAccountId`,
      {
        serializerCompiler,
        schema: {
          tags: TAGS,
          operationId: opIds.del,
          summary: 'Delete an external account',
          description: 'The account disappears from every read; 404 when it was deleted already.',
          params: ExternalAccountParams,
          response: { 204: { type: 'null', description: 'Deleted' }, ...errors },
        },
      },
      async (request, reply) => {
        await clients.accounts.deleteExternalAccount({
          platformId: request.platform.id,
          accountId: request.params.externalAccountId,
        });
        return reply.code(204).send();
      },
    );
  };

  app.get(
    '/customers/external-accounts',
    {
      serializerCompiler,
      schema: {
        tags: TAGS,
        operationId: 'listCustomerExternalAccounts',
        summary: 'List customer external accounts',
        description:
          'External accounts of the platform’s customers, oldest first. Filters: currency, customerId; without filters, all of them (paginated).',
        querystring: CustomerExternalAccountsQuery,
        response: { 200: CustomerExternalAccountList, ...errors },
      },
    },
    async (request) => list(request.platform.id, accounts.Owner.CUSTOMERS, request.query),
  );

  app.post(
    '/customers/external-accounts',
    {
      serializerCompiler,
      schema: {
        tags: TAGS,
        operationId: 'createCustomerExternalAccount',
        summary: 'Add an external account',
        description:
          'Registers a bank account, mobile money account or wallet for a customer (for the platform when customerId is absent). accountInfo is one of 43 variants by accountType; each is validated for its country (ABA, IBAN and BIC of the country, CLABE, CPF/CNPJ, PIX keys, UPI addresses, bank and branch codes, mobile numbers of the country, wallet addresses...). Bank variants name their beneficiary (its name is verified: beneficiaryVerificationStatus) and may choose their paymentRails (default: every rail whose fields are given); every bank account answers its paymentRails. Sandbox: the last 3 digits of the primary identifier select the verification outcome (102 NOT_MATCHED, 103 PARTIAL_MATCH, 104 PENDING, 105 invalid account → 400, 106 UNSUPPORTED, 107 CHECKED_BY_RECEIVING_FI, other MATCHED). 404 CUSTOMER_NOT_FOUND for an unknown or deleted customer; 409 when the same account is already registered.',
        body: CustomerExternalAccountCreateRequest,
        response: { 201: ExternalAccount, ...errors },
      },
    },
    async (request, reply) => reply.code(201).send(await create(request, request.body)),
  );
  byId('/customers', { get: 'getCustomerExternalAccountById', del: 'deleteCustomerExternalAccountById' });

  app.get(
    '/platform/external-accounts',
    {
      serializerCompiler,
      schema: {
        tags: TAGS,
        operationId: 'listPlatformExternalAccounts',
        summary: 'List platform external accounts',
        description: 'External accounts that belong to the platform itself, oldest first. Filter: currency.',
        querystring: PlatformExternalAccountsQuery,
        response: { 200: PlatformExternalAccountList, ...errors },
      },
    },
    async (request) => list(request.platform.id, accounts.Owner.PLATFORM, request.query),
  );

  app.post(
    '/platform/external-accounts',
    {
      serializerCompiler,
      schema: {
        tags: TAGS,
        operationId: 'createPlatformExternalAccount',
        summary: 'Add a platform external account',
        description:
          'Registers a bank account or wallet of the platform itself; validation and beneficiary verification as for customer accounts.',
        body: PlatformExternalAccountCreateRequest,
        response: { 201: ExternalAccount, ...errors },
      },
    },
    async (request, reply) => reply.code(201).send(await create(request, request.body)),
  );
  byId('/platform', { get: 'getPlatformExternalAccountById', del: 'deletePlatformExternalAccountById' });
};

export default externalAccountsRoutes;
