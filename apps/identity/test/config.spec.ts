import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { common, identity } from '@sluice/contracts';
import { newPlatform, outbox, startIdentity, type Harness } from './support/harness.js';
import { fieldsOf, rejection } from './support/errors.js';

const { TransactionType } = identity;
const { Environment } = common;

let h: Harness;
beforeAll(async () => {
  h = await startIdentity('config');
});
afterAll(async () => {
  await h?.stop();
});

describe('platform config', () => {
  it('starts with USD and USDC, no endpoint and a whsec_ signing secret', async () => {
    const p = await newPlatform(h.client);
    const { config } = await h.client.getPlatformConfig({ platformId: p.id });
    expect(config).toMatchObject({
      platformId: p.id,
      environment: Environment.SANDBOX,
      isRegulatedFinancialInstitution: false,
    });
    expect(config!.id).toBe(`PlatformConfig:${p.id.slice('Platform:'.length)}`);
    expect(config!.supportedCurrencies.map((c) => c.currencyCode)).toEqual(['USD', 'USDC']);
    expect(config!.webhookEndpoint).toBeUndefined();
    expect(Buffer.from(config!.webhookSigningSecret.replace(/^whsec_/, ''), 'base64')).toHaveLength(32);
    const target = await h.client.getWebhookTarget({ platformId: p.id });
    expect(target).toMatchObject({
      signingSecrets: [config!.webhookSigningSecret],
      environment: Environment.SANDBOX,
    });
    expect(target.webhookEndpoint).toBeUndefined();
    const events = await outbox(h.sql, p.id);
    expect(events.map((e) => e.type)).toEqual([
      'PLATFORM.CREATED',
      'PLATFORM_CONFIG.UPDATED',
      'TOKEN.CREATED',
    ]);
  });

  it('updates the fields given and emits PLATFORM_CONFIG.UPDATED', async () => {
    const p = await newPlatform(h.client);
    h.clock.advance(60_000);
    const { config } = await h.client.updatePlatformConfig({
      platformId: p.id,
      umaDomain: 'Pay.Example.COM',
      webhookEndpoint: 'https://hooks.example.com/sluice?x=1',
      supportedCurrencies: {
        currencies: [
          {
            currencyCode: 'EUR',
            minAmount: 100n,
            maxAmount: 1_000_000n,
            requiredCounterpartyFields: [{ name: 'FULL_NAME', mandatory: true }],
            enabledTransactionTypes: [TransactionType.OUTGOING],
          },
          { currencyCode: 'USDC', requiredCounterpartyFields: [], enabledTransactionTypes: [] },
        ],
      },
      embeddedWalletConfig: {
        currencies: ['USDC'],
        appName: 'Acme Wallet',
        otpLength: 0,
        passkey: { rpId: 'example.com', origins: ['https://app.example.com', 'https://example.com'] },
        oidcIssuers: [
          {
            issuer: 'https://accounts.google.com',
            jwksUri: 'https://www.googleapis.com/oauth2/v3/certs',
            audiences: ['client-1'],
          },
        ],
      },
      clearEmbeddedWalletConfig: false,
    });
    expect(config).toMatchObject({
      umaDomain: 'pay.example.com',
      webhookEndpoint: 'https://hooks.example.com/sluice?x=1',
      supportedCurrencies: [
        {
          currencyCode: 'EUR',
          minAmount: 100n,
          maxAmount: 1_000_000n,
          requiredCounterpartyFields: [{ name: 'FULL_NAME', mandatory: true }],
          enabledTransactionTypes: [TransactionType.OUTGOING],
        },
        {
          currencyCode: 'USDC',
          minAmount: 0n,
          maxAmount: 9_000_000_000_000_000n,
          enabledTransactionTypes: [TransactionType.OUTGOING, TransactionType.INCOMING],
        },
      ],
      embeddedWalletConfig: {
        currencies: ['USDC'],
        appName: 'Acme Wallet',
        otpLength: 6,
        passkey: { rpId: 'example.com' },
      },
    });
    expect(config!.updatedAt!.getTime()).toBeGreaterThan(config!.createdAt!.getTime());
    const again = await h.client.getPlatformConfig({ platformId: p.id });
    expect(again.config).toEqual(config);
    const events = (await outbox(h.sql, p.id)).filter((e) => e.type === 'PLATFORM_CONFIG.UPDATED');
    expect(events.at(-1)!.envelope.data).toEqual({
      supportedCurrencies: ['EUR', 'USDC'],
      embeddedWalletCurrencies: ['USDC'],
      umaDomain: 'pay.example.com',
      webhookEndpoint: 'https://hooks.example.com/sluice?x=1',
      kycLinkUrlTemplate: null,
      webhookSigningSecretRotated: false,
      environment: 'SANDBOX',
    });
    expect((await h.client.getWebhookTarget({ platformId: p.id })).webhookEndpoint).toBe(
      'https://hooks.example.com/sluice?x=1',
    );

    // Only what is given changes; '' removes; an unchanged update emits nothing.
    const cleared = await h.client.updatePlatformConfig({
      platformId: p.id,
      webhookEndpoint: '',
      clearEmbeddedWalletConfig: true,
    });
    expect(cleared.config!.webhookEndpoint).toBeUndefined();
    expect(cleared.config!.embeddedWalletConfig).toBeUndefined();
    expect(cleared.config!.umaDomain).toBe('pay.example.com');
    const before = (await outbox(h.sql, p.id)).length;
    await h.client.updatePlatformConfig({
      platformId: p.id,
      umaDomain: 'pay.example.com',
      clearEmbeddedWalletConfig: false,
    });
    expect((await outbox(h.sql, p.id)).length).toBe(before);
  });

  it('rejects bad input, names each field and changes nothing', async () => {
    const p = await newPlatform(h.client);
    const before = await h.client.getPlatformConfig({ platformId: p.id });
    const eventsBefore = (await outbox(h.sql, p.id)).length;
    const cases: [
      Omit<identity.UpdatePlatformConfigRequest, 'platformId' | 'clearEmbeddedWalletConfig'>,
      string[],
    ][] = [
      [{ webhookEndpoint: 'ftp://example.com/hook' }, ['webhookEndpoint']],
      [{ webhookEndpoint: '/relative/path' }, ['webhookEndpoint']],
      [{ webhookEndpoint: 'https://user:pw@example.com/hook' }, ['webhookEndpoint']],
      [{ umaDomain: 'not a domain' }, ['umaDomain']],
      [{ supportedCurrencies: { currencies: [] } }, ['supportedCurrencies']],
      [
        {
          supportedCurrencies: {
            currencies: [
              { currencyCode: 'XYZ', requiredCounterpartyFields: [], enabledTransactionTypes: [] },
              {
                currencyCode: 'USD',
                minAmount: 500n,
                maxAmount: 100n,
                requiredCounterpartyFields: [{ name: 'SHOE_SIZE', mandatory: true }],
                enabledTransactionTypes: [],
              },
              {
                currencyCode: 'USD',
                minAmount: -1n,
                requiredCounterpartyFields: [],
                enabledTransactionTypes: [TransactionType.UNSPECIFIED],
              },
            ],
          },
        },
        [
          'supportedCurrencies[0].currencyCode',
          'supportedCurrencies[1].maxAmount',
          'supportedCurrencies[1].requiredCounterpartyFields[0].name',
          'supportedCurrencies[2].minAmount',
          'supportedCurrencies[2].enabledTransactionTypes[0]',
          'supportedCurrencies[2]',
        ],
      ],
      [
        {
          embeddedWalletConfig: {
            currencies: ['USD'],
            otpLength: 12,
            passkey: { rpId: 'https://example.com', origins: [] },
            oidcIssuers: [{ issuer: 'http://issuer.example.com', jwksUri: 'nope', audiences: [] }],
          },
        },
        [
          'embeddedWalletConfig.currencies[0]',
          'embeddedWalletConfig.otpLength',
          'embeddedWalletConfig.passkey.rpId',
          'embeddedWalletConfig.passkey.origins',
          'embeddedWalletConfig.oidcIssuers[0].issuer',
          'embeddedWalletConfig.oidcIssuers[0].jwksUri',
          'embeddedWalletConfig.oidcIssuers[0].audiences',
        ],
      ],
      [
        {
          embeddedWalletConfig: {
            currencies: ['USDT'],
            otpLength: 6,
            passkey: { rpId: 'example.com', origins: ['https://evil.com'] },
            oidcIssuers: [],
          },
        },
        ['embeddedWalletConfig.passkey.origins[0]', 'embeddedWalletConfig.currencies[0]'],
      ],
    ];
    for (const [update, fields] of cases) {
      const e = await rejection(
        h.client.updatePlatformConfig({ platformId: p.id, clearEmbeddedWalletConfig: false, ...update }),
      );
      expect(
        fieldsOf(e).sort(),
        JSON.stringify(update, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
      ).toEqual([...fields].sort());
    }
    // A valid field beside an invalid one is not applied either.
    await rejection(
      h.client.updatePlatformConfig({
        platformId: p.id,
        umaDomain: 'ok.example.com',
        webhookEndpoint: 'nope',
        clearEmbeddedWalletConfig: false,
      }),
    );
    expect(await h.client.getPlatformConfig({ platformId: p.id })).toEqual(before);
    expect((await outbox(h.sql, p.id)).length).toBe(eventsBefore);
  });

  it('sets, reads back and removes kycLinkUrlTemplate, telling PLATFORM_CONFIG.UPDATED', async () => {
    const p = await newPlatform(h.client, Environment.PRODUCTION);
    const template = 'https://kyc.example.com/onboard/{token}?customer={customerId}&next={redirectUri}';
    const column = async () =>
      (
        await h.sql.query(
          `SELECT kyc_link_url_template FROM identity.platform_configs WHERE platform_id = $1`,
          [p.id],
        )
      ).rows[0].kyc_link_url_template as string | null;
    expect(
      (await h.client.getPlatformConfig({ platformId: p.id })).config!.kycLinkUrlTemplate,
    ).toBeUndefined();

    const set = await h.client.updatePlatformConfig({
      platformId: p.id,
      kycLinkUrlTemplate: template,
      clearEmbeddedWalletConfig: false,
    });
    expect(set.config!.kycLinkUrlTemplate).toBe(template);
    expect((await h.client.getPlatformConfig({ platformId: p.id })).config).toEqual(set.config);
    expect(await column()).toBe(template);
    const updated = () =>
      outbox(h.sql, p.id).then((events) => events.filter((e) => e.type === 'PLATFORM_CONFIG.UPDATED'));
    expect((await updated()).at(-1)!.envelope.data).toMatchObject({
      kycLinkUrlTemplate: template,
      environment: 'PRODUCTION',
    });

    // Other fields leave it alone; setting the same value again is no change (no event).
    const other = await h.client.updatePlatformConfig({
      platformId: p.id,
      webhookEndpoint: 'https://hooks.example.com/x',
      clearEmbeddedWalletConfig: false,
    });
    expect(other.config!.kycLinkUrlTemplate).toBe(template);
    const count = (await updated()).length;
    await h.client.updatePlatformConfig({
      platformId: p.id,
      kycLinkUrlTemplate: template,
      clearEmbeddedWalletConfig: false,
    });
    expect((await updated()).length).toBe(count);

    const removed = await h.client.updatePlatformConfig({
      platformId: p.id,
      kycLinkUrlTemplate: '',
      clearEmbeddedWalletConfig: false,
    });
    expect(removed.config!.kycLinkUrlTemplate).toBeUndefined();
    expect(removed.config!.webhookEndpoint).toBe('https://hooks.example.com/x');
    expect(
      (await h.client.getPlatformConfig({ platformId: p.id })).config!.kycLinkUrlTemplate,
    ).toBeUndefined();
    expect(await column()).toBeNull();
    expect((await updated()).at(-1)!.envelope.data.kycLinkUrlTemplate).toBeNull();
  });

  it('refuses each bad kycLinkUrlTemplate by its field and stores nothing', async () => {
    const production = await newPlatform(h.client, Environment.PRODUCTION);
    const sandbox = await newPlatform(h.client);
    const kept = 'https://kyc.example.com/{token}';
    for (const p of [production, sandbox])
      await h.client.updatePlatformConfig({
        platformId: p.id,
        kycLinkUrlTemplate: kept,
        clearEmbeddedWalletConfig: false,
      });
    const bad: [typeof production, string][] = [
      [sandbox, 'kyc.example.com/onboard/{token}'],
      [sandbox, 'ftp://kyc.example.com/{token}'],
      [sandbox, 'http://kyc.example.com/{token}'],
      [production, 'http://localhost:3000/{token}'],
      [sandbox, 'https://kyc.example.com/onboard'],
      [sandbox, 'https://kyc.example.com/{token}/{platformId}'],
      [sandbox, 'https://{token}.kyc.example.com/'],
      [sandbox, 'https://user:pw@kyc.example.com/{token}'],
      [sandbox, 'https://kyc.example.com/{token} '],
      [sandbox, `https://kyc.example.com/${'x'.repeat(2048)}{token}`],
    ];
    for (const [p, kycLinkUrlTemplate] of bad) {
      const before = await h.client.getPlatformConfig({ platformId: p.id });
      const eventsBefore = (await outbox(h.sql, p.id)).length;
      const e = await rejection(
        h.client.updatePlatformConfig({
          platformId: p.id,
          kycLinkUrlTemplate,
          umaDomain: 'ok.example.com',
          clearEmbeddedWalletConfig: false,
        }),
      );
      expect(fieldsOf(e), kycLinkUrlTemplate.slice(0, 80)).toEqual(['kycLinkUrlTemplate']);
      expect(await h.client.getPlatformConfig({ platformId: p.id })).toEqual(before);
      expect((await outbox(h.sql, p.id)).length).toBe(eventsBefore);
    }
    // A local stub page over plain http is for sandbox platforms only.
    const local = await h.client.updatePlatformConfig({
      platformId: sandbox.id,
      kycLinkUrlTemplate: 'http://localhost:3000/kyc/{token}',
      clearEmbeddedWalletConfig: false,
    });
    expect(local.config!.kycLinkUrlTemplate).toBe('http://localhost:3000/kyc/{token}');
  });

  it('keeps wallet currencies within the supported ones', async () => {
    const p = await newPlatform(h.client);
    await h.client.updatePlatformConfig({
      platformId: p.id,
      embeddedWalletConfig: { currencies: ['USDC'], otpLength: 8, oidcIssuers: [] },
      clearEmbeddedWalletConfig: false,
    });
    const e = await rejection(
      h.client.updatePlatformConfig({
        platformId: p.id,
        supportedCurrencies: {
          currencies: [{ currencyCode: 'USD', requiredCounterpartyFields: [], enabledTransactionTypes: [] }],
        },
        clearEmbeddedWalletConfig: false,
      }),
    );
    expect(fieldsOf(e)).toEqual(['embeddedWalletConfig.currencies[0]']);
  });

  it('rotates the webhook secret, keeping the previous one for 24 hours', async () => {
    const p = await newPlatform(h.client);
    const old = (await h.client.getPlatformConfig({ platformId: p.id })).config!.webhookSigningSecret;
    const rotatedAt = h.clock.now();
    const { config } = await h.client.rotateWebhookSigningSecret({ platformId: p.id });
    expect(config!.webhookSigningSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(config!.webhookSigningSecret).not.toBe(old);
    expect(config!.previousWebhookSigningSecretExpiresAt).toEqual(
      new Date(rotatedAt.getTime() + 24 * 3600_000),
    );
    expect((await h.client.getWebhookTarget({ platformId: p.id })).signingSecrets).toEqual([
      config!.webhookSigningSecret,
      old,
    ]);
    const rotated = (await outbox(h.sql, p.id)).filter((e) => e.type === 'PLATFORM_CONFIG.UPDATED').at(-1)!;
    expect(rotated.envelope.data.webhookSigningSecretRotated).toBe(true);
    expect(JSON.stringify(rotated)).not.toContain('whsec_');

    // The grace period is [rotation, rotation + 24 h): the old secret signs up to its last
    // millisecond and not at the instant it expires.
    h.clock.advance(24 * 3600_000 - 1);
    expect((await h.client.getWebhookTarget({ platformId: p.id })).signingSecrets).toEqual([
      config!.webhookSigningSecret,
      old,
    ]);
    expect(
      (await h.client.getPlatformConfig({ platformId: p.id })).config!.previousWebhookSigningSecretExpiresAt,
    ).toEqual(new Date(rotatedAt.getTime() + 24 * 3600_000));
    h.clock.advance(1);
    expect((await h.client.getWebhookTarget({ platformId: p.id })).signingSecrets).toEqual([
      config!.webhookSigningSecret,
    ]);
    const after = (await h.client.getPlatformConfig({ platformId: p.id })).config!;
    expect(after.webhookSigningSecret).toBe(config!.webhookSigningSecret);
    expect(after.previousWebhookSigningSecretExpiresAt).toBeUndefined();
  });

  it('a second rotation inside the grace period: each replaced secret keeps its own 24 hours', async () => {
    const p = await newPlatform(h.client);
    const first = (await h.client.getPlatformConfig({ platformId: p.id })).config!.webhookSigningSecret;
    h.clock.advance(60_000);
    const firstRotation = h.clock.now().getTime();
    const second = (await h.client.rotateWebhookSigningSecret({ platformId: p.id })).config!
      .webhookSigningSecret;
    h.clock.advance(3600_000);
    const secondRotation = h.clock.now().getTime();
    const { config } = await h.client.rotateWebhookSigningSecret({ platformId: p.id });
    const third = config!.webhookSigningSecret;
    expect(new Set([first, second, third]).size).toBe(3);
    expect(config!.previousWebhookSigningSecretExpiresAt).toEqual(new Date(secondRotation + 24 * 3600_000));
    const signing = async () => (await h.client.getWebhookTarget({ platformId: p.id })).signingSecrets;
    expect(await signing()).toEqual([third, second, first]);
    h.clock.set(new Date(firstRotation + 24 * 3600_000 - 1));
    expect(await signing()).toEqual([third, second, first]);
    h.clock.advance(1);
    expect(await signing()).toEqual([third, second]);
    h.clock.set(new Date(secondRotation + 24 * 3600_000 - 1));
    expect(await signing()).toEqual([third, second]);
    h.clock.advance(1);
    expect(await signing()).toEqual([third]);
  });

  it('answers NOT_FOUND for an unknown platform and INVALID_INPUT for a malformed id', async () => {
    expect(
      await rejection(
        h.client.getPlatformConfig({ platformId: 'Platform:00000000-0000-7000-8000-000000000000' }),
      ),
    ).toMatchObject({
      kind: 'NOT_FOUND',
      code: 'PLATFORM_NOT_FOUND',
    });
    expect(fieldsOf(await rejection(h.client.getWebhookTarget({ platformId: 'nope' })))).toEqual([
      'platformId',
    ]);
  });
});
