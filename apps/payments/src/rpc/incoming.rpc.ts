import { accounts, identity, payments as pb } from '@sluice/contracts';
import { isDomainError, type FieldError } from '@sluice/core';
import { createRpcClient, type AsyncService, type PromiseClient } from '@sluice/rpc';
import type { IncomingDirectory, IncomingService, UmaRecipient } from '../app/incoming.service.js';
import type { InternalAccountInfo } from '../app/ports.js';
import { parseUmaAddress } from '../domain/uma.js';
import { environmentFromPb } from './payments.mapper.js';
import { transactionToPb } from './transactions.rpc.js';
import { Checks } from './checks.js';

/** Field errors of a UMA address (INVALID_UMA_ADDRESS's message, as an INVALID_INPUT field error). */
function umaAddressErrors(field: string, value: string): FieldError[] {
  if (!value) return [{ field, message: 'is required' }];
  try {
    parseUmaAddress(value, field);
    return [];
  } catch (err) {
    if (isDomainError(err)) return [{ field, message: err.message.replace(`${field}: `, '') }];
    throw err;
  }
}

function idChecks(platformId: string, transactionId: string): Checks {
  return new Checks()
    .id('platformId', platformId, 'Platform')
    .id('transactionId', transactionId, 'Transaction');
}

/** gRPC handlers of incoming payments (sandbox UMA receive, approve, reject). */
export function incomingHandlers(
  incoming: IncomingService,
): Pick<
  AsyncService<pb.PaymentsServiceServer>,
  'sandboxReceiveUma' | 'approveIncomingPayment' | 'rejectIncomingPayment'
> {
  return {
    async sandboxReceiveUma(req) {
      const env = environmentFromPb(req.environment);
      new Checks()
        .id('platformId', req.platformId, 'Platform')
        .env(env)
        .requestKey(req.requestKey)
        .addAll(umaAddressErrors('senderUmaAddress', req.senderUmaAddress))
        .addAll(umaAddressErrors('receiverUmaAddress', req.receiverUmaAddress))
        .currency('receivingCurrencyCode', req.receivingCurrencyCode)
        .amount('receivingCurrencyAmount', req.receivingCurrencyAmount)
        .done();
      const r = await incoming.receiveUma({
        platformId: req.platformId,
        environment: env!,
        requestKey: req.requestKey,
        senderUmaAddress: parseUmaAddress(req.senderUmaAddress, 'senderUmaAddress').address,
        receiverUmaAddress: req.receiverUmaAddress.trim(),
        currency: req.receivingCurrencyCode,
        amount: req.receivingCurrencyAmount,
      });
      return { transaction: transactionToPb(r.transaction), replayed: r.replayed };
    },

    async approveIncomingPayment(req) {
      const c = idChecks(req.platformId, req.transactionId);
      let info: Record<string, unknown> | undefined;
      if (req.receiverCustomerInfoJson) {
        try {
          const parsed: unknown = JSON.parse(req.receiverCustomerInfoJson);
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
            throw new Error('not an object');
          info = parsed as Record<string, unknown>;
        } catch {
          c.add('receiverCustomerInfo', 'must be a JSON object');
        }
      }
      c.done();
      return {
        transaction: transactionToPb(await incoming.approve(req.platformId, req.transactionId, info)),
      };
    },

    async rejectIncomingPayment(req) {
      const c = idChecks(req.platformId, req.transactionId);
      if (req.reason !== undefined && req.reason.length > 1000)
        c.add('reason', 'must be at most 1000 characters');
      c.done();
      return {
        transaction: transactionToPb(await incoming.reject(req.platformId, req.transactionId, req.reason)),
      };
    },
  };
}

/** Receivers of incoming payments over gRPC: identity ListCustomers (umaAddress), accounts ListInternalAccounts. */
export class GrpcIncomingDirectory implements IncomingDirectory {
  private readonly identity: PromiseClient<identity.IdentityServiceClient>;
  private readonly accounts: PromiseClient<accounts.AccountsServiceClient>;

  constructor(identityAddress: string, accountsAddress: string, deadlineMs = 5000) {
    this.identity = createRpcClient(identity.IdentityServiceClient, identityAddress, {
      defaultDeadlineMs: deadlineMs,
    });
    this.accounts = createRpcClient(accounts.AccountsServiceClient, accountsAddress, {
      defaultDeadlineMs: deadlineMs,
    });
  }

  async customerByUmaAddress(platformId: string, umaAddress: string): Promise<UmaRecipient | undefined> {
    const candidates = [...new Set([umaAddress, umaAddress.toLowerCase()])];
    for (const address of candidates) {
      const { customers } = await this.identity.listCustomers({
        platformId,
        customerType: identity.CustomerType.UNSPECIFIED,
        umaAddress: address,
        isIncludingDeleted: false,
        page: { limit: 1 },
      });
      const c = customers[0];
      if (c) return { customerId: c.id, platformCustomerId: c.platformCustomerId };
    }
    return undefined;
  }

  async customerAccount(
    platformId: string,
    customerId: string,
    currency: string,
  ): Promise<InternalAccountInfo | undefined> {
    const { accounts: list } = await this.accounts.listInternalAccounts({
      platformId,
      owner: accounts.Owner.CUSTOMERS,
      customerId,
      currency,
      page: { limit: 1 },
    });
    const a = list[0];
    return a
      ? { id: a.id, currency: a.currency, ...(a.customerId ? { customerId: a.customerId } : {}) }
      : undefined;
  }

  close(): void {
    this.identity.close();
    this.accounts.close();
  }
}
