import { accounts, payments as pb, walletAuth } from '@sluice/contracts';
import { createRpcClient, type PromiseClient } from '@sluice/rpc';
import {
  DomainError,
  isCurrencyCode,
  isDomainError,
  isId,
  PAYMENT_RAILS,
  PURPOSES_OF_PAYMENT,
} from '@sluice/core';
import type { AsyncService } from '@sluice/rpc';
import type {
  CreateQuoteRequest,
  InternalAccountType,
  InternalAccountTypes,
  QuotesService,
  WalletSignatures,
  SigningChallenge,
} from '../app/quotes.service.js';
import type { PurposeOfPayment, Quote } from '../domain/quote.js';
import type { PaymentRailName } from '../domain/payout-rails.js';
import { toDecimalString } from '../domain/ratio.js';
import { Checks } from './checks.js';
import { environmentFromPb } from './payments.mapper.js';
import { rateDetailsToPb, transactionToPb } from './transactions.rpc.js';

/** The public Quote as the gRPC message. */
export function quoteToPb(q: Quote): pb.Quote {
  const a = q.amounts;
  return {
    id: q.id,
    platformId: q.platformId,
    status: q.status,
    source: q.source,
    destination: q.destination,
    ...(q.customerId ? { customerId: q.customerId } : {}),
    lockedCurrencySide: a.lockedCurrencySide,
    lockedCurrencyAmount: a.lockedCurrencyAmount,
    totalSendingAmount: a.totalSendingAmount,
    totalReceivingAmount: a.totalReceivingAmount,
    exchangeRate: toDecimalString(a.exchangeRate),
    feesIncluded: a.feesIncluded,
    rateDetails: rateDetailsToPb(a.rateDetails),
    ...(q.transactionId ? { transactionId: q.transactionId } : {}),
    ...(q.lookupId ? { lookupId: q.lookupId } : {}),
    ...(q.description !== undefined ? { description: q.description } : {}),
    ...(q.purposeOfPayment ? { purposeOfPayment: q.purposeOfPayment } : {}),
    counterpartyInformation: q.counterpartyInformation,
    ...(q.payloadToSign ? { payloadToSign: q.payloadToSign } : {}),
    ...(q.signingRequestId ? { signingRequestId: q.signingRequestId } : {}),
    paymentInstructions: (q.paymentInstructions ?? []).map((i) => ({
      accountOrWalletInfo: {
        ...i.accountOrWalletInfo,
        paymentRails: i.accountOrWalletInfo.paymentRails ?? [],
      },
      instructionsNotes: i.instructionsNotes,
      isPlatformAccount: i.isPlatformAccount,
    })),
    createdAt: q.createdAt,
    expiresAt: q.expiresAt,
    updatedAt: q.updatedAt,
  };
}

