import type { FastifyRequest } from 'fastify';
import { common, identity } from '@sluice/contracts';
import type { GatewayClients, RouteModule } from '../http/types.js';
import { ErrorBody, iso } from '../schemas/common.js';
import { PlatformConfig, PlatformConfigUpdateRequest } from '../schemas/config.schemas.js';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 500: ErrorBody, 503: ErrorBody };

/** The REST PlatformConfig; the signing secret only for tokens that may manage the platform. */
function platformConfig(c: identity.PlatformConfig, request: FastifyRequest) {
  const out: Record<string, unknown> = {
    id: c.id,
    supportedCurrencies: c.supportedCurrencies.map((s) => ({
      currencyCode: s.currencyCode,
      minAmount: Number(s.minAmount ?? 0n),
      maxAmount: Number(s.maxAmount ?? 0n),
      requiredCounterpartyFields: s.requiredCounterpartyFields.map((f) => ({
        name: f.name,
        mandatory: f.mandatory,
      })),
      enabledTransactionTypes: s.enabledTransactionTypes.map((t) => t.replace(/^TRANSACTION_TYPE_/, '')),
    })),
    isRegulatedFinancialInstitution: c.isRegulatedFinancialInstitution,
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
  };
  if (c.umaDomain) out.umaDomain = c.umaDomain;
  if (c.webhookEndpoint) out.webhookEndpoint = c.webhookEndpoint;
  if (c.embeddedWalletConfig) {
    const w = c.embeddedWalletConfig;
    out.embeddedWalletConfig = {
      currencies: w.currencies,
      ...(w.appName ? { appName: w.appName } : {}),
      otpLength: w.otpLength,
      ...(w.passkey ? { passkey: { rpId: w.passkey.rpId, origins: w.passkey.origins } } : {}),
      oidcIssuers: w.oidcIssuers.map((i) => ({
        issuer: i.issuer,
        jwksUri: i.jwksUri,
        audiences: i.audiences,
      })),
    };
  }
  if (request.platform.permissions.includes('MANAGE')) {
    out.webhookSigningSecret = c.webhookSigningSecret;
    if (c.previousWebhookSigningSecretExpiresAt)
      out.previousWebhookSigningSecretExpiresAt = iso(c.previousWebhookSigningSecretExpiresAt);
  }
  return out;
}

function environment(request: FastifyRequest): common.Environment {
  return request.platform.environment === 'SANDBOX'
    ? common.Environment.SANDBOX
    : common.Environment.PRODUCTION;
}

/** Makes the platform's internal accounts exist for its supported currencies (idempotent). */
async function ensurePlatformAccounts(
  clients: GatewayClients,
  request: FastifyRequest,
  currencies: string[],
): Promise<void> {
  await clients.accounts.ensurePlatformAccounts({
    platformId: request.platform.id,
    currencies,
    environment: environment(request),
  });
}

/**
 * Platform configuration: `GET /config`, `PATCH /config` (fields given change;
 * `null` removes umaDomain, webhookEndpoint or embeddedWalletConfig; a new
 * supportedCurrencies list provisions the platform's internal accounts before
 * the answer) and `POST /config/webhook-secret/rotate` (new signing secret;
 * the previous one keeps signing for 24 hours).
 */
const configRoutes: RouteModule = (app, { clients }) => {
  app.get(
    '/config',
    {
      schema: {
        tags: ['Platform Configuration'],
        operationId: 'getPlatformConfig',
        summary: 'Get the platform configuration',
        response: { 200: PlatformConfig, ...errors },
      },
    },
    async (request) => {
      const r = await clients.identity.getPlatformConfig({ platformId: request.platform.id });
      return platformConfig(r.config!, request);
    },
  );

  app.patch(
    '/config',
    {
      schema: {
        tags: ['Platform Configuration'],
        operationId: 'updatePlatformConfig',
        summary: 'Update the platform configuration',
        description:
          'Changes the fields given. supportedCurrencies replaces the list (each entry needs only currencyCode); the platform internal accounts of those currencies exist when this returns. webhookEndpoint must be an absolute http(s) URL.',
        body: PlatformConfigUpdateRequest,
        response: { 200: PlatformConfig, ...errors },
      },
    },
    async (request) => {
      const body = request.body as PlatformConfigUpdateRequest;
      const req: identity.UpdatePlatformConfigRequest = {
        platformId: request.platform.id,
        clearEmbeddedWalletConfig: body.embeddedWalletConfig === null,
      };
      if (body.umaDomain !== undefined) req.umaDomain = body.umaDomain ?? '';
      if (body.webhookEndpoint !== undefined) req.webhookEndpoint = body.webhookEndpoint ?? '';
      if (body.supportedCurrencies) {
        req.supportedCurrencies = {
          currencies: body.supportedCurrencies.map((c) => ({
            currencyCode: c.currencyCode,
            minAmount: c.minAmount === undefined ? undefined : BigInt(c.minAmount),
            maxAmount: c.maxAmount === undefined ? undefined : BigInt(c.maxAmount),
            requiredCounterpartyFields: c.requiredCounterpartyFields ?? [],
            enabledTransactionTypes: (c.enabledTransactionTypes ?? []).map(
              (t) => `TRANSACTION_TYPE_${t}` as identity.TransactionType,
            ),
          })),
        };
      }
      if (body.embeddedWalletConfig) {
        const w = body.embeddedWalletConfig;
        req.embeddedWalletConfig = {
          currencies: w.currencies ?? [],
          appName: w.appName,
          otpLength: w.otpLength ?? 0,
          passkey: w.passkey,
          oidcIssuers: w.oidcIssuers ?? [],
        };
      }
      const r = await clients.identity.updatePlatformConfig(req);
      if (body.supportedCurrencies) {
        await ensurePlatformAccounts(
          clients,
          request,
          r.config!.supportedCurrencies.map((c) => c.currencyCode),
        );
      }
      return platformConfig(r.config!, request);
    },
  );

  app.post(
    '/config/webhook-secret/rotate',
    {
      schema: {
        tags: ['Platform Configuration'],
        operationId: 'rotateWebhookSigningSecret',
        summary: 'Rotate the webhook signing secret',
        description:
          'Makes a new webhookSigningSecret. For 24 hours webhooks carry signatures with both the new and the previous secret (previousWebhookSigningSecretExpiresAt), so receivers can switch without losing deliveries.',
        response: { 200: PlatformConfig, ...errors },
      },
    },
    async (request) => {
      const r = await clients.identity.rotateWebhookSigningSecret({ platformId: request.platform.id });
      return platformConfig(r.config!, request);
    },
  );
};

export default configRoutes;
