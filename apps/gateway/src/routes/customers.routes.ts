import type { FastifyRequest } from 'fastify';
import { identity } from '@sluice/contracts';
import { Customer, customerJson, type BusinessInfo } from '@sluice/api';
import { isDomainError } from '@sluice/core';
import { HttpError } from '../http/error-mapping.js';
import { environmentOf, headerOf } from '../http/request.helpers.js';
import type { GatewayClients, RouteModule } from '../http/types.js';
import { envelope, errorResponses, pageOf } from '../schemas/common.js';
import {
  CustomerCreateRequest,
  CustomerList,
  CustomerListQuery,
  CustomerParams,
  CustomerUpdateRequest,
} from '../schemas/customer.schemas.js';

const TAGS = ['Customers'];
const errors = errorResponses(409, 410);

const date = (v: string | undefined) => (v === undefined ? undefined : new Date(v));
const customerType = (t: 'INDIVIDUAL' | 'BUSINESS') => `CUSTOMER_TYPE_${t}` as identity.CustomerType;

function businessInfoPb(b: Partial<BusinessInfo>): identity.BusinessInfo {
  return {
    ...b,
    countriesOfOperation: b.countriesOfOperation ?? [],
    expectedRecipientJurisdictions: b.expectedRecipientJurisdictions ?? [],
  };
}

/** kycStatus / kybStatus of a self-verifying platform's request (identity checks who may set it). */
const verificationStatus = (s: string | undefined) =>
  s === undefined ? undefined : (`VERIFICATION_STATUS_${s}` as identity.VerificationStatus);

/** The fields of a create or update that depend on the customer type. */
function typedFields(body: CustomerCreateRequest | CustomerUpdateRequest) {
  return body.customerType === 'INDIVIDUAL'
    ? {
        fullName: body.fullName,
        birthDate: body.birthDate,
        nationality: body.nationality,
        verificationStatus: verificationStatus(body.kycStatus),
      }
    : {
        businessInfo: body.businessInfo ? businessInfoPb(body.businessInfo) : undefined,
        verificationStatus: verificationStatus(body.kybStatus),
      };
}

/**
 * Makes the customer's internal accounts exist (one per enabled currency)
 * before the answer, so a client reads its writes. Idempotent on the accounts
 * side, so transport failures are retried briefly; a business rejection is not.
 */
async function ensureCustomerAccounts(
  clients: GatewayClients,
  request: FastifyRequest,
  c: identity.Customer,
): Promise<void> {
  const req = {
    platformId: request.platform.id,
    customerId: c.id,
    currencies: c.currencies,
    environment: environmentOf(request),
  };
  for (let attempt = 1; ; attempt++) {
    try {
      await clients.accounts.ensureCustomerAccounts(req);
      return;
    } catch (err) {
      if (isDomainError(err) || attempt >= 3) throw err;
      request.log.warn({ err, attempt }, 'ensureCustomerAccounts failed; retrying');
      await new Promise((r) => setTimeout(r, 100 * 3 ** (attempt - 1)));
    }
  }
}

/** The reference API answers 410 for a customer that was deleted; gRPC has no such status. */
function goneIfDeleted(err: unknown): never {
  if (isDomainError(err) && err.code === 'CUSTOMER_DELETED')
    throw new HttpError(410, err.code, err.message, err.details);
  throw err;
}

/**
 * Customers (individual and business): `POST /customers` (accounts exist when it
 * answers; the Idempotency-Key makes a retry return the same customer),
 * `GET /customers` (filters, keyset pages), `GET/PATCH/DELETE
 * /customers/{customerId}`. Delete is soft: the customer stays readable with
 * `isDeleted: true`, is left out of lists unless `isIncludingDeleted=true`, and
 * a second DELETE or a PATCH answers 410 CUSTOMER_DELETED.
 */
