import { externalAccountToPb } from './external-account.mapper.js';
import { accounts as pb } from '@sluice/contracts';
import type { AsyncService } from '@sluice/rpc';
import type { HoldResult, LedgerService } from '../app/ledger.service.js';
import { refOfLedgerAccountId, type Hold, type SystemAccountName } from '../domain/ledger.js';
import type { LedgerAccountRefInput } from '../domain/validation.js';
import { toPb } from './internal-account.mapper.js';

/** gRPC handlers of the two-phase ledger RPCs (PlaceHold, PostHold, VoidHold, GetHold, PostTransfer, ReconcileLedger). */
export type LedgerHandlers = Pick<
  AsyncService<pb.AccountsServiceServer>,
  'placeHold' | 'postHold' | 'voidHold' | 'getHold' | 'postTransfer' | 'reconcileLedger'
>;

// Exhaustive both ways: a value added to the proto enum or to SystemAccountName fails to compile until mapped.
const SYSTEM_FROM_PB: Record<Exclude<pb.SystemAccount, pb.SystemAccount.UNSPECIFIED>, SystemAccountName> = {
  [pb.SystemAccount.SETTLEMENT]: 'SETTLEMENT',
  [pb.SystemAccount.FEES]: 'FEES',
  [pb.SystemAccount.FX]: 'FX',
  [pb.SystemAccount.CLEARING]: 'CLEARING',
};
const SYSTEM_TO_PB: Record<SystemAccountName, pb.SystemAccount> = {
  SETTLEMENT: pb.SystemAccount.SETTLEMENT,
  FEES: pb.SystemAccount.FEES,
  FX: pb.SystemAccount.FX,
  CLEARING: pb.SystemAccount.CLEARING,
};
const HOLD_STATUS_TO_PB: Record<Hold['status'], pb.HoldStatus> = {
  PENDING: pb.HoldStatus.PENDING,
  POSTED: pb.HoldStatus.POSTED,
  VOIDED: pb.HoldStatus.VOIDED,
};

/** A LedgerAccountRef as the app takes it (an unknown system account keeps its proto name, for the error). */
function refFromPb(r: pb.LedgerAccountRef | undefined): LedgerAccountRefInput | undefined {
  if (!r) return undefined;
  const system =
    r.systemAccount === undefined || r.systemAccount === pb.SystemAccount.UNSPECIFIED
      ? undefined
      : ((SYSTEM_FROM_PB as Partial<Record<pb.SystemAccount, SystemAccountName>>)[r.systemAccount] ??
        r.systemAccount);
  return {
    ...(r.internalAccountId ? { internalAccountId: r.internalAccountId } : {}),
    ...(system ? { system } : {}),
  };
}

function refToPb(ledgerAccountId: string): pb.LedgerAccountRef {
  const r = refOfLedgerAccountId(ledgerAccountId);
  if (!r) throw new Error(`ledger account ${ledgerAccountId} cannot be named by callers`);
  return 'internalAccountId' in r
    ? { internalAccountId: r.internalAccountId }
    : { systemAccount: SYSTEM_TO_PB[r.system] };
}

export function holdToPb(h: Hold): pb.Hold {
  return {
    id: h.id,
    accountId: h.accountId,
    counterAccount: refToPb(h.counterAccountId),
    currency: h.currency,
    amount: h.amount,
    status: HOLD_STATUS_TO_PB[h.status],
    ...(h.postedAmount !== undefined ? { postedAmount: h.postedAmount } : {}),
    ...(h.resolutionId !== undefined ? { resolutionId: h.resolutionId } : {}),
    kind: h.kind,
    ...(h.description !== undefined ? { description: h.description } : {}),
    createdAt: h.createdAt,
    ...(h.resolvedAt !== undefined ? { resolvedAt: h.resolvedAt } : {}),
  };
}

/** A hold step's answer: the hold, its debited account, and whether the step was a retry. */
function holdResponse(r: HoldResult): pb.PlaceHoldResponse {
  return {
    hold: holdToPb(r.hold),
    account: toPb(r.account),
    replayed: r.replayed,
    ...(r.payee ? { payeeExternalAccount: externalAccountToPb(r.payee) } : {}),
  };
}

/** A transfer's lines as the app takes them. */
function linesFromPb(lines: pb.LedgerLine[]) {
  return lines.map((l) => {
    const account = refFromPb(l.account);
    return { ...(account ? { account } : {}), currency: l.currency, amount: l.amount };
  });
}

/** The ledger RPC handlers: translate proto <-> app types and call LedgerService. */
export function ledgerHandlers(ledger: LedgerService): LedgerHandlers {
  return {
    async placeHold(req) {
      const counterAccount = refFromPb(req.counterAccount);
      return holdResponse(
        await ledger.placeHold({
          platformId: req.platformId,
          holdId: req.holdId,
          accountId: req.accountId,
          amount: req.amount,
          currency: req.currency,
          ...(counterAccount ? { counterAccount } : {}),
          ...(req.kind !== undefined ? { kind: req.kind } : {}),
          ...(req.description !== undefined ? { description: req.description } : {}),
          ...(req.payeeExternalAccountId !== undefined
            ? { payeeExternalAccountId: req.payeeExternalAccountId }
            : {}),
        }),
      );
    },

    async postHold(req) {
      const { entry, ...hold } = req;
      return holdResponse(
        await ledger.postHold({
          ...hold,
          ...(entry
            ? {
                entry: {
                  entryId: entry.entryId,
                  lines: linesFromPb(entry.lines),
                  ...(entry.kind !== undefined ? { kind: entry.kind } : {}),
                  ...(entry.description !== undefined ? { description: entry.description } : {}),
                },
              }
            : {}),
        }),
      );
    },

    async voidHold(req) {
      return holdResponse(await ledger.voidHold(req));
    },

    async getHold(req) {
      return { hold: holdToPb(await ledger.getHold(req.platformId, req.holdId)) };
    },

    async postTransfer(req) {
      const r = await ledger.postTransfer({
        platformId: req.platformId,
        entryId: req.entryId,
        lines: linesFromPb(req.lines),
        ...(req.kind !== undefined ? { kind: req.kind } : {}),
        ...(req.description !== undefined ? { description: req.description } : {}),
      });
      return { entryId: r.entryId, replayed: r.replayed, accounts: r.accounts.map(toPb) };
    },

    async reconcileLedger(req) {
      const r = await ledger.reconcile(req.platformId);
      return {
        currencies: r.currencies.map((t) => ({
          currency: t.currency,
          postedBalanceSum: t.balances,
          lineSum: t.lines,
          pendingDebits: t.pendingDebits,
          pendingCredits: t.pendingCredits,
          accountCount: t.accounts,
        })),
        mismatches: r.mismatches.map((m) => ({
          ledgerAccountId: m.accountId,
          stored: m.stored,
          derived: m.derived,
        })),
        unbalancedEntryIds: r.unbalancedEntryIds,
        consistent: r.consistent,
      };
    },
  };
}