/** Validates a CreateQuote request field by field (every problem reported at once). */
function parseCreate(req: pb.CreateQuoteRequest): CreateQuoteRequest {
  const env = environmentFromPb(req.environment);
  const c = new Checks()
    .id('platformId', req.platformId, 'Platform')
    .env(env)
    .id('source.customerId', req.sourceCustomerId, 'Customer', true)
    .amount('lockedCurrencyAmount', req.lockedCurrencyAmount)
    .id('lookupId', req.lookupId, 'Lookup', true);
  const add = (field: string, message: string) => c.add(field, message);
  let source: CreateQuoteRequest['source'] | undefined;
  const customerId = req.sourceCustomerId;
  const owner = customerId !== undefined ? { customerId } : {};
  if (req.sourceKind === '' || req.sourceKind === 'ACCOUNT') {
    if (!isId(req.sourceAccountId, 'InternalAccount')) {
      add('source.accountId', 'must be an InternalAccount id (InternalAccount:<uuid>)');
    } else source = { kind: 'ACCOUNT', accountId: req.sourceAccountId, ...owner };
  } else if (req.sourceKind === 'REALTIME_FUNDING') {
    const currency = req.sourceCurrency ?? '';
    if (!isCurrencyCode(currency))
      add('source.currency', currency ? `unknown currency "${currency}"` : 'is required');
    else source = { kind: 'REALTIME_FUNDING', currency, ...owner };
  } else add('source.sourceType', 'must be ACCOUNT or REALTIME_FUNDING');
  let destination: CreateQuoteRequest['destination'] | undefined;
  if (req.destinationKind === 'ACCOUNT') {
    const id = req.destinationAccountId ?? '';
    const rail = req.destinationPaymentRail;
    if (rail !== undefined && !PAYMENT_RAILS.includes(rail as PaymentRailName)) {
      add('destination.paymentRail', `must be one of ${PAYMENT_RAILS.join(', ')}`);
    }
    if (!isId(id, 'InternalAccount') && !isId(id, 'ExternalAccount')) {
      add('destination.accountId', 'must be an InternalAccount or ExternalAccount id');
    } else
      destination = { kind: 'ACCOUNT', accountId: id, ...(rail !== undefined ? { paymentRail: rail } : {}) };
  } else if (req.destinationKind === 'UMA_ADDRESS') {
    if (req.destinationPaymentRail !== undefined)
      add('destination.paymentRail', 'is not a field of destinationType UMA_ADDRESS');
    const uma = req.destinationUmaAddress ?? '';
    if (!/^\$[^@\s]+@[^@\s]+\.[^@\s]+$/.test(uma)) {
      add('destination.umaAddress', 'must be a UMA address ($name@domain)');
    }
    c.currency('destination.currency', req.destinationCurrency);
    destination = {
      kind: 'UMA_ADDRESS',
      umaAddress: uma,
      ...(req.destinationCurrency !== undefined ? { currency: req.destinationCurrency } : {}),
    };
  } else add('destination.destinationType', 'must be ACCOUNT or UMA_ADDRESS');
  if (req.lockedCurrencySide !== 'SENDING' && req.lockedCurrencySide !== 'RECEIVING') {
    add('lockedCurrencySide', 'must be SENDING or RECEIVING');
  }
  if (req.purposeOfPayment !== undefined && !PURPOSES_OF_PAYMENT.includes(req.purposeOfPayment as never)) {
    add('purposeOfPayment', `must be one of ${PURPOSES_OF_PAYMENT.join(', ')}`);
  }
  if (req.description !== undefined && req.description.length > 1000) {
    add('description', 'must be at most 1000 characters');
  }
  let info: Record<string, unknown> = {};
  if (req.senderCustomerInfoJson) {
    try {
      const parsed: unknown = JSON.parse(req.senderCustomerInfoJson);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new Error('not an object');
      info = parsed as Record<string, unknown>;
    } catch {
      add('senderCustomerInfo', 'must be a JSON object');
    }
  }
  c.done();
  return {
    platformId: req.platformId,
    environment: env!,
    source: source!,
    destination: destination!,
    lockedCurrencySide: req.lockedCurrencySide as CreateQuoteRequest['lockedCurrencySide'],
    lockedCurrencyAmount: req.lockedCurrencyAmount,
    ...(req.lookupId !== undefined ? { lookupId: req.lookupId } : {}),
    ...(req.description !== undefined ? { description: req.description } : {}),
    ...(req.purposeOfPayment !== undefined
      ? { purposeOfPayment: req.purposeOfPayment as PurposeOfPayment }
      : {}),
    senderCustomerInfo: info,
  };
}

