import { internalAccountJson, type InternalAccountJson } from '@sluice/api';
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
