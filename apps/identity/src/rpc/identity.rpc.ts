import { identity as pb } from '@sluice/contracts';
import { invalidInput, isId, type FieldError } from '@sluice/core';
import { pageInfo, type AsyncService } from '@sluice/rpc';
import { validateBootstrapCredential, validateNewToken } from '../domain/token.js';
import type { ConfigUpdateInput } from '../domain/platform-config.js';
import type { CustomerUpdateInput, NewCustomerInput } from '../domain/customer.js';
import type { PlatformRepository } from '../store/platform.repository.js';
import type { TokenRepository } from '../store/token.repository.js';
import type { CustomerRepository } from '../store/customer.repository.js';
import {
  addressFromPb,
  businessInfoFromPb,
  configToPb,
  currencyConfigFromPb,
  customerToPb,
  customerTypeFromPb,
  embeddedWalletFromPb,
  environmentFromPb,
  environmentToPb,
  permissionFromPb,
  platformToPb,
  tokenToPb,
} from './convert.js';

export interface IdentityRepositories {
  platforms: PlatformRepository;
  tokens: TokenRepository;
  customers: CustomerRepository;
}

/** Checks the id fields of a request (`Type:<uuid>`); INVALID_INPUT naming each bad one. */
function ids(checks: [field: string, value: string, type: 'Platform' | 'Customer' | 'Token'][]): void {
  const errors: FieldError[] = [];
  for (const [field, value, type] of checks) {
    if (!isId(value, type)) errors.push({ field, message: `must be a ${type} id (${type}:<uuid>)` });
  }
  if (errors.length) throw invalidInput(errors);
}