/** gRPC handlers of the quote RPCs of sluice.payments.v1.PaymentsService. */
export function quotesHandlers(
  quotes: QuotesService,
): Pick<AsyncService<pb.PaymentsServiceServer>, 'createQuote' | 'getQuote' | 'executeQuote' | 'sandboxSend'> {
  return {
    async createQuote(req) {
      const parsed = parseCreate(req);
      const quote = await quotes.create({ ...parsed, immediatelyExecute: req.immediatelyExecute });
      if (!req.immediatelyExecute) return { quote: quoteToPb(quote) };
      try {
        // immediatelyExecute is refused at creation for EMBEDDED_WALLET sources, so no signing challenge here.
        const executed = await quotes.execute(parsed.platformId, parsed.environment, quote.id);
        return { quote: quoteToPb(executed.quote ?? quote) };
      } catch (err) {
        // The quote exists (PENDING): name it so the caller can execute it later.
        if (isDomainError(err)) {
          throw new DomainError(
            err.kind,
            err.code,
            `${err.message} (quote ${quote.id} was created and not executed)`,
            {
              ...err.details,
              quoteId: quote.id,
            },
          );
        }
        throw err;
      }
    },
    async executeQuote(req) {
      const env = environmentFromPb(req.environment);
      const c = new Checks()
        .id('platformId', req.platformId, 'Platform')
        .env(env)
        .id('quoteId', req.quoteId, 'Quote')
        .id('Request-Id', req.signingRequestId, 'Request', true);
      if (req.walletSignature !== undefined && req.walletSignature.length > 4096)
        c.add('Service-Wallet-Signature', 'must be at most 4096 characters');
      c.done();
      const signature = {
        ...(req.walletSignature ? { signature: req.walletSignature } : {}),
        ...(req.signingRequestId ? { requestId: req.signingRequestId } : {}),
      };
      const out = await quotes.execute(req.platformId, env!, req.quoteId, signature);
      return out.challenge
        ? {
            signingChallenge: {
              requestId: out.challenge.requestId,
              payloadToSign: out.challenge.payloadToSign,
              expiresAt: out.challenge.expiresAt,
            },
          }
        : { quote: quoteToPb(out.quote) };
    },
    async sandboxSend(req) {
      const env = environmentFromPb(req.environment);
      new Checks()
        .id('platformId', req.platformId, 'Platform')
        .env(env)
        .id('quoteId', req.quoteId, 'Quote')
        .currency('currencyCode', req.currencyCode)
        .amount('currencyAmount', req.currencyAmount)
        .done();
      const transaction = await quotes.sandboxSend({
        platformId: req.platformId,
        environment: env!,
        quoteId: req.quoteId,
        currencyCode: req.currencyCode,
        ...(req.currencyAmount !== undefined ? { amount: req.currencyAmount } : {}),
      });
      return { transaction: transactionToPb(transaction) };
    },
    async getQuote(req) {
      new Checks().id('platformId', req.platformId, 'Platform').id('quoteId', req.quoteId, 'Quote').done();
      return { quote: quoteToPb(await quotes.get(req.platformId, req.quoteId)) };
    },
  };
}

const ACCOUNT_TYPE: Record<string, InternalAccountType> = {
  [accounts.InternalAccountType.INTERNAL_FIAT]: 'INTERNAL_FIAT',
  [accounts.InternalAccountType.INTERNAL_CRYPTO]: 'INTERNAL_CRYPTO',
  [accounts.InternalAccountType.EMBEDDED_WALLET]: 'EMBEDDED_WALLET',
};

/** Internal account types from the accounts service over gRPC. */
export class AccountsInternalAccountTypes implements InternalAccountTypes {
  private readonly client: PromiseClient<accounts.AccountsServiceClient>;

  constructor(address: string, deadlineMs = 5000) {
    this.client = createRpcClient(accounts.AccountsServiceClient, address, { defaultDeadlineMs: deadlineMs });
  }

  async typeOf(platformId: string, accountId: string): Promise<InternalAccountType> {
    const { account } = await this.client.getInternalAccount({ platformId, accountId });
    return ACCOUNT_TYPE[account!.type] ?? 'UNKNOWN';
  }

  close(): void {
    this.client.close();
  }
}

/** The wallet owner's signature of quote executions: wallet-auth's signed retry (EXECUTE_QUOTE) over gRPC. */
export class WalletAuthSignatures implements WalletSignatures {
  private readonly client: PromiseClient<walletAuth.WalletAuthServiceClient>;

  constructor(address: string, deadlineMs = 5000) {
    this.client = createRpcClient(walletAuth.WalletAuthServiceClient, address, {
      defaultDeadlineMs: deadlineMs,
    });
  }

  async challenge(platformId: string, accountId: string, bodyJson: string): Promise<SigningChallenge> {
    const { signingChallenge } = await this.client.createSigningRequest({
      platformId,
      accountId,
      action: walletAuth.SignedAction.EXECUTE_QUOTE,
      bodyJson,
    });
    const c = signingChallenge!;
    return { requestId: c.requestId, payloadToSign: c.payloadToSign, expiresAt: c.expiresAt! };
  }

  async verify(
    platformId: string,
    accountId: string,
    signed: { bodyJson: string; signature?: string; requestId?: string },
  ): Promise<void> {
    await this.client.verifySignedRequest({
      platformId,
      accountId,
      action: walletAuth.SignedAction.EXECUTE_QUOTE,
      signed,
    });
  }

  close(): void {
    this.client.close();
  }
}
