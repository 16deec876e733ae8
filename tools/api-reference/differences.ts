/**
 * THE list of documented differences between Sluice's public API and the reference document
 * (`grid-openapi-2026-05-13.yaml`): one place, read by the coverage check (`coverage.ts`), by
 * the reference check of the end-to-end suites (`capture.ts`) and rendered into
 * docs/api-differences.md (`npx tsx tools/api-coverage.ts --write`).
 *
 * Each entry says what differs and why. `coverage` lists the findings of the coverage check it
 * accounts for (exact text; `*` stands for any text); `overrides` are the changes made to the
 * reference's schemas before the captured answers are validated; `extensions` are operations
 * Sluice has and the reference does not. A `pending` entry is work in progress elsewhere (its
 * issue), not a decision: it goes when that work lands (the check fails on an entry that no
 * longer matches anything).
 */
import { referenceDocument, ReferenceValidator, type Json, type SchemaOverride } from './reference.js';

export interface Difference {
  id: string;
  title: string;
  reason: string;
  pending?: string;
  coverage?: string[];
  /** Overrides of the reference's schemas, or a function listing them from the reference. */
  overrides?: SchemaOverride[] | ((reference: Json) => SchemaOverride[]);
  extensions?: string[];
}

const S = '/components/schemas';

/** Adds `values` to the enum of a reference schema (at `pointer`, which must hold an `enum`). */
function extendEnum(pointer: string, values: string[]): (reference: Json) => SchemaOverride[] {
  return (reference) => {
    const at = pointer
      .split('/')
      .slice(1)
      .reduce<Json | undefined>((n, p) => n?.[p] as Json | undefined, reference);
    if (!Array.isArray(at?.enum))
      throw new Error(`differences.ts: ${pointer} holds no enum in the reference`);
    return [{ pointer: `${pointer}/enum`, value: [...new Set([...(at.enum as string[]), ...values])] }];
  };
}

