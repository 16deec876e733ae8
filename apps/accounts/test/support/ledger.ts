import { accounts as pb } from '@sluice/contracts';
import { newId } from '@sluice/core';
import type { EventEnvelope } from '@sluice/events';
import { SANDBOX, type Harness } from './harness.js';

/** The platform's SETTLEMENT system account, as callers name it. */
export const SETTLEMENT = { systemAccount: pb.SystemAccount.SETTLEMENT };

/** A new sandbox platform's customer USD account, funded with `amount` by SandboxFund. */
export async function fundedAccount(
  h: Harness,
  amount: bigint,
): Promise<{ platformId: string; accountId: string }> {
  const platformId = await h.platform();
  const { accounts } = await h.client.ensureCustomerAccounts({
    platformId,
    customerId: newId('Customer'),
    currencies: ['USD'],
    environment: SANDBOX,
  });
  const accountId = accounts[0]!.id;
  await h.client.sandboxFund({ platformId, accountId, amount });
  return { platformId, accountId };
}

/** The internal account as GetInternalAccount answers it now. */
export async function internalAccount(
  h: Harness,
  platformId: string,
  accountId: string,
): Promise<pb.InternalAccount> {
  return (await h.client.getInternalAccount({ platformId, accountId })).account!;
}

/** The INTERNAL_ACCOUNT.BALANCE_UPDATED events of the account in the outbox, oldest first. */
export async function balanceEvents(h: Harness, accountId: string): Promise<EventEnvelope[]> {
  const r = await h.sql.query(
    `SELECT envelope FROM accounts.outbox WHERE type = 'INTERNAL_ACCOUNT.BALANCE_UPDATED' AND envelope->'data'->>'id' = $1 ORDER BY seq`,
    [accountId],
  );
  return r.rows.map((row) => row.envelope as EventEnvelope);
}