/** gRPC handlers of IdentityService: translate proto <-> domain and call the repositories. */
export function identityHandlers({
  platforms,
  tokens,
  customers,
}: IdentityRepositories): AsyncService<pb.IdentityServiceServer> {
  return {
    async authenticateToken(req) {
      const r = await platforms.authenticate(req.tokenId, req.clientSecret);
      return {
        platform: platformToPb(r.platform),
        tokenId: r.tokenId,
        permissions: r.permissions.map((p) => `PERMISSION_${p}` as pb.Permission),
      };
    },

    async getPlatform(req) {
      ids([['platformId', req.platformId, 'Platform']]);
      return { platform: platformToPb(await platforms.get(req.platformId)) };
    },

    async ensurePlatformCredential(req) {
      const input = validateBootstrapCredential({
        environment: environmentFromPb(req.environment),
        tokenId: req.tokenId,
        clientSecret: req.clientSecret,
        platformName: req.platformName,
      });
      const r = await platforms.ensureCredential(input);
      return { platform: platformToPb(r.platform), created: r.created };
    },

    async getWebhookTarget(req) {
      ids([['platformId', req.platformId, 'Platform']]);
      const t = await platforms.webhookTarget(req.platformId);
      return {
        webhookEndpoint: t.webhookEndpoint,
        signingSecrets: t.signingSecrets,
        environment: environmentToPb(t.environment),
      };
    },

    async getPlatformConfig(req) {
      ids([['platformId', req.platformId, 'Platform']]);
      return { config: configToPb(await platforms.getConfig(req.platformId)) };
    },

    async updatePlatformConfig(req) {
      ids([['platformId', req.platformId, 'Platform']]);
      if (req.clearEmbeddedWalletConfig && req.embeddedWalletConfig) {
        throw invalidInput([{ field: 'embeddedWalletConfig', message: 'cannot be both set and cleared' }]);
      }
      const input: ConfigUpdateInput = {};
      if (req.umaDomain !== undefined) input.umaDomain = req.umaDomain;
      if (req.webhookEndpoint !== undefined) input.webhookEndpoint = req.webhookEndpoint;
      if (req.supportedCurrencies)
        input.supportedCurrencies = req.supportedCurrencies.currencies.map(currencyConfigFromPb);
      if (req.clearEmbeddedWalletConfig) input.embeddedWalletConfig = null;
      else if (req.embeddedWalletConfig)
        input.embeddedWalletConfig = embeddedWalletFromPb(req.embeddedWalletConfig);
      return { config: configToPb(await platforms.updateConfig(req.platformId, input)) };
    },

    async rotateWebhookSigningSecret(req) {
      ids([['platformId', req.platformId, 'Platform']]);
      return { config: configToPb(await platforms.rotateWebhookSecret(req.platformId)) };
    },

    async createToken(req) {
      ids([['platformId', req.platformId, 'Platform']]);
      const input = validateNewToken({ name: req.name, permissions: req.permissions.map(permissionFromPb) });
      const r = await tokens.create(req.platformId, input);
      return { token: tokenToPb(r.token), clientSecret: r.clientSecret };
    },

    async listTokens(req) {
      ids([['platformId', req.platformId, 'Platform']]);
      const page = await tokens.list(
        req.platformId,
        {
          name: req.name,
          createdAfter: req.createdAfter,
          createdBefore: req.createdBefore,
          updatedAfter: req.updatedAfter,
          updatedBefore: req.updatedBefore,
        },
        req.page?.limit,
        req.page?.cursor,
      );
      return { tokens: page.data.map(tokenToPb), page: pageInfo(page) };
    },

    async getToken(req) {
      ids([
        ['platformId', req.platformId, 'Platform'],
        ['tokenId', req.tokenId, 'Token'],
      ]);
      return { token: tokenToPb(await tokens.get(req.platformId, req.tokenId)) };
    },

    async deleteToken(req) {
      ids([
        ['platformId', req.platformId, 'Platform'],
        ['tokenId', req.tokenId, 'Token'],
      ]);
      return { token: tokenToPb(await tokens.delete(req.platformId, req.tokenId)) };
    },

    async createCustomer(req) {
      ids([['platformId', req.platformId, 'Platform']]);
      const input: NewCustomerInput = {
        customerType: customerTypeFromPb(req.customerType),
        currencies: [...req.currencies],
      };
      if (req.platformCustomerId !== undefined) input.platformCustomerId = req.platformCustomerId;
      if (req.region !== undefined) input.region = req.region;
      if (req.email !== undefined) input.email = req.email;
      if (req.umaAddress !== undefined) input.umaAddress = req.umaAddress;
      if (req.fullName !== undefined) input.fullName = req.fullName;
      if (req.birthDate !== undefined) input.birthDate = req.birthDate;
      if (req.nationality !== undefined) input.nationality = req.nationality;
      if (req.address) input.address = addressFromPb(req.address);
      if (req.businessInfo) input.businessInfo = businessInfoFromPb(req.businessInfo);
      const r = await customers.create(req.platformId, input, req.requestKey);
      return { customer: customerToPb(r.customer), replayed: r.replayed };
    },

    async getCustomer(req) {
      ids([
        ['platformId', req.platformId, 'Platform'],
        ['customerId', req.customerId, 'Customer'],
      ]);
      return { customer: customerToPb(await customers.get(req.platformId, req.customerId)) };
    },

    async listCustomers(req) {
      ids([['platformId', req.platformId, 'Platform']]);
      const page = await customers.list(
        req.platformId,
        {
          platformCustomerId: req.platformCustomerId,
          customerType: customerTypeFromPb(req.customerType),
          createdAfter: req.createdAfter,
          createdBefore: req.createdBefore,
          updatedAfter: req.updatedAfter,
          updatedBefore: req.updatedBefore,
          region: req.region,
          currency: req.currency,
          umaAddress: req.umaAddress,
          includeDeleted: req.isIncludingDeleted,
        },
        req.page?.limit,
        req.page?.cursor,
      );
      return { customers: page.data.map(customerToPb), page: pageInfo(page) };
    },

    async updateCustomer(req) {
      ids([
        ['platformId', req.platformId, 'Platform'],
        ['customerId', req.customerId, 'Customer'],
      ]);
      const input: CustomerUpdateInput = { customerType: customerTypeFromPb(req.customerType) };
      if (req.email !== undefined) input.email = req.email;
      if (req.umaAddress !== undefined) input.umaAddress = req.umaAddress;
      if (req.currencies) input.currencies = [...req.currencies.codes];
      if (req.fullName !== undefined) input.fullName = req.fullName;
      if (req.birthDate !== undefined) input.birthDate = req.birthDate;
      if (req.nationality !== undefined) input.nationality = req.nationality;
      if (req.address) input.address = addressFromPb(req.address);
      if (req.businessInfo) input.businessInfo = businessInfoFromPb(req.businessInfo);
      return { customer: customerToPb(await customers.update(req.platformId, req.customerId, input)) };
    },

    async deleteCustomer(req) {
      ids([
        ['platformId', req.platformId, 'Platform'],
        ['customerId', req.customerId, 'Customer'],
      ]);
      return { customer: customerToPb(await customers.delete(req.platformId, req.customerId)) };
    },
  };
}
