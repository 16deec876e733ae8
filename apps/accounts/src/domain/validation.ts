import {
  EXTERNAL_ACCOUNT_CURRENCIES,
  FieldErrors,
  invalidInput,
  isCurrencyCode,
  isDomainError,
  isId,
  MAX_AMOUNT,
  type Environment,
  type FieldError,
} from '@sluice/core';
import {
  ENTRY_ID_PATTERN,
  KIND_PATTERN,
  SYSTEM_ACCOUNT_NAMES,
  systemAccountId,
  unbalancedCurrencies,
  type LedgerAccountRef,
} from './ledger.js';
import {
  isInternalAccountType,
  normalizeCurrencies,
  type AccountFilter,
  type AccountListFilter,
  type AccountOwner,
  type Owner,
} from './internal-account.js';

/**
 * The meaning of accounts' requests, checked before any work: every use case
 * validates its request here (pure functions over core's FieldErrors) and gets
 * typed values back, or one INVALID_INPUT naming every bad field. Field names are
 * the public API's, since these errors reach REST callers unchanged.
 */

/** Core's field-error collector with the field rules of accounts' requests (chainable). */
export class Checks extends FieldErrors {
  id(
    field: string,
    value: unknown,
    type: 'Platform' | 'Customer' | 'InternalAccount' | 'ExternalAccount',
  ): this {
    if (value === undefined || value === null || value === '') return this.add(field, 'is required');
    if (!isId(value, type)) return this.add(field, `must be a ${type} id (${type}:<uuid>)`);
    return this;
  }

  optionalId(field: string, value: unknown, type: 'Customer' | 'InternalAccount'): this {
    return value === undefined || value === null || value === '' ? this : this.id(field, value, type);
  }

  /** A currency Sluice knows; `external`: or one an external account may hold (KES, VND, ...). */
  currency(field: string, value: unknown, external = false): this {
    const known =
      isCurrencyCode(value) || (external && EXTERNAL_ACCOUNT_CURRENCIES.includes(value as string));
    if (value !== undefined && value !== null && value !== '' && !known)
      this.add(field, `unknown currency ${JSON.stringify(value)}`);
    return this;
  }

  environment(field: string, value: Environment | undefined): this {
    if (value !== 'SANDBOX' && value !== 'PRODUCTION') this.add(field, 'must be SANDBOX or PRODUCTION');
    return this;
  }

  /** A positive amount of at most MAX_AMOUNT (9000000000000000). */
  amount(field: string, value: bigint | undefined): this {
    if (value === undefined) return this.add(field, 'is required');
    if (value <= 0n) return this.add(field, 'must be greater than 0');
    if (value > MAX_AMOUNT) return this.add(field, `must be at most ${MAX_AMOUNT}`);
    return this;
  }

  entryId(field: string, value: string | undefined): this {
    if (value !== undefined && value !== '' && !ENTRY_ID_PATTERN.test(value))
      this.add(field, 'must be 1 to 200 characters of A-Z, a-z, 0-9, ":", ".", "_", "-"');
    return this;
  }

  /** The id of a ledger step (hold, post, void, transfer entry): required, an entry id. */
  stepId(field: string, value: string | undefined): this {
    return value ? this.entryId(field, value) : this.add(field, 'is required');
  }

  /** A caller's business reason for an entry, when given. */
  kind(field: string, value: string | undefined): this {
    if (value !== undefined && value !== '' && !KIND_PATTERN.test(value))
      this.add(field, 'must be 1 to 64 characters of A-Z, 0-9, "_"');
    return this;
  }

  /** Throws INVALID_INPUT naming every problem found, if any. */
  done(): void {
    this.throwIfAny();
  }
}

export function checks(): Checks {
  return new Checks();
}

// Internal and external accounts

/** EnsureCustomerAccounts (a customer's accounts) or EnsurePlatformAccounts (the platform's own). */
export type EnsureAccountsRequest = {
  platformId: string;
  currencies: readonly string[];
  environment: Environment | undefined;
} & ({ owner: 'CUSTOMER'; customerId: string } | { owner: 'PLATFORM' });

/** The owner, the currencies without duplicates and the environment of an Ensure*Accounts request. */
export function validateEnsureAccounts(r: EnsureAccountsRequest): {
  owner: AccountOwner;
  currencies: string[];
  environment: Environment;
} {
  const c = checks().id('platformId', r.platformId, 'Platform');
  if (r.owner === 'CUSTOMER') c.id('customerId', r.customerId, 'Customer');
  c.environment('environment', r.environment).done();
  return {
    owner:
      r.owner === 'CUSTOMER'
        ? { platformId: r.platformId, owner: 'CUSTOMER', customerId: r.customerId }
        : { platformId: r.platformId, owner: 'PLATFORM' },
    currencies: normalizeCurrencies(r.currencies),
    environment: r.environment!,
  };
}

