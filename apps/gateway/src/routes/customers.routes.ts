import type { FastifyRequest } from 'fastify';
import { common, identity } from '@sluice/contracts';
import { isDomainError } from '@sluice/core';
import { HttpError } from '../http/error-mapping.js';
import type { GatewayClients, RouteModule } from '../http/types.js';
import { ErrorBody, Page, iso, envelope, pageOf } from '../schemas/common.js';
import {
  Customer,
  CustomerCreateRequest,
  CustomerListQuery,
  CustomerParams,
  CustomerUpdateRequest,
} from '../schemas/customer.schemas.js';

const errors = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  410: ErrorBody,
  500: ErrorBody,
  503: ErrorBody,
};

const bare = (v: string, prefix: string) => v.replace(prefix, '');
const date = (v: string | undefined) => (v === undefined ? undefined : new Date(v));

/** The REST customer (IndividualCustomer or BusinessCustomer) of a proto customer. */
export function customerView(c: identity.Customer): Record<string, unknown> {
  const type = bare(c.customerType, 'CUSTOMER_TYPE_');
  const out: Record<string, unknown> = {
    id: c.id,
    platformCustomerId: c.platformCustomerId,
    customerType: type,
    umaAddress: c.umaAddress,
    currencies: c.currencies,
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
    isDeleted: c.isDeleted,
  };
  if (c.region) out.region = c.region;
  if (c.email) out.email = c.email;
  if (c.address) out.address = stripUndefined({ ...c.address });
  if (type === 'INDIVIDUAL') {
    out.kycStatus = bare(c.kycStatus, 'VERIFICATION_STATUS_');
    if (c.fullName) out.fullName = c.fullName;
    if (c.birthDate) out.birthDate = c.birthDate;
    if (c.nationality) out.nationality = c.nationality;
  } else {
    out.kybStatus = bare(c.kybStatus, 'VERIFICATION_STATUS_');
    if (c.businessInfo) {
      const b: Record<string, unknown> = stripUndefined({ ...c.businessInfo });
      for (const k of ['countriesOfOperation', 'expectedRecipientJurisdictions'])
        if ((b[k] as unknown[] | undefined)?.length === 0) delete b[k];
      out.businessInfo = b;
    }
  }
  return out;
}

function stripUndefined<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

function businessInfoToPb(b: Record<string, unknown> | undefined): identity.BusinessInfo | undefined {
  if (!b) return undefined;
  return {
    ...(b as Partial<identity.BusinessInfo>),
    countriesOfOperation: (b.countriesOfOperation as string[] | undefined) ?? [],
    expectedRecipientJurisdictions: (b.expectedRecipientJurisdictions as string[] | undefined) ?? [],
  };
}

