import { walletAuth, type payments as pb } from '@sluice/contracts';
import { environmentFromPb, type AsyncService } from '@sluice/rpc';
import type { QuoteCreationService } from '../app/quote-creation.service.js';
import type { QuoteExecutionService } from '../app/quote-execution.service.js';
import type { QuoteExpiryService } from '../app/quote-expiry.service.js';
import {
  parseCreateQuoteRequest,
  parseExecuteQuoteRequest,
  parseQuoteRef,
  parseSandboxSendRequest,
} from '../domain/quote-request.js';
import { quoteToPb, transactionToPb } from './payments.mapper.js';

/** gRPC handlers of the quote RPCs of sluice.payments.v1.PaymentsService. */
export function quotesHandlers(o: {
  creation: QuoteCreationService;
  execution: QuoteExecutionService;
  expiry: QuoteExpiryService;
}): Pick<AsyncService<pb.PaymentsServiceServer>, 'createQuote' | 'getQuote' | 'executeQuote' | 'sandboxSend'> {
  return {
    async createQuote(req) {
      const { environment, ...fields } = req;
      const quote = await o.creation.create(parseCreateQuoteRequest({ ...fields, environment: environmentFromPb(environment) }));
      return { quote: quoteToPb(quote) };
    },
    async executeQuote(req) {
      const out = await o.execution.executeQuote(
        parseExecuteQuoteRequest({
          platformId: req.platformId,
          environment: environmentFromPb(req.environment),
          quoteId: req.quoteId,
          ...(req.walletSignature !== undefined ? { signature: req.walletSignature } : {}),
          ...(req.signingRequestId !== undefined ? { requestId: req.signingRequestId } : {}),
          ...(req.agentId !== undefined ? { agentId: req.agentId } : {}),
        }),
      );
      return out.challenge
        ? {
            signingChallenge: {
              requestId: out.challenge.requestId,
              payloadToSign: out.challenge.payloadToSign,
              expiresAt: out.challenge.expiresAt,
              credentialType: walletAuth.AuthMethodType.UNSPECIFIED,
            },
          }
        : { quote: quoteToPb(out.quote) };
    },
    async sandboxSend(req) {
      const transaction = await o.execution.sandboxSend(
        parseSandboxSendRequest({
          platformId: req.platformId,
          environment: environmentFromPb(req.environment),
          quoteId: req.quoteId,
          currencyCode: req.currencyCode,
          ...(req.currencyAmount !== undefined ? { amount: req.currencyAmount } : {}),
        }),
      );
      return { transaction: transactionToPb(transaction) };
    },
    async getQuote(req) {
      const ref = parseQuoteRef(req.platformId, req.quoteId);
      return { quote: quoteToPb(await o.expiry.read(ref.platformId, ref.quoteId)) };
    },
  };
}
