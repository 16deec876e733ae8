import { FieldErrors, MAX_AMOUNT, isId } from '@sluice/core';
import { checkRequestKey } from './errors.js';

/**
 * An agent's quote request, beyond what payments checks: the source is one of the customer's
 * internal accounts (payments checks the ownership, given the agent's customer as
 * source.customerId), and it is never executed at creation — execution is an action the
 * policy checks (POST /agents/me/quotes/{quoteId}/execute).
 */
export function checkAgentQuote(q: { sourceKind: string; sourceAccountId: string; immediatelyExecute: boolean }): void {
  const errors = new FieldErrors();
  if (q.sourceKind !== 'ACCOUNT') errors.add('source.sourceType', 'an agent quotes from an internal account of its customer (ACCOUNT)');
  else if (!isId(q.sourceAccountId, 'InternalAccount')) errors.add('source.accountId', 'must be an internal account id');
  if (q.immediatelyExecute) {
    errors.add('immediatelyExecute', 'must be false for agents: execute with POST /agents/me/quotes/{quoteId}/execute (the policy applies)');
  }
  errors.throwIfAny();
}

/** A transfer request of an agent: account ids of the right kinds and an amount of 1..MAX_AMOUNT. */
export function checkTransfer(p: {
  type: 'TRANSFER_OUT' | 'TRANSFER_IN';
  sourceAccountId: string;
  destinationAccountId: string;
  amount: bigint;
  requestKey: string;
}): void {
  const [source, destination] = p.type === 'TRANSFER_OUT' ? (['InternalAccount', 'ExternalAccount'] as const) : (['ExternalAccount', 'InternalAccount'] as const);
  const errors = new FieldErrors();
  if (!isId(p.sourceAccountId, source)) errors.add('source.accountId', `must be ${source === 'InternalAccount' ? 'an internal' : 'an external'} account id`);
  if (!isId(p.destinationAccountId, destination)) {
    errors.add('destination.accountId', `must be ${destination === 'InternalAccount' ? 'an internal' : 'an external'} account id`);
  }
  if (p.amount < 1n || p.amount > MAX_AMOUNT) errors.add('amount', `must be from 1 to ${MAX_AMOUNT}`);
  checkRequestKey(errors, p.requestKey);
  errors.throwIfAny();
}
