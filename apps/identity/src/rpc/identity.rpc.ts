import { identity as pb } from '@sluice/contracts';
import { environmentFromPb, environmentToPb, pageInfo, splitUpload, type AsyncService } from '@sluice/rpc';
import type { ConfigUpdateInput } from '../domain/platform-config.js';
import type { CustomerUpdateInput, NewCustomerInput } from '../domain/customer.js';
import type { PlatformsService } from '../app/platforms.service.js';
import type { TokensService } from '../app/tokens.service.js';
import type { CustomersService } from '../app/customers.service.js';
import type { InvitationsService } from '../app/invitations.service.js';
import type { BulkImportService } from '../app/bulk-import.service.js';
import type { ConfigService } from '../app/config.service.js';
import { addressFromPb, businessInfoFromPb, configToPb, currencyConfigFromPb, customerToPb, customerTypeFromPb, embeddedWalletFromPb, permissionFromPb, permissionToPb, platformToPb, tokenToPb, verificationStatusFromPb, invitationToPb, bulkImportJobToPb } from './convert.js';

/** The use cases IdentityService serves. */
export interface IdentityUseCases {
  platforms: PlatformsService;
  config: ConfigService;
  tokens: TokensService;
  customers: CustomersService;
  invitations: InvitationsService;
  imports: BulkImportService;
}

/** gRPC handlers of IdentityService: translate proto <-> app types and call the use cases. */
export function identityHandlers({
  platforms,
  config,
  tokens,
  customers,
  invitations,
  imports,
}: IdentityUseCases): AsyncService<pb.IdentityServiceServer> {
  return {
    async authenticateToken(req) {
      const r = await platforms.authenticate(req.tokenId, req.clientSecret);
      return {
        platform: platformToPb(r.platform),
        tokenId: r.tokenId,
        permissions: r.permissions.map(permissionToPb),
      };
    },

    async getPlatform(req) {
      return { platform: platformToPb(await platforms.get(req.platformId)) };
    },

    async ensurePlatformCredential(req) {
      const r = await platforms.ensureCredential({
        environment: environmentFromPb(req.environment),
        tokenId: req.tokenId,
        clientSecret: req.clientSecret,
        platformName: req.platformName,
        isRegulatedFinancialInstitution: req.isRegulatedFinancialInstitution ?? false,
      });
      return { platform: platformToPb(r.platform), created: r.created };
    },

    async getWebhookTarget(req) {
      const t = await config.webhookTarget(req.platformId);
      return {
        webhookEndpoint: t.webhookEndpoint,
        signingSecrets: t.signingSecrets,
        environment: environmentToPb(t.environment),
      };
    },

    async getPlatformConfig(req) {
      return { config: configToPb(await config.get(req.platformId)) };
    },

    async updatePlatformConfig(req) {
      const input: ConfigUpdateInput = {};
      if (req.umaDomain !== undefined) input.umaDomain = req.umaDomain;
      if (req.webhookEndpoint !== undefined) input.webhookEndpoint = req.webhookEndpoint;
      if (req.kycLinkUrlTemplate !== undefined) input.kycLinkUrlTemplate = req.kycLinkUrlTemplate;
      if (req.supportedCurrencies)
        input.supportedCurrencies = req.supportedCurrencies.currencies.map(currencyConfigFromPb);
      if (req.clearEmbeddedWalletConfig) input.clearEmbeddedWalletConfig = true;
      if (req.embeddedWalletConfig)
        input.embeddedWalletConfig = embeddedWalletFromPb(req.embeddedWalletConfig);
      return { config: configToPb(await config.update(req.platformId, input)) };
    },

    async rotateWebhookSigningSecret(req) {
      return { config: configToPb(await config.rotateWebhookSecret(req.platformId)) };
    },

    async createToken(req) {
      const r = await tokens.create(req.platformId, {
        name: req.name,
        permissions: req.permissions.map(permissionFromPb),
      });
      return { token: tokenToPb(r.token), clientSecret: r.clientSecret };
    },

    async listTokens(req) {
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
      return { token: tokenToPb(await tokens.get(req.platformId, req.tokenId)) };
    },

    async deleteToken(req) {
      return { token: tokenToPb(await tokens.delete(req.platformId, req.tokenId)) };
    },

    async createCustomer(req) {
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
      const status = req.verificationStatus && verificationStatusFromPb(req.verificationStatus);
      if (status) input.verificationStatus = status;
      const r = await customers.create(req.platformId, input, req.requestKey);
      return { customer: customerToPb(r.customer), replayed: r.replayed };
    },

    async getCustomer(req) {
      return { customer: customerToPb(await customers.get(req.platformId, req.customerId)) };
    },

    async listCustomers(req) {
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
      const input: CustomerUpdateInput = { customerType: customerTypeFromPb(req.customerType) };
      if (req.email !== undefined) input.email = req.email;
      if (req.umaAddress !== undefined) input.umaAddress = req.umaAddress;
      if (req.currencies) input.currencies = [...req.currencies.codes];
      if (req.fullName !== undefined) input.fullName = req.fullName;
      if (req.birthDate !== undefined) input.birthDate = req.birthDate;
      if (req.nationality !== undefined) input.nationality = req.nationality;
      if (req.address) input.address = addressFromPb(req.address);
      if (req.businessInfo) input.businessInfo = businessInfoFromPb(req.businessInfo);
      const status = req.verificationStatus && verificationStatusFromPb(req.verificationStatus);
      if (status) input.verificationStatus = status;
      return { customer: customerToPb(await customers.update(req.platformId, req.customerId, input)) };
    },

    async deleteCustomer(req) {
      return { customer: customerToPb(await customers.delete(req.platformId, req.customerId)) };
    },

    async createInvitation(req) {
      const invitation = await invitations.create(req.platformId, {
        inviterUma: req.inviterUma,
        ...(req.firstName !== undefined ? { firstName: req.firstName } : {}),
        ...(req.amountToSend !== undefined ? { amountToSend: req.amountToSend } : {}),
        ...(req.expiresAt ? { expiresAt: req.expiresAt } : {}),
      });
      return { invitation: invitationToPb(invitation) };
    },

    async getInvitation(req) {
      return { invitation: invitationToPb(await invitations.get(req.platformId, req.code)) };
    },

    async claimInvitation(req) {
      return { invitation: invitationToPb(await invitations.claim(req.platformId, req.code, req.inviteeUma)) };
    },

    async cancelInvitation(req) {
      return { invitation: invitationToPb(await invitations.cancel(req.platformId, req.code)) };
    },

    async importCustomersCsv(requests) {
      const { header, bytes } = await splitUpload(requests);
      return { job: bulkImportJobToPb(await imports.receive(header.platformId, header.fileName, bytes)) };
    },

    async getBulkImportJob(req) {
      return { job: bulkImportJobToPb(await imports.get(req.platformId, req.jobId)) };
    },
  };
}
