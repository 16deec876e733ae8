import { accounts as pb } from '@sluice/contracts';
import { isCurrencyCode, isId, MAX_AMOUNT } from '@sluice/core';
import type { AsyncService } from '@sluice/rpc';
import type { LedgerService, TransferLine } from '../app/ledger.service.js';
import {
  KIND_PATTERN,
  refOfLedgerAccountId,
  SYSTEM_ACCOUNT_NAMES,
  systemAccountId,
  unbalancedCurrencies,
  type Hold,
  type LedgerAccountRef,
  type SystemAccountName,
} from '../domain/ledger.js';
import { checks, type Checks } from '../domain/validation.js';
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
/** "SETTLEMENT, FEES, FX or CLEARING" */
const SYSTEM_NAMES_TEXT = `${SYSTEM_ACCOUNT_NAMES.slice(0, -1).join(', ')} or ${SYSTEM_ACCOUNT_NAMES.at(-1)}`;
const HOLD_STATUS_TO_PB: Record<Hold['status'], pb.HoldStatus> = {
  PENDING: pb.HoldStatus.PENDING,
  POSTED: pb.HoldStatus.POSTED,
  VOIDED: pb.HoldStatus.VOIDED,
};

function stepId(c: Checks, field: string, value: string | undefined): Checks {
  return value ? c.entryId(field, value) : c.add(field, 'is required');
}

function kind(c: Checks, value: string | undefined): Checks {
  if (value !== undefined && value !== '' && !KIND_PATTERN.test(value))
    c.add('kind', 'must be 1 to 64 characters of A-Z, 0-9, "_"');
  return c;
}

/** Checks a LedgerAccountRef (exactly one of internal account id / system account) and translates it. */
function ref(c: Checks, field: string, r: pb.LedgerAccountRef | undefined): LedgerAccountRef | undefined {
  const internal = r?.internalAccountId || undefined;
  const system = r?.systemAccount !== undefined && r.systemAccount !== pb.SystemAccount.UNSPECIFIED;
  if (!r || (!internal && !system)) {
    c.add(field, 'requires internalAccountId or systemAccount');
    return undefined;
  }
  if (internal && system) {
    c.add(field, 'takes internalAccountId or systemAccount, not both');
    return undefined;
  }
  if (internal) {
    if (isId(internal, 'InternalAccount')) return { internalAccountId: internal };
    c.id(`${field}.internalAccountId`, internal, 'InternalAccount');
    return undefined;
  }
  const name = (SYSTEM_FROM_PB as Partial<Record<pb.SystemAccount, SystemAccountName>>)[r.systemAccount!];
  if (!name) {
    c.add(`${field}.systemAccount`, `must be ${SYSTEM_NAMES_TEXT}`);
    return undefined;
  }
  return { system: name };
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

/** Structural checks of PostTransfer lines (accounts themselves are checked in the transaction). */
function transferLines(c: Checks, platformId: string, lines: readonly pb.LedgerLine[]): TransferLine[] {
  if (lines.length < 2) c.add('lines', 'needs at least two lines');
  const out: TransferLine[] = [];
  const seen = new Set<string>();
  lines.forEach((l, i) => {
    const account = ref(c, `lines[${i}].account`, l.account);
    const currencyOk = isCurrencyCode(l.currency);
    if (!currencyOk)
      c.add(
        `lines[${i}].currency`,
        l.currency ? `unknown currency ${JSON.stringify(l.currency)}` : 'is required',
      );
    if (l.amount === 0n) c.add(`lines[${i}].amount`, 'must not be 0');
    else if (l.amount > MAX_AMOUNT || l.amount < -MAX_AMOUNT)
      c.add(`lines[${i}].amount`, `must be between -${MAX_AMOUNT} and ${MAX_AMOUNT}`);
    if (!account || !currencyOk) return;
    const key =
      'internalAccountId' in account
        ? account.internalAccountId
        : systemAccountId(platformId, account.system, l.currency);
    if (seen.has(key)) c.add(`lines[${i}].account`, 'appears in another line');
    seen.add(key);
    out.push({ account, currency: l.currency, amount: l.amount });
  });
  if (out.length === lines.length)
    for (const cur of unbalancedCurrencies(out)) c.add('lines', `do not sum to zero in ${cur}`);
  return out;
}

/** The ledger RPC handlers: validate, translate, delegate to LedgerService. */
export function ledgerHandlers(ledger: LedgerService): LedgerHandlers {
  return {
    async placeHold(req) {
      const c = checks().id('platformId', req.platformId, 'Platform');
      stepId(c, 'holdId', req.holdId)
        .id('accountId', req.accountId, 'InternalAccount')
        .amount('amount', req.amount);
      if (!req.currency) c.add('currency', 'is required');
      else c.currency('currency', req.currency);
      const counterAccount = ref(c, 'counterAccount', req.counterAccount);
      kind(c, req.kind).done();
      const r = await ledger.placeHold({
        platformId: req.platformId,
        holdId: req.holdId,
        accountId: req.accountId,
        amount: req.amount,
        currency: req.currency,
        counterAccount: counterAccount!,
        kind: req.kind || 'HOLD',
        ...(req.description ? { description: req.description } : {}),
      });
      return { hold: holdToPb(r.hold), account: toPb(r.account), replayed: r.replayed };
    },

    async postHold(req) {
      const c = checks().id('platformId', req.platformId, 'Platform');
      stepId(stepId(c, 'holdId', req.holdId), 'postId', req.postId);
      if (req.amount !== undefined) c.amount('amount', req.amount);
      c.done();
      const r = await ledger.postHold({
        platformId: req.platformId,
        holdId: req.holdId,
        postId: req.postId,
        ...(req.amount !== undefined ? { amount: req.amount } : {}),
      });
      return { hold: holdToPb(r.hold), account: toPb(r.account), replayed: r.replayed };
    },

    async voidHold(req) {
      const c = checks().id('platformId', req.platformId, 'Platform');
      stepId(stepId(c, 'holdId', req.holdId), 'voidId', req.voidId).done();
      const r = await ledger.voidHold({ platformId: req.platformId, holdId: req.holdId, voidId: req.voidId });
      return { hold: holdToPb(r.hold), account: toPb(r.account), replayed: r.replayed };
    },

    async getHold(req) {
      stepId(checks().id('platformId', req.platformId, 'Platform'), 'holdId', req.holdId).done();
      return { hold: holdToPb(await ledger.getHold(req.platformId, req.holdId)) };
    },

    async postTransfer(req) {
      const c = checks().id('platformId', req.platformId, 'Platform');
      stepId(c, 'entryId', req.entryId);
      const lines = transferLines(c, req.platformId, req.lines);
      kind(c, req.kind).done();
      const r = await ledger.postTransfer({
        platformId: req.platformId,
        entryId: req.entryId,
        lines,
        kind: req.kind || 'TRANSFER',
        ...(req.description ? { description: req.description } : {}),
      });
      return { entryId: r.entryId, replayed: r.replayed, accounts: r.accounts.map(toPb) };
    },

    async reconcileLedger(req) {
      checks().id('platformId', req.platformId, 'Platform').done();
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
