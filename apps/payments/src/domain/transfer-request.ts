import { FieldErrors, invalidInput, type Environment } from '@sluice/core';
import { fail } from './errors.js';
import { checkAmount, checkEnvironment, checkId, checkMemo, checkRequestKey } from './field-rules.js';

/** A same-currency transfer request (POST /transfer-out, POST /transfer-in), valid. */
export interface TransferRequest {
  platformId: string;
  environment: Environment;
  requestKey: string;
  sourceAccountId: string;
  destinationAccountId: string;
  amount: bigint;
  description?: string;
  /** The agent whose approved action this is (agents service). */
  agentId?: string;
}

/** A transfer request as it arrives: the environment may be missing. */
export type TransferInput = Omit<TransferRequest, 'environment'> & { environment: Environment | undefined };

/**
 * A valid transfer request, or INVALID_INPUT naming every bad field. A transfer-out pays from an
 * internal account to an external one; a transfer-in pulls the other way.
 */
export function parseTransferRequest(input: TransferInput, direction: 'OUT' | 'IN'): TransferRequest {
  const [sourceType, destinationType] =
    direction === 'OUT' ? (['InternalAccount', 'ExternalAccount'] as const) : (['ExternalAccount', 'InternalAccount'] as const);
  const errors = new FieldErrors();
  checkId(errors, 'platformId', input.platformId, 'Platform');
  checkEnvironment(errors, input.environment);
  checkRequestKey(errors, input.requestKey);
  checkId(errors, 'source.accountId', input.sourceAccountId, sourceType);
  checkId(errors, 'destination.accountId', input.destinationAccountId, destinationType);
  checkAmount(errors, 'amount', input.amount);
  checkMemo(errors, 'description', input.description);
  if (input.agentId !== undefined) checkId(errors, 'agentId', input.agentId, 'Agent');
  errors.throwIfAny();
  const { environment, ...rest } = input;
  return { ...rest, environment: environment! };
}

/**
 * What a transfer needs of its two accounts: a usable (ACTIVE) external account in the internal
 * account's currency, owned by the same customer (or both by the platform). `field` names the
 * external account's field. EXTERNAL_ACCOUNT_NOT_USABLE or INVALID_INPUT otherwise.
 */
export function checkTransferPair(
  internal: { currency: string; customerId?: string },
  external: { id: string; currency: string; customerId?: string; status: string },
  field: string,
): void {
  if (external.status !== 'ACTIVE') {
    throw fail('EXTERNAL_ACCOUNT_NOT_USABLE', `External account ${external.id} is ${external.status}, not ACTIVE`, {
      field,
      status: external.status,
    });
  }
  if (external.currency !== internal.currency) {
    throw invalidInput([
      {
        field,
        message: `currency ${external.currency} does not match the internal account's ${internal.currency}; use a quote for cross-currency payments`,
      },
    ]);
  }
  if ((external.customerId ?? null) !== (internal.customerId ?? null)) {
    throw invalidInput([{ field, message: 'must belong to the same customer (or the platform) as the internal account' }]);
  }
}