function environment(request: FastifyRequest): common.Environment {
  return request.platform.environment === 'SANDBOX'
    ? common.Environment.SANDBOX
    : common.Environment.PRODUCTION;
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
    environment: environment(request),
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
        tags: ['Customers'],
        operationId: 'createCustomer',
        summary: 'Create a customer',
        description:
          'Creates an INDIVIDUAL or BUSINESS customer with KYC/KYB status UNVERIFIED. currencies default to the platform supportedCurrencies; an umaAddress is generated when none is given. The customer internal accounts (one per currency) exist when this returns. 409 CUSTOMER_ALREADY_EXISTS / UMA_ADDRESS_EXISTS when a live customer already has the platformCustomerId / umaAddress.',
        body: CustomerCreateRequest,
        response: { 201: Customer, ...errors },
      },
    },
    async (request, reply) => {
      const body = request.body as CustomerCreateRequest;
      const key = request.headers['idempotency-key'];
      const req: identity.CreateCustomerRequest = {
        platformId: request.platform.id,
        customerType: `CUSTOMER_TYPE_${body.customerType}` as identity.CustomerType,
        platformCustomerId: body.platformCustomerId,
        region: body.region,
        currencies: body.currencies ?? [],
        email: body.email,
        umaAddress: body.umaAddress,
        address: body.address,
        requestKey: typeof key === 'string' ? key : undefined,
      };
      if (body.customerType === 'INDIVIDUAL') {
        req.fullName = body.fullName;
        req.birthDate = body.birthDate;
        req.nationality = body.nationality;
      } else {
        req.businessInfo = businessInfoToPb(body.businessInfo);
      }
      const { customer } = await clients.identity.createCustomer(req);
      await ensureCustomerAccounts(clients, request, customer!);
      reply.code(201);
      return customerView(customer!);
    },
  );

  app.get(
    '/customers',
    {
      schema: {
        tags: ['Customers'],
        operationId: 'listCustomers',
        summary: 'List customers',
        description:
          'Customers matching every filter given, newest first. Date filters are inclusive; currency selects customers having it enabled.',
        querystring: CustomerListQuery,
        response: { 200: Page(Customer, 'CustomerListResponse'), ...errors },
      },
    },
    async (request) => {
      const q = request.query as CustomerListQuery;
      const r = await clients.identity.listCustomers({
        platformId: request.platform.id,
        platformCustomerId: q.platformCustomerId,
        customerType: q.customerType
          ? (`CUSTOMER_TYPE_${q.customerType}` as identity.CustomerType)
          : identity.CustomerType.UNSPECIFIED,
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
      return envelope(r.customers.map(customerView), r.page);
    },
  );

  app.get(
    '/customers/:customerId',
    {
      schema: {
        tags: ['Customers'],
        operationId: 'getCustomerById',
        summary: 'Get a customer',
        description: 'A deleted customer is returned with isDeleted: true.',
        params: CustomerParams,
        response: { 200: Customer, ...errors },
      },
    },
    async (request) => {
      const { customerId } = request.params as CustomerParams;
      const { customer } = await clients.identity.getCustomer({
        platformId: request.platform.id,
        customerId,
      });
      return customerView(customer!);
    },
  );

  app.patch(
    '/customers/:customerId',
    {
      schema: {
        tags: ['Customers'],
        operationId: 'updateCustomerById',
        summary: 'Update a customer',
        description:
          'Changes the fields given (customerType must be the customer type; address is replaced, businessInfo is merged). New currencies get their internal accounts before this returns. 410 CUSTOMER_DELETED for a deleted customer.',
        params: CustomerParams,
        body: CustomerUpdateRequest,
        response: { 200: Customer, ...errors },
      },
    },
    async (request) => {
      const { customerId } = request.params as CustomerParams;
      const body = request.body as CustomerUpdateRequest;
      const req: identity.UpdateCustomerRequest = {
        platformId: request.platform.id,
        customerId,
        customerType: `CUSTOMER_TYPE_${body.customerType}` as identity.CustomerType,
        email: body.email,
        umaAddress: body.umaAddress,
        currencies: body.currencies ? { codes: body.currencies } : undefined,
        address: body.address,
      };
      if (body.customerType === 'INDIVIDUAL') {
        req.fullName = body.fullName;
        req.birthDate = body.birthDate;
        req.nationality = body.nationality;
      } else {
        req.businessInfo = businessInfoToPb(body.businessInfo);
      }
      const { customer } = await clients.identity.updateCustomer(req).catch(goneIfDeleted);
      if (body.currencies) await ensureCustomerAccounts(clients, request, customer!);
      return customerView(customer!);
    },
  );

  app.delete(
    '/customers/:customerId',
    {
      schema: {
        tags: ['Customers'],
        operationId: 'deleteCustomerById',
        summary: 'Delete a customer',
        description:
          'Soft delete: returns the customer with isDeleted: true. 410 CUSTOMER_DELETED when it was deleted already.',
        params: CustomerParams,
        response: { 200: Customer, ...errors },
      },
    },
    async (request) => {
      const { customerId } = request.params as CustomerParams;
      const { customer } = await clients.identity
        .deleteCustomer({ platformId: request.platform.id, customerId })
        .catch(goneIfDeleted);
      return customerView(customer!);
    },
  );
};

export default customersRoutes;
