import type { FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { identity } from '@sluice/contracts';
import { iso } from '@sluice/api';
import { environmentOf } from '../http/request.helpers.js';
import type { RouteModule } from '../http/types.js';
import { errorResponses } from '../schemas/common.js';
import { PlatformConfig, PlatformConfigUpdateRequest } from '../schemas/config.schemas.js';

type PlatformConfigJson = Static<typeof PlatformConfig>;
type TransactionTypeName =
  PlatformConfigJson['supportedCurrencies'][number]['enabledTransactionTypes'][number];

/** The REST PlatformConfig; the signing secret only for tokens that may manage the platform. */
function platformConfigJson(c: identity.PlatformConfig, request: FastifyRequest): PlatformConfigJson {
  const w = c.embeddedWalletConfig;
  const manager = request.platform.permissions.includes('MANAGE');
  return {
    id: c.id,
    supportedCurrencies: c.supportedCurrencies.map((s) => ({
      currencyCode: s.currencyCode,
      minAmount: Number(s.minAmount ?? 0n),
      maxAmount: Number(s.maxAmount ?? 0n),
      requiredCounterpartyFields: s.requiredCounterpartyFields.map((f) => ({
        name: f.name as PlatformConfigJson['supportedCurrencies'][number]['requiredCounterpartyFields'][number]['name'],
        mandatory: f.mandatory,
      })),
      enabledTransactionTypes: s.enabledTransactionTypes.map(
        (t) => t.replace(/^TRANSACTION_TYPE_/, '') as TransactionTypeName,
      ),
      ...(s.incomingPaymentApprovalThreshold !== undefined
        ? { incomingPaymentApprovalThreshold: Number(s.incomingPaymentApprovalThreshold) }
        : {}),
    })),
    isRegulatedFinancialInstitution: c.isRegulatedFinancialInstitution,
    createdAt: iso(c.createdAt)!,
    updatedAt: iso(c.updatedAt)!,
    ...(c.umaDomain ? { umaDomain: c.umaDomain } : {}),
    ...(c.webhookEndpoint ? { webhookEndpoint: c.webhookEndpoint } : {}),
    ...(c.kycLinkUrlTemplate ? { kycLinkUrlTemplate: c.kycLinkUrlTemplate } : {}),
    ...(c.webhookEndpointDisabledAt
      ? {
          webhookEndpointDisabledAt: iso(c.webhookEndpointDisabledAt)!,
          webhookEndpointDisabledReason: c.webhookEndpointDisabledReason ?? '',
        }
      : {}),
    ...(w
      ? {
          embeddedWalletConfig: {
            currencies: w.currencies,
            ...(w.appName ? { appName: w.appName } : {}),
            otpLength: w.otpLength,
            ...(w.passkey ? { passkey: { rpId: w.passkey.rpId, origins: w.passkey.origins } } : {}),
            oidcIssuers: w.oidcIssuers.map((i) => ({
              issuer: i.issuer,
              jwksUri: i.jwksUri,
              audiences: i.audiences,
            })),
          },
        }
      : {}),
    ...(manager ? { webhookSigningSecret: c.webhookSigningSecret } : {}),
    ...(manager && c.previousWebhookSigningSecretExpiresAt
      ? { previousWebhookSigningSecretExpiresAt: iso(c.previousWebhookSigningSecretExpiresAt)! }
      : {}),
  };
}

/**
 * Platform configuration: `GET /config`, `PATCH /config` (fields given change;
 * `null` removes umaDomain, webhookEndpoint, kycLinkUrlTemplate or embeddedWalletConfig; a new
 * supportedCurrencies list provisions the platform's internal accounts before
 * the answer) and `POST /config/webhook-secret/rotate` (new signing secret;
 * the previous one keeps signing for 24 hours; it takes no body).
 */
const configRoutes: RouteModule = (app, { clients }) => {
  const TAGS = ['Platform Configuration'];
  const errors = errorResponses();

  app.get(
    '/config',
    {
      schema: {
        tags: TAGS,
        operationId: 'getPlatformConfig',
        summary: 'Get the platform configuration',
        response: { 200: PlatformConfig, ...errors },
      },
    },
    async (request) => {
      const r = await clients.identity.getPlatformConfig({ platformId: request.platform.id });
      return platformConfigJson(r.config!, request);
    },
  );

  app.patch(
    '/config',
    {
      schema: {
        tags: TAGS,
        operationId: 'updatePlatformConfig',
        summary: 'Update the platform configuration',
        description:
          'Changes the fields given. supportedCurrencies replaces the list (each entry needs only currencyCode); the platform internal accounts of those currencies exist when this returns. webhookEndpoint must be an absolute http(s) URL. kycLinkUrlTemplate (Sluice’s own) is where hosted KYC links point: an absolute https URL containing {token}.',
        body: PlatformConfigUpdateRequest,
        response: { 200: PlatformConfig, ...errors },
      },
    },
    async (request) => {
      const body = request.body;
      const w = body.embeddedWalletConfig;
      const r = await clients.identity.updatePlatformConfig({
        platformId: request.platform.id,
        clearEmbeddedWalletConfig: w === null,
        ...(body.umaDomain !== undefined ? { umaDomain: body.umaDomain ?? '' } : {}),
        ...(body.webhookEndpoint !== undefined ? { webhookEndpoint: body.webhookEndpoint ?? '' } : {}),
        ...(body.kycLinkUrlTemplate !== undefined
          ? { kycLinkUrlTemplate: body.kycLinkUrlTemplate ?? '' }
          : {}),
        ...(body.supportedCurrencies
          ? {
              supportedCurrencies: {
                currencies: body.supportedCurrencies.map((c) => ({
                  currencyCode: c.currencyCode,
                  minAmount: c.minAmount === undefined ? undefined : BigInt(c.minAmount),
                  maxAmount: c.maxAmount === undefined ? undefined : BigInt(c.maxAmount),
                  requiredCounterpartyFields: c.requiredCounterpartyFields ?? [],
                  enabledTransactionTypes: (c.enabledTransactionTypes ?? []).map(
                    (t) => `TRANSACTION_TYPE_${t}` as identity.TransactionType,
                  ),
                  ...(c.incomingPaymentApprovalThreshold !== undefined
                    ? { incomingPaymentApprovalThreshold: BigInt(c.incomingPaymentApprovalThreshold) }
                    : {}),
                })),
              },
            }
          : {}),
        ...(w
          ? {
              embeddedWalletConfig: {
                currencies: w.currencies ?? [],
                appName: w.appName,
                otpLength: w.otpLength ?? 0,
                passkey: w.passkey,
                oidcIssuers: w.oidcIssuers ?? [],
              },
            }
          : {}),
      });
      if (body.supportedCurrencies) {
        // The platform's internal accounts of its currencies exist when this answers (idempotent).
        await clients.accounts.ensurePlatformAccounts({
          platformId: request.platform.id,
          currencies: r.config!.supportedCurrencies.map((c) => c.currencyCode),
          environment: environmentOf(request),
        });
      }
      return platformConfigJson(r.config!, request);
    },
  );

  app.post(
    '/config/webhook-secret/rotate',
    {
      schema: {
        tags: TAGS,
        operationId: 'rotateWebhookSigningSecret',
        summary: 'Rotate the webhook signing secret',
        description:
          'Takes no body. Makes a new webhookSigningSecret. For 24 hours webhooks carry signatures with both the new and the previous secret (previousWebhookSigningSecretExpiresAt), so receivers can switch without losing deliveries.',
        response: { 200: PlatformConfig, ...errors },
      },
    },
    async (request) => {
      const r = await clients.identity.rotateWebhookSigningSecret({ platformId: request.platform.id });
      return platformConfigJson(r.config!, request);
    },
  );
};

export default configRoutes;
