import { describe, expect, it } from 'vitest';
import { MAX_AMOUNT } from '@sluice/core';
import { applyConfigUpdate, defaultSettings, type PlatformSettings } from './platform-config.js';
import { activeSecrets } from './webhook-secret.js';
import { fieldsThrownBy as fieldsOf } from '../../test/support/errors.js';

describe('applyConfigUpdate', () => {
  const base = defaultSettings();

  it('fills currency defaults', () => {
    const s = applyConfigUpdate(base, {
      supportedCurrencies: [
        { currencyCode: 'EUR', requiredCounterpartyFields: [], enabledTransactionTypes: [] },
      ],
    });
    expect(s.supportedCurrencies).toEqual([
      {
        currencyCode: 'EUR',
        minAmount: 0n,
        maxAmount: MAX_AMOUNT,
        requiredCounterpartyFields: [],
        enabledTransactionTypes: ['OUTGOING', 'INCOMING'],
      },
    ]);
  });

  it('keeps an incoming payment approval threshold per currency, refusing one out of range by its field', () => {
    const cur = (incomingPaymentApprovalThreshold?: bigint) => ({
      currencyCode: 'USD',
      requiredCounterpartyFields: [],
      enabledTransactionTypes: [],
      ...(incomingPaymentApprovalThreshold !== undefined ? { incomingPaymentApprovalThreshold } : {}),
    });
    const s = applyConfigUpdate(base, {
      supportedCurrencies: [cur(100_000n), { ...cur(), currencyCode: 'EUR' }],
    });
    expect(s.supportedCurrencies[0]!.incomingPaymentApprovalThreshold).toBe(100_000n);
    expect(s.supportedCurrencies[1]).not.toHaveProperty('incomingPaymentApprovalThreshold');
    expect(fieldsOf(() => applyConfigUpdate(base, { supportedCurrencies: [cur(-1n)] }))).toEqual([
      'supportedCurrencies[0].incomingPaymentApprovalThreshold',
    ]);
    expect(fieldsOf(() => applyConfigUpdate(base, { supportedCurrencies: [cur(MAX_AMOUNT + 1n)] }))).toEqual([
      'supportedCurrencies[0].incomingPaymentApprovalThreshold',
    ]);
  });

  it('does not mutate the current settings', () => {
    const current: PlatformSettings = { ...base, webhookEndpoint: 'https://a.example.com/h' };
    applyConfigUpdate(current, { webhookEndpoint: '' });
    expect(current.webhookEndpoint).toBe('https://a.example.com/h');
  });

  it.each([
    ['ftp://x.example.com', ['webhookEndpoint']],
    ['https://x.example.com/h#frag', ['webhookEndpoint']],
    [' https://x.example.com/h', ['webhookEndpoint']],
    ['http://10.0.0.1:8080/hook', []],
  ])('webhookEndpoint %s', (webhookEndpoint, expected) => {
    expect(fieldsOf(() => applyConfigUpdate(base, { webhookEndpoint }))).toEqual(expected);
  });

  const KYC_OK = 'https://kyc.example.com/onboard/{token}?customer={customerId}&next={redirectUri}#start';
  it.each([
    [KYC_OK, 'PRODUCTION', []],
    ['https://kyc.example.com/{token}', 'SANDBOX', []],
    ['http://localhost:3000/kyc/{token}', 'SANDBOX', []],
    ['http://127.0.0.1/kyc/{token}', 'SANDBOX', []],
    ['http://localhost:3000/kyc/{token}', 'PRODUCTION', ['kycLinkUrlTemplate']],
    ['http://localhost:3000/kyc/{token}', undefined, ['kycLinkUrlTemplate']],
    ['http://kyc.example.com/{token}', 'SANDBOX', ['kycLinkUrlTemplate']],
    ['ftp://kyc.example.com/{token}', 'SANDBOX', ['kycLinkUrlTemplate']],
    ['/onboard/{token}', 'SANDBOX', ['kycLinkUrlTemplate']],
    ['https://kyc.example.com/onboard', 'SANDBOX', ['kycLinkUrlTemplate']],
    ['https://kyc.example.com/{Token}', 'SANDBOX', ['kycLinkUrlTemplate']],
    ['https://kyc.example.com/{token}?p={platformId}', 'SANDBOX', ['kycLinkUrlTemplate']],
    ['https://{token}.kyc.example.com/', 'SANDBOX', ['kycLinkUrlTemplate']],
    ['https://user:pw@kyc.example.com/{token}', 'SANDBOX', ['kycLinkUrlTemplate']],
    ['https://kyc.example.com/ {token}', 'SANDBOX', ['kycLinkUrlTemplate']],
    [`https://kyc.example.com/${'a'.repeat(2048)}/{token}`, 'SANDBOX', ['kycLinkUrlTemplate']],
  ] as const)('kycLinkUrlTemplate %s (%s)', (kycLinkUrlTemplate, environment, expected) => {
    const update = () => applyConfigUpdate(base, { kycLinkUrlTemplate }, environment ? { environment } : {});
    expect(fieldsOf(update)).toEqual(expected);
    if (expected.length === 0) expect(update().kycLinkUrlTemplate).toBe(kycLinkUrlTemplate);
  });

  it('removes kycLinkUrlTemplate with the empty string', () => {
    const current: PlatformSettings = { ...base, kycLinkUrlTemplate: 'https://kyc.example.com/{token}' };
    expect(applyConfigUpdate(current, { kycLinkUrlTemplate: '' })).not.toHaveProperty('kycLinkUrlTemplate');
    expect(applyConfigUpdate(current, { umaDomain: 'pay.example.com' }).kycLinkUrlTemplate).toBe(
      'https://kyc.example.com/{token}',
    );
  });

  it('checks passkey origins against the relying party id', () => {
    const wallet = (origins: string[]) => ({
      currencies: [],
      oidcIssuers: [],
      passkey: { rpId: 'example.com', origins },
    });
    expect(
      applyConfigUpdate(base, {
        embeddedWalletConfig: wallet(['https://example.com', 'https://app.example.com:8443']),
      }).embeddedWalletConfig!.passkey!.origins,
    ).toEqual(['https://example.com', 'https://app.example.com:8443']);
    expect(
      fieldsOf(() => applyConfigUpdate(base, { embeddedWalletConfig: wallet(['https://notexample.com']) })),
    ).toEqual(['embeddedWalletConfig.passkey.origins[0]']);
    expect(
      fieldsOf(() => applyConfigUpdate(base, { embeddedWalletConfig: wallet(['http://example.com']) })),
    ).toEqual(['embeddedWalletConfig.passkey.origins[0]']);
    expect(
      fieldsOf(() => applyConfigUpdate(base, { embeddedWalletConfig: wallet(['https://example.com/path']) })),
    ).toEqual(['embeddedWalletConfig.passkey.origins[0]']);
  });

  it('defaults the OTP length to 6 and bounds it', () => {
    expect(
      applyConfigUpdate(base, { embeddedWalletConfig: { currencies: ['USDC'], oidcIssuers: [] } })
        .embeddedWalletConfig!.otpLength,
    ).toBe(6);
    expect(
      fieldsOf(() =>
        applyConfigUpdate(base, { embeddedWalletConfig: { currencies: [], oidcIssuers: [], otpLength: 3 } }),
      ),
    ).toEqual(['embeddedWalletConfig.otpLength']);
  });
});

describe('activeSecrets', () => {
  it('lists the current secret first, then unexpired previous ones newest first', () => {
    const now = new Date('2026-01-10T00:00:00Z');
    const at = (h: number) => new Date(now.getTime() + h * 3600_000);
    const list = activeSecrets(
      [
        { secret: 'old', createdAt: at(-48), expiresAt: at(-1) },
        { secret: 'prev1', createdAt: at(-30), expiresAt: at(1) },
        { secret: 'cur', createdAt: at(-2) },
        { secret: 'prev2', createdAt: at(-10), expiresAt: at(20) },
      ],
      now,
    );
    expect(list.map((s) => s.secret)).toEqual(['cur', 'prev2', 'prev1']);
  });
});
