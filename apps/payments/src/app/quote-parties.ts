import { invalidInput, isId } from '@sluice/core';
import { fail } from '../domain/errors.js';
import { REALTIME_FUNDING_CURRENCIES } from '../domain/payment-instructions.js';
import { paymentRailFor } from '../domain/payment-rails.js';
import type { CreateQuoteRequest } from '../domain/quote-request.js';
import { checkLookupCustomer } from '../domain/quote-rules.js';
import type { ReceiverLookup } from '../domain/receiver-lookup.js';
import type { TransactionEndpoint } from '../domain/transaction.js';
import type { AccountsPort, CustomerDirectory, ExternalAccountInfo, ExternalAccountReads } from './ports.js';
import type { ReceiverLookupsService } from './receiver-lookups.service.js';

/** Who pays a quote. */
export interface QuotePayer {
  endpoint: TransactionEndpoint;
  /** The customer on whose behalf the quote is made (platformCustomerId resolved for real-time funding). */
  customer: { customerId: string; platformCustomerId?: string } | undefined;
  /** An EMBEDDED_WALLET source: its execution needs the wallet owner's signature. */
  embeddedWallet: boolean;
}

/** Who is paid by a quote, and what is known of them. */
export interface QuotePayee {
  destination: TransactionEndpoint;
  /** The receiver lookup the quote refers to (UMA addresses need one). */
  lookup?: ReceiverLookup;
  counterpartyInformation: Record<string, string>;
  /** What the rail pays to (counterpartyOf), from the read that checked the destination. */
  counterpartyIdentifier?: string;
}

/**
 * The parties of a quote as the accounts and identity services and the stored receiver lookups
 * know them: the payer (an internal account or a real-time payer), the payee (an internal or
 * external account, or a UMA address), and what the rail pays to at execution.
 */
export class QuoteParties {
  constructor(
    private readonly deps: {
      accounts: AccountsPort;
      /**
       * The destination's read at quote creation: what payments keeps of external accounts
       * (CachedExternalAccounts) where it keeps them. An execute reads the destination again.
       */
      payees: ExternalAccountReads;
      customers: CustomerDirectory;
      lookups: ReceiverLookupsService;
    },
  ) {}

  /**
   * The payer of a quote: an internal account (its owner must match `source.customerId` when
   * given; EMBEDDED_WALLET noted) or, for real-time funding, the customer (or the platform)
   * paying in `currency`.
   */
  async payer(req: CreateQuoteRequest): Promise<QuotePayer> {
    const src = req.source;
    if (src.kind === 'REALTIME_FUNDING') {
      if (!REALTIME_FUNDING_CURRENCIES.includes(src.currency)) {
        throw fail('UNSUPPORTED_CURRENCY', `Real-time funding in ${src.currency} is not available`, {
          field: 'source.currency',
          supported: REALTIME_FUNDING_CURRENCIES,
        });
      }
      const customer = src.customerId
        ? {
            customerId: src.customerId,
            platformCustomerId: await this.deps.customers.platformCustomerId(req.platformId, src.customerId),
          }
        : undefined;
      return {
        endpoint: { kind: 'REALTIME_FUNDING', currency: src.currency },
        customer,
        embeddedWallet: false,
      };
    }
    const account = await this.deps.accounts.getInternalAccount(req.platformId, src.accountId);
    if (src.customerId !== undefined && src.customerId !== account.customerId) {
      throw invalidInput([{ field: 'source.customerId', message: 'must be the owner of source.accountId' }]);
    }
    return {
      endpoint: { kind: 'ACCOUNT', accountId: account.id, currency: account.currency },
      customer: account.customerId ? { customerId: account.customerId } : undefined,
      embeddedWallet: account.type === 'EMBEDDED_WALLET',
    };
  }