const customersRoutes: RouteModule = (app, { clients }) => {
  app.post(
    '/customers',
    {
      schema: {
        tags: TAGS,
        operationId: 'createCustomer',
        summary: 'Create a customer',
        description:
          'Creates an INDIVIDUAL or BUSINESS customer with KYC/KYB status UNVERIFIED; a platform that is a regulated financial institution (isRegulatedFinancialInstitution) verifies its own customers and may give kycStatus / kybStatus, applied as a change from UNVERIFIED (its CUSTOMER.KYC_* / KYB_* webhook, as a compliance decision sends); from any other platform it is a 400 naming the field. currencies default to the platform supportedCurrencies; an umaAddress is generated when none is given. The customer internal accounts (one per currency) exist when this returns. 409 CUSTOMER_ALREADY_EXISTS / UMA_ADDRESS_EXISTS when a live customer already has the platformCustomerId / umaAddress.',
        body: CustomerCreateRequest,
        response: { 201: Customer, ...errors },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const { customer } = await clients.identity.createCustomer({
        platformId: request.platform.id,
        customerType: customerType(body.customerType),
        platformCustomerId: body.platformCustomerId,
        region: body.region,
        currencies: body.currencies ?? [],
        email: body.email,
        umaAddress: body.umaAddress,
        address: body.address,
        requestKey: headerOf(request, 'Idempotency-Key'),
        ...typedFields(body),
      });
      await ensureCustomerAccounts(clients, request, customer!);
      return reply.code(201).send(customerJson(customer!));
    },
  );

  app.get(
    '/customers',
    {
      schema: {
        tags: TAGS,
        operationId: 'listCustomers',
        summary: 'List customers',
        description:
          'Customers matching every filter given, newest first. Date filters are inclusive; currency selects customers having it enabled.',
        querystring: CustomerListQuery,
        response: { 200: CustomerList, ...errors },
      },
    },
    async (request) => {
      const q = request.query;
      const r = await clients.identity.listCustomers({
        platformId: request.platform.id,
        platformCustomerId: q.platformCustomerId,
        customerType: q.customerType ? customerType(q.customerType) : identity.CustomerType.UNSPECIFIED,
        createdAfter: date(q.createdAfter),
        createdBefore: date(q.createdBefore),
        updatedAfter: date(q.updatedAfter),
        updatedBefore: date(q.updatedBefore),
        region: q.region,
        currency: q.currency,
        umaAddress: q.umaAddress,
        isIncludingDeleted: q.isIncludingDeleted ?? false,
        page: pageOf(q),
      });
      return envelope(r.customers.map(customerJson), r.page);
    },
  );

  app.get(
    '/customers/:customerId',
    {
      schema: {
        tags: TAGS,
        operationId: 'getCustomerById',
        summary: 'Get a customer',
        description: 'A deleted customer is returned with isDeleted: true.',
        params: CustomerParams,
        response: { 200: Customer, ...errors },
      },
    },
    async (request) => {
      const { customer } = await clients.identity.getCustomer({
        platformId: request.platform.id,
        customerId: request.params.customerId,
      });
      return customerJson(customer!);
    },
  );

  app.patch(
    '/customers/:customerId',
    {
      schema: {
        tags: TAGS,
        operationId: 'updateCustomerById',
        summary: 'Update a customer',
        description:
          'Changes the fields given (customerType must be the customer type; address is replaced, businessInfo is merged). kycStatus / kybStatus only from a platform that is a regulated financial institution (else 400 naming the field); a change sends its CUSTOMER.KYC_* / KYB_* webhook, as a compliance decision does. New currencies get their internal accounts before this returns. 410 CUSTOMER_DELETED for a deleted customer.',
        params: CustomerParams,
        body: CustomerUpdateRequest,
        response: { 200: Customer, ...errors },
      },
    },
    async (request) => {
      const body = request.body;
      const { customer } = await clients.identity
        .updateCustomer({
          platformId: request.platform.id,
          customerId: request.params.customerId,
          customerType: customerType(body.customerType),
          email: body.email,
          umaAddress: body.umaAddress,
          currencies: body.currencies ? { codes: body.currencies } : undefined,
          address: body.address,
          ...typedFields(body),
        })
        .catch(goneIfDeleted);
      if (body.currencies) await ensureCustomerAccounts(clients, request, customer!);
      return customerJson(customer!);
    },
  );

  app.delete(
    '/customers/:customerId',
    {
      schema: {
        tags: TAGS,
        operationId: 'deleteCustomerById',
        summary: 'Delete a customer',
        description:
          'Soft delete: returns the customer with isDeleted: true. 410 CUSTOMER_DELETED when it was deleted already.',
        params: CustomerParams,
        response: { 200: Customer, ...errors },
      },
    },
    async (request) => {
      const { customer } = await clients.identity
        .deleteCustomer({ platformId: request.platform.id, customerId: request.params.customerId })
        .catch(goneIfDeleted);
      return customerJson(customer!);
    },
  );
};

export default customersRoutes;
