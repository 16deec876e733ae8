import { Quote, Transaction, quoteJson, transactionJson } from '@sluice/api';
import { environmentOf, headerOf } from '../http/request.helpers.js';
import { requireSandbox, type RouteModule } from '../http/types.js';
import { errorResponses } from '../schemas/common.js';
import { QuoteParams, QuoteRequest, SandboxSendRequest, quoteRequestPb } from '../schemas/quote.schemas.js';
import { SigningChallenge, challengeJson } from '../schemas/wallet-auth.schemas.js';

const TAGS = ['Cross-Currency Transfers'];

/**
 * Quotes: `POST /quotes` locks the rate and amounts of a cross-currency payment
 * (PENDING until expiresAt), `GET /quotes/{quoteId}` reads one back,
 * `POST /quotes/{quoteId}/execute` pays it and `POST /sandbox/send` simulates
 * paying a real-time-funded quote's instructions.
 */
const quotesRoutes: RouteModule = (app, deps) => {
  const client = deps.clients.payments;

  app.post(
    '/quotes',
    {
      config: { permission: ['TRANSACT', 'MANAGE'] },
      schema: {
        tags: TAGS,
        operationId: 'createQuote',
        summary: 'Create a transfer quote',
        description:
          'Locks the exchange rate and fees of a cross-currency payment from an internal account (sourceType ACCOUNT) or real-time funding (REALTIME_FUNDING: the response carries paymentInstructions and transactionId, the OUTGOING transaction PENDING until the funds arrive) to an internal or external account (destinationType ACCOUNT) or a UMA address (UMA_ADDRESS, lookupId from GET /receiver/uma/{address} required). The quote is PENDING until expiresAt (QUOTE_TTL_SECONDS, default 120 s), then EXPIRED. totalSendingAmount includes feesIncluded; every rounding favours the customer (docs/payments.md). immediatelyExecute executes at creation (not for EMBEDDED_WALLET or REALTIME_FUNDING sources: 400 naming it). 400 SAME_CURRENCY_QUOTE when both sides share a currency (use /transfer-out or /transfer-in); 400 INVALID_INPUT naming senderCustomerInfo.<FIELD> for each missing mandatory payer-data field; 404 LOOKUP_REQUEST_NOT_FOUND; 400 LOOKUP_EXPIRED.',
        body: QuoteRequest,
        response: { 201: Quote, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const { quote } = await client.createQuote({
        platformId: request.platform.id,
        environment: environmentOf(request),
        ...quoteRequestPb(request.body),
      });
      return reply.code(201).send(quoteJson(quote!));
    },
  );

  app.get(
    '/quotes/:quoteId',
    {
      schema: {
        tags: TAGS,
        operationId: 'getQuoteById',
        summary: 'Get a quote by ID',
        description: "404 QUOTE_NOT_FOUND for an unknown or another platform's quote.",
        params: QuoteParams,
        response: { 200: Quote, ...errorResponses() },
      },
    },
    async (request) => {
      const { quote } = await client.getQuote({ platformId: request.platform.id, quoteId: request.params.quoteId });
      return quoteJson(quote!);
    },
  );

  app.post(
    '/quotes/:quoteId/execute',
    {
      config: { permission: ['TRANSACT', 'MANAGE'] },
      schema: {
        tags: TAGS,
        operationId: 'executeQuote',
        summary: 'Execute a quote',
        description:
          'Takes no body. Holds totalSendingAmount on the source account, carries the quote’s OUTGOING transaction (transactionId, PENDING since the quote was created) forward and books it (internal-account destination: COMPLETED in the response) or hands it to the rail (external account, UMA address); the quote follows the transaction to COMPLETED or FAILED (OUTGOING_PAYMENT.* webhooks). Executing again — with the same or another Idempotency-Key, concurrently or later — returns the quote and never moves money twice. 409 QUOTE_EXPIRED (the quote becomes EXPIRED); 400 INSUFFICIENT_FUNDS (the quote stays PENDING); 409 QUOTE_NOT_EXECUTABLE for a REALTIME_FUNDING quote (it executes when its paymentInstructions are paid); an EMBEDDED_WALLET source needs header Service-Wallet-Signature (a stamp by a session key of the wallet) over the payloadToSign of a signing request: the one of the quote (Request-Id optional, it defaults to the request of the quote) or a fresh one — without either header the answer is 202 with payloadToSign, requestId and expiresAt (step 1 of the signed retry; nothing is held), and the same execute is repeated with both headers. A bad or reused signature is 401 with the wallet-auth code (SIGNING_REQUEST_REUSED, WALLET_SIGNATURE_INVALID, ...), nothing held; a signed execute whose hold is refused (INSUFFICIENT_FUNDS) has used its request, so ask for a fresh one the same way; 404 QUOTE_NOT_FOUND. Sandbox, by the last 3 digits of the external account identifier: 002 execution failed (FAILED, QUOTE_EXECUTION_FAILED, funds released); 003 PROCESSING about 6 minutes, then COMPLETED; 004 counterparty delivery failed (FAILED, OFFRAMP_FAILED, funds released); 005 COMPLETED, then returned by the receiving bank (FAILED, OFFRAMP_FAILED, then REFUNDED); 006 cancelled by the user (FAILED, QUOTE_EXECUTION_FAILED, refund USER_CANCELLATION, then REFUNDED); 007 payout and refund failed (FAILED, OFFRAMP_FAILED, refund FAILED); anything else COMPLETED after about 1 s. UMA sandbox receivers: $success.* COMPLETED after about 1 s; $pending.long.usd after about 6 minutes; $fail.compliance.usd FAILED (PAY_REQUEST_FAILED). Times × SANDBOX_TIME_SCALE.',
        params: QuoteParams,
        response: { 200: Quote, 202: SigningChallenge, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const signature = headerOf(request, 'Service-Wallet-Signature');
      const requestId = headerOf(request, 'Request-Id');
      const { quote, signingChallenge } = await client.executeQuote({
        platformId: request.platform.id,
        environment: environmentOf(request),
        quoteId: request.params.quoteId,
        ...(signature ? { walletSignature: signature } : {}),
        ...(requestId ? { signingRequestId: requestId } : {}),
      });
      if (signingChallenge) return reply.code(202).send(challengeJson(signingChallenge));
      return reply.send(quoteJson(quote!));
    },
  );

  app.post(
    '/sandbox/send',
    {
      config: { permission: ['TRANSACT', 'MANAGE'] },
      schema: {
        tags: ['Sandbox'],
        operationId: 'sandboxSend',
        summary: 'Simulate paying a quote’s real-time funding instructions',
        description:
          'Sandbox only (403 SANDBOX_ONLY for production platforms). The payer of a REALTIME_FUNDING quote pays its paymentInstructions: the funds arrive, the quote becomes PROCESSING and its OUTGOING transaction proceeds as an execution (booked to an internal account, or paid out through the sandbox rail with the outcomes of POST /quotes/{quoteId}/execute; if the payout fails before delivery the funds are refunded to the payer: REFUNDED). Returns the transaction. A quote already funded returns its transaction as it is (nothing moves twice). 409 QUOTE_EXPIRED; 400 INVALID_INPUT on quoteId (a quote with an internal-account source), currencyCode (not the quote’s sending currency) or currencyAmount (not its totalSendingAmount); 404 QUOTE_NOT_FOUND.',
        body: SandboxSendRequest,
        response: { 200: Transaction, ...errorResponses() },
      },
    },
    async (request) => {
      requireSandbox(request);
      const b = request.body;
      const { transaction } = await client.sandboxSend({
        platformId: request.platform.id,
        environment: environmentOf(request),
        quoteId: b.quoteId,
        currencyCode: b.currencyCode,
        ...(b.currencyAmount !== undefined ? { currencyAmount: BigInt(b.currencyAmount) } : {}),
      });
      return transactionJson(transaction!);
    },
  );
};

export default quotesRoutes;