  /** The payee of a quote, checked against the payer and the lookup named. */
  async payee(req: CreateQuoteRequest, payer: QuotePayer): Promise<QuotePayee> {
    const d = req.destination;
    const customerId = payer.customer?.customerId;
    if (d.kind === 'UMA_ADDRESS') {
      if (!req.lookupId) {
        throw invalidInput([
          {
            field: 'lookupId',
            message: 'is required for UMA_ADDRESS destinations (GET /receiver/uma/{address})',
          },
        ]);
      }
      const lookup = await this.deps.lookups.get(req.platformId, req.lookupId);
      if (lookup.kind !== 'UMA' || lookup.receiverUmaAddress?.toLowerCase() !== d.umaAddress.toLowerCase()) {
        throw invalidInput([{ field: 'lookupId', message: `was not made for the receiver ${d.umaAddress}` }]);
      }
      checkLookupCustomer(lookup, customerId);
      const currency = d.currency ?? lookup.supportedCurrencies[0]?.currency;
      if (!currency || !lookup.supportedCurrencies.some((c) => c.currency === currency)) {
        throw fail('UNSUPPORTED_CURRENCY', `The receiver does not accept ${currency ?? 'any currency'}`, {
          field: 'destination.currency',
          supported: lookup.supportedCurrencies.map((c) => c.currency),
        });
      }
      return {
        destination: { kind: 'UMA_ADDRESS', umaAddress: lookup.receiverUmaAddress!, currency },
        lookup,
        counterpartyInformation: lookup.counterpartyName ? { FULL_NAME: lookup.counterpartyName } : {},
        counterpartyIdentifier: lookup.receiverUmaAddress!,
      };
    }
    let lookup: ReceiverLookup | undefined;
    if (req.lookupId) {
      lookup = await this.deps.lookups.get(req.platformId, req.lookupId);
      if (lookup.kind !== 'EXTERNAL_ACCOUNT' || lookup.externalAccountId !== d.accountId) {
        throw invalidInput([{ field: 'lookupId', message: `was not made for the account ${d.accountId}` }]);
      }
      checkLookupCustomer(lookup, customerId);
    }
    if (isId(d.accountId, 'InternalAccount')) {
      if (d.paymentRail !== undefined) {
        throw invalidInput([
          {
            field: 'destination.paymentRail',
            message:
              'applies to external accounts only (a payment to an internal account is booked in the ledger)',
          },
        ]);
      }
      const account = await this.deps.accounts.getInternalAccount(req.platformId, d.accountId);
      if (account.id === payer.endpoint.accountId) {
        throw invalidInput([
          { field: 'destination.accountId', message: 'must differ from source.accountId' },
        ]);
      }
      return {
        destination: { kind: 'ACCOUNT', accountId: account.id, currency: account.currency },
        ...(lookup ? { lookup } : {}),
        counterpartyInformation: {},
      };
    }
    const account = usable(await this.deps.payees.getExternalAccount(req.platformId, d.accountId));
    if ((account.customerId ?? null) !== (customerId ?? null)) {
      throw invalidInput([
        {
          field: 'destination.accountId',
          message: 'must belong to the same customer (or the platform) as the source account',
        },
      ]);
    }
    const { rail, error } = paymentRailFor(account.accountType, d.paymentRail, account.paymentRails);
    if (error) throw invalidInput([{ field: 'destination.paymentRail', message: error }]);
    return {
      destination: {
        kind: 'ACCOUNT',
        accountId: account.id,
        currency: account.currency,
        ...(rail ? { paymentRail: rail } : {}),
      },
      ...(lookup ? { lookup } : {}),
      counterpartyInformation: {},
      counterpartyIdentifier: account.primaryIdentifier,
    };
  }

  /**
   * What the rail pays to, read again at execution (a deleted or deactivated account is not
   * paid): the external account's primary identifier or the UMA address; none for an internal
   * account (which must still exist).
   */
  async counterpartyOf(platformId: string, d: TransactionEndpoint): Promise<string | undefined> {
    if (d.kind === 'UMA_ADDRESS') return d.umaAddress;
    if (isId(d.accountId, 'InternalAccount')) {
      await this.deps.accounts.getInternalAccount(platformId, d.accountId);
      return undefined;
    }
    return usable(await this.deps.accounts.getExternalAccount(platformId, d.accountId!)).primaryIdentifier;
  }

  /** The primary identifier of an external payee read elsewhere (the hold's call), if it is usable. */
  usablePayee(account: ExternalAccountInfo): string {
    return usable(account).primaryIdentifier;
  }

  /** Whether an internal account is an EMBEDDED_WALLET (for quotes made before that was recorded on them). */
  async isEmbeddedWallet(platformId: string, accountId: string): Promise<boolean> {
    return (await this.deps.accounts.getInternalAccount(platformId, accountId)).type === 'EMBEDDED_WALLET';
  }

  /** The platform's own id of the customer, if the quote is made on a customer's behalf. */
  async platformCustomerId(platformId: string, customerId: string | undefined): Promise<string | undefined> {
    return customerId ? this.deps.customers.platformCustomerId(platformId, customerId) : undefined;
  }
}

/** An ACTIVE external account, or EXTERNAL_ACCOUNT_NOT_USABLE on destination.accountId. */
function usable(account: ExternalAccountInfo): ExternalAccountInfo {
  if (account.status === 'ACTIVE') return account;
  throw fail(
    'EXTERNAL_ACCOUNT_NOT_USABLE',
    `External account ${account.id} is ${account.status.toLowerCase()}, not active`,
    {
      field: 'destination.accountId',
      status: account.status,
    },
  );
}