/** A listing of internal or external accounts as requested; `type` (internal accounts only) as named in the request. */
export interface AccountListRequest {
  platformId: string;
  owner: Owner | undefined;
  customerId?: string;
  currency?: string;
  type?: string;
}

/** The filter of ListInternalAccounts (`withType`) or ListExternalAccounts. */
export function validateAccountList(r: AccountListRequest, o: { withType: true }): AccountFilter;
export function validateAccountList(r: AccountListRequest, o: { withType: false }): AccountListFilter;
export function validateAccountList(r: AccountListRequest, o: { withType: boolean }): AccountFilter {
  const c = checks()
    .id('platformId', r.platformId, 'Platform')
    .optionalId('customerId', r.customerId, 'Customer')
    .currency('currency', r.currency, !o.withType);
  if (!r.owner) c.add('owner', 'must be OWNER_CUSTOMERS or OWNER_PLATFORM');
  if (r.owner === 'PLATFORM' && r.customerId) c.add('customerId', 'does not apply to platform accounts');
  const type = o.withType && r.type !== undefined ? r.type : undefined;
  if (type !== undefined && !isInternalAccountType(type))
    c.add('type', 'must be INTERNAL_FIAT, INTERNAL_CRYPTO or EMBEDDED_WALLET');
  c.done();
  return {
    platformId: r.platformId,
    owner: r.owner!,
    ...(r.customerId ? { customerId: r.customerId } : {}),
    ...(r.currency ? { currency: r.currency } : {}),
    ...(type !== undefined && isInternalAccountType(type) ? { type } : {}),
  };
}

/** The ids naming one account of a platform (Get/Update/Delete). */
export function validateAccountIds(
  platformId: string,
  accountId: string,
  type: 'InternalAccount' | 'ExternalAccount',
): void {
  checks().id('platformId', platformId, 'Platform').id('accountId', accountId, type).done();
}

/** UpdateInternalAccount: at least one setting to change. */
export function validateAccountUpdate(r: {
  platformId: string;
  accountId: string;
  privateEnabled?: boolean;
}): { privateEnabled: boolean } {
  validateAccountIds(r.platformId, r.accountId, 'InternalAccount');
  if (r.privateEnabled === undefined)
    checks().add('privateEnabled', 'at least one update field is required').done();
  return { privateEnabled: r.privateEnabled! };
}

// The ledger

/** SandboxFund. */
export function validateSandboxFund(r: {
  platformId: string;
  accountId: string;
  amount: bigint;
  entryId?: string;
}): void {
  checks()
    .id('platformId', r.platformId, 'Platform')
    .id('accountId', r.accountId, 'InternalAccount')
    .amount('amount', r.amount)
    .entryId('entryId', r.entryId)
    .done();
}

/** A ledger account as a request names it: exactly one of an internal account id or a system account name. */
export interface LedgerAccountRefInput {
  internalAccountId?: string;
  system?: string;
}

/** "SETTLEMENT, FEES, FX or CLEARING" */
const SYSTEM_NAMES_TEXT = `${SYSTEM_ACCOUNT_NAMES.slice(0, -1).join(', ')} or ${SYSTEM_ACCOUNT_NAMES.at(-1)}`;