export const DIFFERENCES: Difference[] = [
  // ---- the external-account variants ---------------------------------------------------------
  {
    id: 'external-account-variants',
    title: 'ExternalAccount: rails chosen at creation, bank name and account type on more variants',
    reason:
      'Every one of the 43 reference `accountInfo` variants is accepted and returned, each from one table ' +
      "(`libs/core/src/external-accounts.ts`). A create request may choose which of the variant's rails to use " +
      '(`paymentRails`, optional; default: every rail whose fields are given), which the reference only returns. The ' +
      'USD, EUR, GBP and MXN variants take an optional `bankName` and USD an optional `bankAccountType` (CHECKING or ' +
      "SAVINGS), which payouts and reconciliation use. In the document the create request's `accountInfo` is one " +
      'schema with `beneficiary` beside the variants (the accounts service checks it per variant: required for bank ' +
      'variants, refused as an unknown field for wallets); the responses carry it exactly as the reference variants do.',
    coverage: [
      '*ExternalAccountCreateInfo.paymentRails: not in the reference',
      '*ExternalAccountCreateInfo.bankName: not in the reference',
      '*ExternalAccountCreateInfo.bankAccountType: not in the reference',
      '*ExternalAccountInfo.bankName: not in the reference',
      '*ExternalAccountInfo.bankAccountType: not in the reference',
      '*WalletExternalAccountInfo.beneficiary: not in the reference',
      'LightningExternalAccountInfo.beneficiary: not in the reference',
    ],
  },

  // ---- decisions -----------------------------------------------------------------------------
  {
    id: 'bulk-import-csv',
    title: 'Bulk customer import: the CSV columns, the errors listed, and the answers besides 202',
    reason:
      'The CSV format is the reference’s, with three choices where it is silent. umaAddress may be left out (column or ' +
      'value): the customer gets a generated address, as on `POST /customers`. platformAccountId and description are ' +
      'accepted and not stored, because the Customer resource has no such fields. Only platformCustomerId and ' +
      'customerType must be in the header; the other required columns are required per row, for the row’s type, so a ' +
      'file of individuals needs no business columns. The import is idempotent by platformCustomerId: a row whose ' +
      'platformCustomerId is already a live customer of the same type counts as successful and creates nothing. A job ' +
      'lists at most its first 1,000 failed rows in `errors`, in row order (progress.failed counts them all), in the ' +
      'answer and in the BULK_UPLOAD webhook alike, so that neither grows without bound; each entry’s `details` holds ' +
      'the row, the line of the file, the CSV columns at fault (`errors[{field, message}]`) and, for a conflict, the ' +
      'existing customerId. A file that is not the CSV format (unknown or repeated column, a required header column ' +
      'missing, an unclosed quote, not UTF-8, no data row, more than 100,000 rows) is 400 INVALID_INPUT on `file` and ' +
      'stores nothing; over 64 MiB is 413; not multipart is 415. The reference lists 202, 401 and 500 only.',
  },
  {
    id: 'one-transaction-object',
    title: 'One Transaction schema in the document',
    reason:
      'The document publishes one `Transaction` object whose `type` is INCOMING or OUTGOING, with the OUTGOING-only fields ' +
      '(`sentAmount`, `exchangeRate`, `fees`, `quoteId`, `refund`) optional; the bodies themselves are the reference variants ' +
      '(an INCOMING body carries none of them), which the end-to-end reference check validates against ' +
      '`IncomingTransaction`/`OutgoingTransaction` on every answer and webhook. The union is not spelled out in the document ' +
      'because the gateway serializes responses by schema and one object keeps that exact and fast. For the same reason ' +
      '`rateDetails` is one object: an OUTGOING payment of a quote carries every OutgoingRateDetails field, an INCOMING ' +
      'one the four IncomingRateDetails fields (rate 1 and zero fees: Sluice converts nothing on the way in and takes no ' +
      'fee), so the two `counterparty*` fields are optional in the document.',
    coverage: [
      '* 200: response schema Transaction (reference: TransactionOneOf)',
      '* 201: response schema Transaction (reference: TransactionOneOf)',
      '* 200: response schema Transaction (reference: IncomingTransaction)',
      '* 200: response schema Transaction (reference: OutgoingTransaction)',
      'IncomingTransaction.sentAmount: not in the reference',
      'IncomingTransaction.exchangeRate: not in the reference',
      'IncomingTransaction.fees: not in the reference',
      'IncomingTransaction.quoteId: not in the reference',
      'IncomingTransaction.refund: not in the reference',
      'IncomingTransaction.paymentInstructions: not in the reference',
      'OutgoingTransaction.sentAmount: optional (required in the reference)',
      'IncomingRateDetails.counterpartyMultiplier: not in the reference',
      'IncomingRateDetails.counterpartyFixedFee: not in the reference',
      'OutgoingRateDetails.counterpartyMultiplier: optional (required in the reference)',
      'OutgoingRateDetails.counterpartyFixedFee: optional (required in the reference)',
      // One source and one destination object with the kind's fields optional, instead of per-kind variants.
      'AccountTransactionDestination.*',
      'UmaAddressTransactionDestination.*',
      'AccountTransactionSource.*',
      'UmaAddressTransactionSource.*',
      'RealtimeFundingTransactionSource.accountId: not in the reference',
      'RealtimeFundingTransactionSource.umaAddress: not in the reference',
      'RealtimeFundingTransactionSource.sourceType: enum adds ACCOUNT, UMA_ADDRESS',
      'IncomingTransaction.type: enum adds OUTGOING',
      'OutgoingTransaction.type: enum adds INCOMING',
    ],
  },
  {
    id: 'failure-detail',
    title:
      'Transaction `failureDetail`, `reconciliationInstructions` on OUTGOING, failure reasons of the specification',
    reason:
      '`failureDetail` (INSUFFICIENT_FUNDS, REJECTED_BY_BANK, TIMED_OUT, ...) says more than `failureReason` and is a Sluice ' +
      'extension. `reconciliationInstructions.reference` is given on every transaction so a platform can match bank ' +
      'statements in both directions. `failureReason` takes the values the specification lists for Transaction ' +
      "(`OFFRAMP_FAILED`, `PAY_REQUEST_FAILED`, ... on OUTGOING payments too), which is wider than the reference's " +
      'OutgoingTransactionFailureReason; the document writes it as a string.',
    coverage: [
      'IncomingTransaction.failureDetail: not in the reference',
      'OutgoingTransaction.failureDetail: not in the reference',
      'OutgoingTransaction.reconciliationInstructions: not in the reference',
      'IncomingTransactionFailureReason: not an enum *',
      'OutgoingTransactionFailureReason: not an enum *',
    ],
    overrides: extendEnum(`${S}/OutgoingTransactionFailureReason`, [
      'LNURLP_FAILED',
      'PAY_REQUEST_FAILED',
      'PAYMENT_APPROVAL_WEBHOOK_ERROR',
      'PAYMENT_APPROVAL_TIMED_OUT',
      'OFFRAMP_FAILED',
      'MISSING_MANDATORY_PAYEE_DATA',
    ]),
  },
  {
    id: 'refunded-status',
    title: 'OUTGOING transactions can be REFUNDED',
    reason:
      'The specification\'s Transaction statuses include REFUNDED ("payment was unable to complete and refunded"); a failed ' +
      'payout whose money had left the payer ends REFUNDED once the refund settles (OUTGOING_PAYMENT.REFUND_COMPLETED). ' +
      "The reference's OutgoingTransactionStatus omits it.",
    coverage: ['OutgoingTransactionStatus: enum adds CREATED, REJECTED, REFUNDED'],
    overrides: extendEnum(`${S}/OutgoingTransactionStatus`, ['REFUNDED']),
  },
  {
    id: 'quote-fields',
    title:
      'Quote: locked side and amount, lookup, description, purpose, payloadToSign; one source and destination object',
    reason:
      'The quote echoes what it was created with (`lockedCurrencySide`, `lockedCurrencyAmount`, `lookupId`, `description`, ' +
      '`purposeOfPayment`) and, for an EMBEDDED_WALLET source, the `payloadToSign` of its signed execution. Its source and ' +
      "destination are one object each with the kind's fields optional, and `destination.paymentRail` is the rail chosen " +
      '(a string) rather than the list of the reference.',
    coverage: [
      'Quote.lockedCurrencySide: not in the reference',
      'Quote.lockedCurrencyAmount: not in the reference',
      'Quote.lookupId: not in the reference',
      'Quote.description: not in the reference',
      'Quote.purposeOfPayment: not in the reference',
      'Quote.payloadToSign: not in the reference',
      // The quote an AgentAction carries is the same Quote.
      'AgentAction.quote.lockedCurrencySide: not in the reference',
      'AgentAction.quote.lockedCurrencyAmount: not in the reference',
      'AgentAction.quote.lookupId: not in the reference',
      'AgentAction.quote.description: not in the reference',
      'AgentAction.quote.purposeOfPayment: not in the reference',
      'AgentAction.quote.payloadToSign: not in the reference',
      'AccountQuoteSource.*',
      'RealtimeFundingQuoteSource.*',
      'AccountDestination.*',
      'UmaAddressDestination.*',
    ],
  },
  {
    id: 'quote-execute-again',
    title: 'Executing an executed quote answers the quote (200), not 409',
    reason:
      'The reference answers 409 for a quote "already confirmed, expired, or in invalid state". Sluice answers 409 ' +
      'QUOTE_EXPIRED and 409 QUOTE_NOT_EXECUTABLE (a REALTIME_FUNDING quote executes when its funds arrive) as the ' +
      'reference does, but an execute of a quote already executed returns the quote as it is (200): execution is ' +
      'exactly once whatever the retries, and a client that lost the first answer (or retried it under another ' +
      'Idempotency-Key) learns the outcome instead of an error for a payment that happened.',
  },
  {
    id: 'quote-signed-execute',
    title: '`POST /quotes/{quoteId}/execute` answers 202 for an EMBEDDED_WALLET source',
    reason:
      'The specification lists executing a quote from an embedded wallet among the signed-retry flows: the first call ' +
      'answers 202 with the signing challenge.',
    coverage: [
      'POST /quotes/{quoteId}/execute: answers 200, 202 (reference: 200)',
      'POST /agents/me/quotes/{quoteId}/execute: answers 200, 202 (reference: 200)',
    ],
    overrides: ['/paths/~1quotes~1{quoteId}~1execute', '/paths/~1agents~1me~1quotes~1{quoteId}~1execute'].map(
      (path) => ({
        pointer: `${path}/post/responses/202`,
        value: {
          description: 'EMBEDDED_WALLET source: sign payloadToSign and repeat the request',
          content: {
            'application/json': { schema: { $ref: '#/components/schemas/SignedRequestChallenge' } },
          },
        },
      }),
    ),
  },
  {
    id: 'list-envelope',
    title: "Every list has the specification's envelope",
    reason:
      "The specification's list envelope (`data`, `hasMore`, `nextCursor`, `totalCount`) applies to all list endpoints; " +
      'the reference leaves it out of the exchange-rate, platform internal-account and discovery lists (`GET /discoveries` ' +
      'answers every match at once: `hasMore` false, no cursor, as the reference takes no paging parameters there).',
    coverage: [
      'ExchangeRateListResponse.hasMore: not in the reference',
      'ExchangeRateListResponse.nextCursor: not in the reference',
      'ExchangeRateListResponse.totalCount: not in the reference',
      'PlatformInternalAccountListResponse.hasMore: not in the reference',
      'PlatformInternalAccountListResponse.nextCursor: not in the reference',
      'PlatformInternalAccountListResponse.totalCount: not in the reference',
      'DiscoveryListResponse.hasMore: not in the reference',
      'DiscoveryListResponse.nextCursor: not in the reference',
      'DiscoveryListResponse.totalCount: not in the reference',
      'GET /platform/internal-accounts: query parameter limit not in the reference',
      'GET /platform/internal-accounts: query parameter cursor not in the reference',
    ],
  },
  {
    id: 'internal-account-get',
    title: '`GET /internal-accounts/{id}`',
    reason:
      'One internal account and its balance by id (the reference finds an account only through the filtered lists). ' +
      "Another platform's account or an unknown id is 404 INTERNAL_ACCOUNT_NOT_FOUND.",
    extensions: ['GET /internal-accounts/{id}'],
  },
  {
    id: 'webhook-operations',
    title: 'Webhooks: the delivery log, redelivery and replay; disabled endpoints; the approval threshold',
    reason:
      'A platform can see what was sent to it and recover from an outage itself: `GET /webhooks/deliveries` (filters ' +
      'by type, status, time), `GET /webhooks/deliveries/{id}` with its attempts, `POST /webhooks/deliveries/{id}/redeliver` ' +
      '(the same `webhook-id`) and `POST /webhooks/replay` (every webhook of a time range that did not reach it). An ' +
      'endpoint that answers 410 Gone, or fails for 72 h, is disabled: the config says when and why ' +
      '(`webhookEndpointDisabledAt`, `webhookEndpointDisabledReason`) until `webhookEndpoint` is set again. ' +
      '`incomingPaymentApprovalThreshold` of a currency is the amount from which an incoming payment waits for the ' +
      "platform's answer to its INCOMING_PAYMENT.PENDING webhook (docs/webhooks.md).",
    coverage: [
      'PlatformConfig.webhookEndpointDisabledAt: not in the reference',
      'PlatformConfig.webhookEndpointDisabledReason: not in the reference',
      'PlatformCurrencyConfig.incomingPaymentApprovalThreshold: not in the reference',
    ],
    extensions: [
      'GET /webhooks/deliveries',
      'GET /webhooks/deliveries/{deliveryId}',
      'POST /webhooks/deliveries/{deliveryId}/redeliver',
      'POST /webhooks/replay',
    ],
  },
  {
    id: 'beneficial-owners-separate',
    title: "A business customer's beneficial owners are read from `/beneficial-owners`",
    reason:
      'Beneficial owners belong to the compliance service (with their KYC and documents); a BUSINESS customer does not ' +
      'embed them (`beneficialOwners`), so reading a customer stays one service. `GET /beneficial-owners?customerId=` ' +
      'lists them.',
    coverage: ['BusinessCustomer.beneficialOwners: missing'],
  },
  {
    id: 'document-file',
    title: '`GET /documents/{documentId}/file`',
    reason:
      'The platform can read back the file it uploaded (streamed, decrypted, with its sniffed content type); the ' +
      'reference stores documents without a way to fetch them.',
    extensions: ['GET /documents/{documentId}/file'],
  },
  {
    id: 'agent-details',
    title: 'Agents: failureReason on actions, quotes only from accounts, device codes for a connected agent',
    reason:
      '`failureReason` on a FAILED AgentAction says why (for instance QUOTE_EXPIRED, INSUFFICIENT_FUNDS, ' +
      'APPROVAL_EXPIRED). `POST /agents/me/quotes` refuses `immediatelyExecute: true` and sources other than an ' +
      'internal account (executing at creation would bypass the policy). `POST /agents/{agentId}/device-codes` does ' +
      "not answer 409 for a connected agent: it is the reinstall path (redeeming the new code replaces the agent's " +
      'token). `GET /agents/device-codes/{code}/status` needs no credentials, like redeem: the agent software polls it ' +
      'before it has any. A `POST /agents` or `POST /agents/{agentId}/device-codes` retried with its Idempotency-Key ' +
      'after its answer was lost (the gateway replays a stored answer as the reference says; this is the answer it ' +
      'never stored) answers the same agent but a fresh device code in the lost one’s place, with its expiresAt: only ' +
      'a hash of a code is kept, and the lost code stops working, so one code is valid (docs/agents.md).',
    coverage: ['AgentAction.failureReason: not in the reference'],
  },
  {
    id: 'config-provider-fields',
    title: 'PlatformConfig: no proxyUmaSubdomain, no provider-required customer fields',
    reason:
      "A Sluice deployment serves UMA for the platform's own `umaDomain` itself; there is no hosted UMA proxy whose " +
      'subdomain `proxyUmaSubdomain` would name. There is no underlying UMA provider either: no currency requires customer ' +
      'fields at creation (the reference omits `providerRequiredCustomerFields` when none are required), and what a ' +
      'receiving counterparty requires of the sender is answered per receiver by the lookup (`requiredPayerDataFields` of ' +
      '`GET /receiver/...`) and enforced at quote creation.',
    coverage: [
      'PlatformConfig.proxyUmaSubdomain: missing',
      'PlatformCurrencyConfig.providerRequiredCustomerFields: missing',
      'PlatformCurrencyConfig.providerRequiredCounterpartyCustomerFields: missing',
    ],
  },
  {
    id: 'config-extensions',
    title: 'PlatformConfig: embedded-wallet settings and the webhook signing secret',
    reason:
      "Webhook signing follows this project's design (the reference README): the config returns the signing secret and, " +
      'after a rotation, when the previous one stops being accepted. `embeddedWalletConfig` holds the embedded-wallet ' +
      'settings of the platform (OIDC issuers, passkey relying party).',
    coverage: [
      'PlatformConfig.embeddedWalletConfig: not in the reference',
      'PlatformConfig.webhookSigningSecret: not in the reference',
      'PlatformConfig.previousWebhookSigningSecretExpiresAt: not in the reference',
      'PlatformConfigUpdateRequest.embeddedWalletConfig: not in the reference',
    ],
    extensions: ['POST /config/webhook-secret/rotate'],
  },
  {
    id: 'config-kyc-link-url-template',
    title: 'PlatformConfig: kycLinkUrlTemplate, where hosted KYC links point',
    reason:
      'The reference returns a `kycUrl` from `POST /customers/{customerId}/kyc-link` on a page its operator hosts with its ' +
      'KYC provider; Sluice integrates no provider, so the platform says where its customers verify: ' +
      '`kycLinkUrlTemplate`, an absolute https URL with `{token}` (optionally `{customerId}`, `{redirectUri}`), set and ' +
      'removed (`null`) with `PATCH /config` like `webhookEndpoint`. Without it a sandbox platform gets links to the ' +
      "deployment's stub page and a production platform 400 KYC_LINK_NOT_CONFIGURED (docs/compliance.md).",
    coverage: [
      'PlatformConfig.kycLinkUrlTemplate: not in the reference',
      'PlatformConfigUpdateRequest.kycLinkUrlTemplate: not in the reference',
    ],
  },
  {
    id: 'exchange-rate-fees',
    title: 'Exchange rates: the variable fee rate; the payout rail as a string',
    reason:
      "Sluice's fees have a variable part, published as `fees.variableRate`; `destinationPaymentRail` names the rail " +
      '(a string).',
    coverage: [
      'ExchangeRateFees.variableRate: not in the reference',
      'ExchangeRate.destinationPaymentRail: scalar (reference: object)',
    ],
  },
  {
    id: 'business-customer-contact',
    title: 'Business customers are created with businessInfo',
    reason:
      '`fullName`, `birthDate` and `nationality` of a BUSINESS customer name its contact person (optional).',
    coverage: ['BusinessCustomerCreateRequest.businessInfo: required (optional in the reference)'],
  },
  {
    id: 'resource-timestamps',
    title: 'External accounts have createdAt/updatedAt; bank name of payment instructions',
    reason:
      'Every stored resource says when it was created and changed; US payment instructions name the bank.',
    coverage: [
      'ExternalAccount.createdAt: not in the reference',
      'ExternalAccount.updatedAt: not in the reference',
      'PaymentUsdAccountInfo.bankName: not in the reference',
    ],
  },
  {
    id: 'transfer-fields',
    title: 'Transfers: `amount` required, `description` accepted',
    reason:
      'A same-currency transfer moves an explicit amount (the reference leaves it optional without saying what an absent ' +
      'amount means); a transfer can carry a description like a quote.',
    coverage: [
      'TransferInRequest.amount: required (optional in the reference)',
      'TransferInRequest.description: not in the reference',
      'TransferOutRequest.amount: required (optional in the reference)',
      'TransferOutRequest.description: not in the reference',
    ],
  },
  {
    id: 'lookup-expiry',
    title: 'Receiver lookups expire, and may name the sending currency',
    reason:
      'A lookup is valid for a limited time before a quote uses it; `expiresAt` says until when. `sendingCurrency` ' +
      '(optional) is the currency the sender will pay in: the estimated rates of the receiving currencies are quoted from it (default USD).',
    coverage: [
      'ReceiverUmaLookupResponse.expiresAt: not in the reference',
      'ReceiverExternalAccountLookupResponse.expiresAt: not in the reference',
      'GET /receiver/uma/{receiverUmaAddress}: query parameter sendingCurrency not in the reference',
      'GET /receiver/external-account/{accountId}: query parameter sendingCurrency not in the reference',
      'CustomerInfoFieldName: not an enum *',
    ],
  },
  {
    id: 'wallet-auth',
    title: 'Embedded-wallet authentication details',
    reason:
      'An internal-account update states `privateEnabled` explicitly (the only setting it changes); an EMAIL_OTP ' +
      'credential may name its address (default: the customer email), OAUTH and PASSKEY credentials read theirs from the ' +
      'token or have none; sessions name the credential that issued them (`authMethodId`); a PASSKEY challenge answer is ' +
      'one object (the reference splits it by type); passkey transports are free strings as WebAuthn browsers report them. ' +
      '409 EMAIL_OTP_EMAIL_ALREADY_EXISTS answers `PATCH /auth/credentials/{id}` to an address that a live EMAIL_OTP ' +
      'credential of the platform already has (on this or another account, as the reference says; compared ' +
      "case-insensitively; another platform's credentials are not seen); registering an EMAIL_OTP credential may share an address " +
      '(the reference lists no 409 there: a customer with several wallets has one email).',
    coverage: [
      'InternalAccountUpdateRequest.privateEnabled: required (optional in the reference)',
      'EmailOtpCredentialCreateRequest.email: not in the reference',
      'PasskeyAttestation.transports[]: not an enum *',
      'AuthSession.authMethodId: not in the reference',
      'POST /auth/credentials/{id}/challenge 200: response schema (inline) (reference: AuthCredentialResponseOneOf)',
      'AuthMethodResponse.challenge: not in the reference',
      'AuthMethodResponse.requestId: not in the reference',
      'AuthMethodResponse.expiresAt: not in the reference',
    ],
  },
  {
    id: 'error-codes',
    title: 'Error codes the reference does not name',
    reason:
      'Where the reference names a code for the same condition Sluice uses it (QUOTE_NOT_FOUND, TRANSACTION_NOT_FOUND, ' +
      'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL, AMOUNT_OUT_OF_RANGE, LOOKUP_REQUEST_NOT_FOUND, ' +
      'TOKEN_NOT_FOUND, INVALID_INPUT, UMA_ADDRESS_EXISTS, WEBHOOK_ENDPOINT_NOT_SET, EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS, ' +
      'INTERNAL_ERROR, ...). For conditions the reference has no code for, Sluice answers a finer code than the generic ' +
      'one, with the same status: the resource that was not found (CUSTOMER_NOT_FOUND, INTERNAL_ACCOUNT_NOT_FOUND, ' +
      'EXTERNAL_ACCOUNT_NOT_FOUND, CREDENTIAL_NOT_FOUND, SESSION_NOT_FOUND, UMA_RECEIVER_NOT_FOUND, ...), why a payment ' +
      'cannot proceed (INSUFFICIENT_FUNDS, QUOTE_EXPIRED, QUOTE_NOT_EXECUTABLE, EXTERNAL_ACCOUNT_NOT_USABLE, ...), which ' +
      "rule of an agent's policy refused (403 AGENT_PAUSED, MISSING_PERMISSION_<PERMISSION>, DAILY_LIMIT_EXCEEDED, ...), which " +
      'check of a signed retry failed (401 SIGNING_REQUEST_UNKNOWN, SIGNED_BODY_MISMATCH, ...; the specification gives ' +
      "these conditions a 401 without naming codes) and the gateway's own answers (NOT_FOUND for an unknown route, " +
      'BAD_REQUEST for a malformed URL, 409 IDEMPOTENCY_KEY_IN_PROGRESS). Statuses the reference does not list for an ' +
      'operation (413, 414, 415, 422, 431, 503, and 401/403/429 where an operation omits them) carry the same error body.',
    overrides: (reference) => [
      ...extendEnum(`${S}/Error400/properties/code`, [
        'DEVICE_CODE_EXPIRED',
        'DEVICE_CODE_ALREADY_REDEEMED',
        'CURRENCY_NOT_CONVERTIBLE',
        'QUOTE_EXPIRED',
        'QUOTE_NOT_EXECUTABLE',
        'PAYLOAD_TOO_LARGE',
        'KYC_LINK_NOT_CONFIGURED',
        'BAD_REQUEST',
        'BALANCE_LIMIT_EXCEEDED',
        'EXTERNAL_ACCOUNT_INVALID',
        'EXTERNAL_ACCOUNT_NOT_USABLE',
        'ILLEGAL_STATE_TRANSITION',
        'INSUFFICIENT_FUNDS',
        'LOOKUP_EXPIRED',
        'NOT_EMBEDDED_WALLET',
        'SAME_CURRENCY_QUOTE',
        'UNSUPPORTED_CURRENCY',
        'CUSTOMER_DELETED',
        'CANNOT_DELETE_LAST_TOKEN',
        'CREDENTIAL_CONFLICT',
        'UMA_DOMAIN_NOT_CONFIGURED',
        'OAUTH_CREDENTIAL_ALREADY_EXISTS',
        'LAST_CREDENTIAL',
        'CREDENTIAL_TYPE_MISMATCH',
        'INVALID_ATTESTATION',
        'INVALID_CLIENT_PUBLIC_KEY',
        'EMBEDDED_WALLET_NOT_CONFIGURED',
        'EXPORT_UNAVAILABLE',
      ])(reference),
      ...extendEnum(`${S}/Error401/properties/code`, [
        'AGENT_TOKEN_INVALID',
        'SIGNING_REQUEST_ID_MISSING',
        'SIGNING_REQUEST_UNKNOWN',
        'SIGNING_REQUEST_EXPIRED',
        'SIGNING_REQUEST_REUSED',
        'SIGNING_REQUEST_MISMATCH',
        'SIGNED_BODY_MISMATCH',
        'WALLET_SIGNATURE_WRONG_ACCOUNT',
        'WALLET_SESSION_NOT_ACTIVE',
        'WALLET_SIGNATURE_SAME_CREDENTIAL',
        'WALLET_SIGNATURE_WRONG_SESSION',
        'SESSION_NOT_ACTIVE',
        'WALLET_SIGNATURE_MISSING',
        'WALLET_SIGNATURE_MALFORMED',
        'WALLET_SIGNATURE_INVALID',
      ])(reference),
      ...extendEnum(`${S}/Error403/properties/code`, [
        'SANDBOX_ONLY',
        // the agents service: the policy rule that refused (docs/agents.md)
        'AGENT_PAUSED',
        'MISSING_PERMISSION_VIEW_TRANSACTIONS',
        'MISSING_PERMISSION_CREATE_TRANSFERS',
        'MISSING_PERMISSION_CREATE_QUOTES',
        'MISSING_PERMISSION_EXECUTE_QUOTES',
        'MISSING_PERMISSION_MANAGE_EXTERNAL_ACCOUNTS',
        'ACCOUNT_NOT_ALLOWED',
        'PER_TRANSACTION_LIMIT_EXCEEDED',
        'DAILY_LIMIT_EXCEEDED',
        'MONTHLY_LIMIT_EXCEEDED',
        'DAILY_TRANSACTION_LIMIT_EXCEEDED',
      ])(reference),
      ...extendEnum(`${S}/Error404/properties/code`, [
        'AGENT_NOT_FOUND',
        'AGENT_ACTION_NOT_FOUND',
        'DEVICE_CODE_NOT_FOUND',
        'BENEFICIAL_OWNER_NOT_FOUND',
        'DOCUMENT_NOT_FOUND',
        'DOCUMENT_HOLDER_NOT_FOUND',
        'VERIFICATION_NOT_FOUND',
        'NOT_FOUND',
        'CUSTOMER_NOT_FOUND',
        'PLATFORM_NOT_FOUND',
        'INTERNAL_ACCOUNT_NOT_FOUND',
        'EXTERNAL_ACCOUNT_NOT_FOUND',
        'UMA_RECEIVER_NOT_FOUND',
        'CREDENTIAL_NOT_FOUND',
        'SESSION_NOT_FOUND',
        'WEBHOOK_DELIVERY_NOT_FOUND',
      ])(reference),
      ...extendEnum(`${S}/Error409/properties/code`, [
        'ACTION_NOT_PENDING',
        'POLICY_CHANGED',
        'DOCUMENT_IN_VERIFICATION',
        'IDEMPOTENCY_KEY_IN_PROGRESS',
        'QUOTE_EXPIRED',
        'QUOTE_NOT_EXECUTABLE',
        'CUSTOMER_ALREADY_EXISTS',
        'EXTERNAL_ACCOUNT_ALREADY_EXISTS',
      ])(reference),
      ...extendEnum(`${S}/Error429/properties/code`, ['OTP_RESEND_TOO_SOON', 'TOO_MANY_ATTEMPTS'])(reference),
    ],
  },
];

/** The overrides of every difference, resolved against the reference. */
export function schemaOverrides(reference: Json = referenceDocument()): SchemaOverride[] {
  return DIFFERENCES.flatMap((d) =>
    typeof d.overrides === 'function' ? d.overrides(reference) : (d.overrides ?? []),
  );
}

/** The validator of captured answers, with every documented override and extension. */
export function referenceValidator(): ReferenceValidator {
  return new ReferenceValidator(
    schemaOverrides(),
    DIFFERENCES.flatMap((d) => d.extensions ?? []),
  );
}
