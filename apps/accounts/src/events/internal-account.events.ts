import { EVENTS, internalAccountJson, type InternalAccountJson } from '@sluice/api';
import type { Outbox } from '@sluice/events';
import type { EntityManager } from '@sluice/store';
import type { InternalAccountRecord } from '../domain/internal-account.js';
import { toPb } from '../rpc/internal-account.mapper.js';

/**
 * The public InternalAccount: the one mapper of the public API (`@sluice/api`
 * internalAccountJson) over the service's contract (the proto InternalAccount
 * the RPCs return), so the INTERNAL_ACCOUNT.BALANCE_UPDATED webhook and the REST
 * response of the same account are the same object.
 */
export function publicInternalAccount(a: InternalAccountRecord): InternalAccountJson {
  return internalAccountJson(toPb(a));
}

/** Writes INTERNAL_ACCOUNT.BALANCE_UPDATED with the account as it now is. */
export async function publishBalanceUpdated(
  outbox: Outbox,
  em: EntityManager,
  account: InternalAccountRecord,
  occurredAt: Date,
): Promise<void> {
  await outbox.add(em, EVENTS.INTERNAL_ACCOUNT_BALANCE_UPDATED, {
    platformId: account.platformId,
    data: publicInternalAccount(account),
    occurredAt,
  });
}