/** Checks a ledger account reference under `field`; the reference when valid. */
function ledgerRef(
  c: Checks,
  field: string,
  r: LedgerAccountRefInput | undefined,
): LedgerAccountRef | undefined {
  const internal = r?.internalAccountId || undefined;
  const system = r?.system || undefined;
  if (!internal && !system) {
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
  const name = SYSTEM_ACCOUNT_NAMES.find((n) => n === system);
  if (!name) {
    c.add(`${field}.systemAccount`, `must be ${SYSTEM_NAMES_TEXT}`);
    return undefined;
  }
  return { system: name };
}

/** PlaceHold as requested. */
export interface PlaceHoldRequest {
  platformId: string;
  holdId: string;
  accountId: string;
  amount: bigint;
  currency: string;
  counterAccount?: LedgerAccountRefInput;
  kind?: string;
  description?: string;
  /** An external account read in the hold's transaction and answered with it (PlaceHoldResponse.payee_external_account). */
  payeeExternalAccountId?: string;
}

/** A valid PlaceHold: the counter account resolved to a reference, the kind defaulted to HOLD. */
export interface ValidHold {
  platformId: string;
  holdId: string;
  accountId: string;
  amount: bigint;
  currency: string;
  counterAccount: LedgerAccountRef;
  kind: string;
  description?: string;
}

export function validatePlaceHold(r: PlaceHoldRequest): ValidHold {
  const c = checks()
    .id('platformId', r.platformId, 'Platform')
    .stepId('holdId', r.holdId)
    .id('accountId', r.accountId, 'InternalAccount')
    .amount('amount', r.amount);
  if (!r.currency) c.add('currency', 'is required');
  else c.currency('currency', r.currency);
  const counterAccount = ledgerRef(c, 'counterAccount', r.counterAccount);
  if (r.payeeExternalAccountId !== undefined)
    c.id('payeeExternalAccountId', r.payeeExternalAccountId, 'ExternalAccount');
  c.kind('kind', r.kind).done();
  return {
    platformId: r.platformId,
    holdId: r.holdId,
    accountId: r.accountId,
    amount: r.amount,
    currency: r.currency,
    counterAccount: counterAccount!,
    kind: r.kind || 'HOLD',
    ...(r.description ? { description: r.description } : {}),
  };
}

/** PostHold (`amount`: default the whole hold). */
export function validatePostHold(r: {
  platformId: string;
  holdId: string;
  postId: string;
  amount?: bigint;
}): void {
  const c = checks()
    .id('platformId', r.platformId, 'Platform')
    .stepId('holdId', r.holdId)
    .stepId('postId', r.postId);
  if (r.amount !== undefined) c.amount('amount', r.amount);
  c.done();
}

/** VoidHold. */
export function validateVoidHold(r: { platformId: string; holdId: string; voidId: string }): void {
  checks()
    .id('platformId', r.platformId, 'Platform')
    .stepId('holdId', r.holdId)
    .stepId('voidId', r.voidId)
    .done();
}

/** GetHold. */
export function validateHoldIds(platformId: string, holdId: string): void {
  checks().id('platformId', platformId, 'Platform').stepId('holdId', holdId).done();
}

/** ReconcileLedger. */
export function validatePlatformId(platformId: string): void {
  checks().id('platformId', platformId, 'Platform').done();
}

/** One line of PostTransfer as requested: > 0 credits, < 0 debits. */
export interface TransferLineInput {
  account?: LedgerAccountRefInput;
  currency: string;
  amount: bigint;
}

/** A checked line of a transfer. */
export interface TransferLine {
  account: LedgerAccountRef;
  currency: string;
  /** > 0 credits, < 0 debits. */
  amount: bigint;
}

/** PostTransfer as requested. */
export interface TransferRequest {
  platformId: string;
  entryId: string;
  lines: readonly TransferLineInput[];
  kind?: string;
  description?: string;
}

/** A valid PostTransfer: structurally sound, balanced lines (their accounts are checked in the transaction), kind defaulted to TRANSFER. */
export interface ValidTransfer {
  platformId: string;
  entryId: string;
  lines: TransferLine[];
  kind: string;
  description?: string;
}

export function validateTransfer(r: TransferRequest): ValidTransfer {
  const c = checks().id('platformId', r.platformId, 'Platform').stepId('entryId', r.entryId);
  if (r.lines.length < 2) c.add('lines', 'needs at least two lines');
  const lines: TransferLine[] = [];
  const seen = new Set<string>();
  r.lines.forEach((l, i) => {
    const account = ledgerRef(c, `lines[${i}].account`, l.account);
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
        : systemAccountId(r.platformId, account.system, l.currency);
    if (seen.has(key)) c.add(`lines[${i}].account`, 'appears in another line');
    seen.add(key);
    lines.push({ account, currency: l.currency, amount: l.amount });
  });
  if (lines.length === r.lines.length)
    for (const cur of unbalancedCurrencies(lines)) c.add('lines', `do not sum to zero in ${cur}`);
  c.kind('kind', r.kind).done();
  return {
    platformId: r.platformId,
    entryId: r.entryId,
    lines,
    kind: r.kind || 'TRANSFER',
    ...(r.description ? { description: r.description } : {}),
  };
}

/** PostHold's `entry`: PostTransfer's rules, its fields named under `entry.` (the platform is the hold's). */
export function validateHoldPostEntry(r: TransferRequest): ValidTransfer {
  try {
    return validateTransfer(r);
  } catch (err) {
    const errors = isDomainError(err) ? (err.details?.errors as FieldError[] | undefined) : undefined;
    if (!errors) throw err;
    throw invalidInput(
      errors.map((e) => ({ ...e, field: e.field === 'platformId' ? e.field : `entry.${e.field}` })),
    );
  }
}
