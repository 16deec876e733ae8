import { accounts, identity, payments as pb } from '@sluice/contracts';
import { invalidInput, isCurrencyCode, isDomainError, isId, MAX_AMOUNT, type FieldError } from '@sluice/core';
import { createRpcClient, type AsyncService, type PromiseClient } from '@sluice/rpc';
import type { IncomingDirectory, IncomingService, UmaRecipient } from '../app/incoming.service.js';
import type { InternalAccountInfo } from '../app/ports.js';
import { parseUmaAddress } from '../domain/uma.js';
import { environmentFromPb } from './payments.mapper.js';
import { transactionToPb } from './transactions.rpc.js';

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

function idErrors(platformId: string, transactionId: string): FieldError[] {
  const errors: FieldError[] = [];
  if (!isId(platformId, 'Platform')) errors.push({ field: 'platformId', message: 'must be a Platform id' });
  if (!isId(transactionId, 'Transaction')) {
    errors.push({ field: 'transactionId', message: 'must be a Transaction id (Transaction:<uuid>)' });
  }
  return errors;
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
      const errors: FieldError[] = [];
      if (!isId(req.platformId, 'Platform'))
        errors.push({ field: 'platformId', message: 'must be a Platform id' });
      if (!env) {
        errors.push({
          field: 'environment',
          message: 'must be ENVIRONMENT_SANDBOX or ENVIRONMENT_PRODUCTION',
        });
      }
      if (!req.requestKey || req.requestKey.length > 255) {
        errors.push({ field: 'requestKey', message: 'must be 1 to 255 characters' });
      }
      errors.push(...umaAddressErrors('senderUmaAddress', req.senderUmaAddress));
      errors.push(...umaAddressErrors('receiverUmaAddress', req.receiverUmaAddress));
      if (!isCurrencyCode(req.receivingCurrencyCode)) {
        errors.push({
          field: 'receivingCurrencyCode',
          message: `unknown currency "${req.receivingCurrencyCode}"`,
        });
      }
      if (req.receivingCurrencyAmount < 1n || req.receivingCurrencyAmount > MAX_AMOUNT) {
        errors.push({
          field: 'receivingCurrencyAmount',
          message: `must be an integer from 1 to ${MAX_AMOUNT}`,
        });
      }
      if (errors.length) throw invalidInput(errors);
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
      const errors = idErrors(req.platformId, req.transactionId);
      let info: Record<string, unknown> | undefined;
      if (req.receiverCustomerInfoJson) {
        try {
          const parsed: unknown = JSON.parse(req.receiverCustomerInfoJson);
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
            throw new Error('not an object');
          info = parsed as Record<string, unknown>;
        } catch {
          errors.push({ field: 'receiverCustomerInfo', message: 'must be a JSON object' });
        }
      }
      if (errors.length) throw invalidInput(errors);
      return {
        transaction: transactionToPb(await incoming.approve(req.platformId, req.transactionId, info)),
      };
    },

    async rejectIncomingPayment(req) {
      const errors = idErrors(req.platformId, req.transactionId);
      if (req.reason !== undefined && req.reason.length > 1000) {
        errors.push({ field: 'reason', message: 'must be at most 1000 characters' });
      }
      if (errors.length) throw invalidInput(errors);
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
        limit: 1,
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
      limit: 1,
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
