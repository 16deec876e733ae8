import { payments } from '@sluice/contracts';
import { DomainError, newId, type Clock } from '@sluice/core';
import type {
  AccountRef,
  AccountsPort,
  AgentQuoteInput,
  CustomerDirectory,
  PaymentQuote,
  PaymentScope,
  PaymentTransaction,
  PaymentsPort,
} from '../../src/app/ports.js';

/**
 * In-memory stand-ins for identity, accounts and payments behind the agents service's ports
 * (the real ones are exercised through the real processes in tests/e2e/agents.spec.ts). The
 * payments stand-in keeps balances and records every money movement, so a test can count how
 * often money moved; like payments, it is idempotent on a transfer's request key and on a quote.
 */
export class FakeNeighbours implements PaymentsPort {
  readonly customers = new Map<string, { platformId: string; platformCustomerId: string }>();
  readonly internal = new Map<string, AccountRef & { platformId: string; balance: bigint }>();
  readonly external = new Map<string, AccountRef & { platformId: string }>();
  readonly quotes = new Map<string, payments.Quote>();
  readonly transactions = new Map<string, payments.Transaction>();
  /** Every money movement, in order: the request key (transfers) or quote id. */
  readonly moves: string[] = [];
  /** Sending major units per receiving major unit, by `FROM>TO`. */
  readonly rates = new Map<string, string>([
    ['EUR>USD', '0.925925'],
    ['USD>EUR', '1.08'],
  ]);
  /** EMBEDDED_WALLET accounts: executing their quotes needs the signature `signed:<quote id>`. */
  readonly embedded = new Set<string>();
  /** Makes payments calls fail as an outage would (UNAVAILABLE) while set. */
  down = false;
  private readonly byKey = new Map<string, string>();

  /** `clock`: the agents service's, so quotes expire on its time. */
  constructor(private readonly clock: Clock) {}

  customer(platformId: string): string {
    const id = newId('Customer');
    this.customers.set(id, { platformId, platformCustomerId: `pc-${id.slice(-6)}` });
    return id;
  }

  addInternal(platformId: string, customerId: string, currency: string, balance = 0n): string {
    const id = newId('InternalAccount');
    this.internal.set(id, { id, platformId, customerId, currency, balance });
    return id;
  }

  addExternal(platformId: string, customerId: string, currency: string): string {
    const id = newId('ExternalAccount');
    this.external.set(id, { id, platformId, customerId, currency });
    return id;
  }

  balance(accountId: string): bigint {
    return this.internal.get(accountId)!.balance;
  }

  // PaymentsPort
  async createQuote(scope: PaymentScope & { customerId: string }, req: AgentQuoteInput): Promise<PaymentQuote> {
    this.up();
    const wire = req.wire as payments.CreateQuoteRequest;
    const source = this.internal.get(wire.sourceAccountId);
    if (!source || source.platformId !== scope.platformId || source.customerId !== scope.customerId) {
      throw new DomainError('NOT_FOUND', 'INTERNAL_ACCOUNT_NOT_FOUND', 'no such account');
    }
    const now = this.clock.now();
    const q = payments.Quote.fromPartial({
      id: newId('Quote'),
      platformId: scope.platformId,
      status: 'PENDING',
      source: { kind: 'ACCOUNT', accountId: source.id, currency: source.currency },
      destination: { kind: 'ACCOUNT', accountId: wire.destinationAccountId ?? '', currency: wire.destinationCurrency ?? 'EUR' },
      customerId: scope.customerId,
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: wire.lockedCurrencyAmount,
      totalSendingAmount: wire.lockedCurrencyAmount,
      totalReceivingAmount: wire.lockedCurrencyAmount,
      exchangeRate: '1',
      feesIncluded: 0n,
      rateDetails: {
        counterpartyMultiplier: '1',
        counterpartyFixedFee: 0n,
        gridApiMultiplier: '1',
        gridApiFixedFee: 0n,
        gridApiVariableFeeRate: '0',
        gridApiVariableFeeAmount: 0n,
      },
      createdAt: now,
      updatedAt: now,
      expiresAt: new Date(now.getTime() + 120_000),
    });
    this.quotes.set(q.id, q);
    return this.quoteOf(q);
  }

  async getQuote(platformId: string, quoteId: string): Promise<PaymentQuote> {
    this.up();
    const q = this.quotes.get(quoteId);
    if (!q || q.platformId !== platformId) throw new DomainError('NOT_FOUND', 'QUOTE_NOT_FOUND', 'no such quote');
    return this.quoteOf(q);
  }

  async executeQuote(
    scope: PaymentScope,
    p: { quoteId: string; agentId?: string; walletSignature?: string; signingRequestId?: string },
  ): Promise<{ quote: PaymentQuote } | { challenge: unknown }> {
    this.up();
    const q = this.quotes.get(p.quoteId);
    if (!q || q.platformId !== scope.platformId) throw new DomainError('NOT_FOUND', 'QUOTE_NOT_FOUND', 'no such quote');
    if (q.status !== 'PENDING') return { quote: this.quoteOf(q) };
    if (this.embedded.has(q.source!.accountId!)) {
      if (!p.walletSignature && !p.signingRequestId) {
        return { challenge: { requestId: newId('Request'), payloadToSign: `sign ${q.id}`, expiresAt: new Date(this.clock.now().getTime() + 300_000) } };
      }
      if (p.walletSignature !== `signed:${q.id}`) throw new DomainError('UNAUTHENTICATED', 'WALLET_SIGNATURE_INVALID', 'bad signature');
    }
    if (q.expiresAt!.getTime() <= this.clock.now().getTime()) {
      q.status = 'EXPIRED';
      throw new DomainError('INVALID_ARGUMENT', 'QUOTE_EXPIRED', 'expired');
    }
    this.debit(q.source!.accountId!, q.totalSendingAmount);
    const t = this.transaction(scope.platformId, q.customerId!, q.source!.accountId!, q.destination!.accountId!, q.totalSendingAmount, p.agentId);
    q.status = 'COMPLETED';
    q.transactionId = t.id;
    this.moves.push(q.id);
    return { quote: this.quoteOf(q) };
  }

  async transfer(scope: PaymentScope, p: Parameters<PaymentsPort['transfer']>[1]): Promise<PaymentTransaction> {
    this.up();
    const replay = this.byKey.get(p.requestKey);
    if (replay) return this.txOf(this.transactions.get(replay)!);
    const internalId = p.type === 'TRANSFER_OUT' ? p.sourceAccountId : p.destinationAccountId;
    const internal = this.internal.get(internalId)!;
    if (p.type === 'TRANSFER_OUT') this.debit(internalId, p.amount);
    else internal.balance += p.amount;
    const t = this.transaction(scope.platformId, internal.customerId!, p.sourceAccountId, p.destinationAccountId, p.amount, p.agentId);
    this.byKey.set(p.requestKey, t.id);
    this.moves.push(p.requestKey);
    return this.txOf(t);
  }

  async getTransaction(platformId: string, transactionId: string): Promise<PaymentTransaction> {
    this.up();
    const t = this.transactions.get(transactionId);
    if (!t || t.platformId !== platformId) throw new DomainError('NOT_FOUND', 'TRANSACTION_NOT_FOUND', 'no such transaction');
    return this.txOf(t);
  }

  async exchangeRate(_scope: PaymentScope, p: { from: string; to: string }): Promise<string> {
    this.up();
    const r = this.rates.get(`${p.from}>${p.to}`);
    if (!r) throw new DomainError('INVALID_ARGUMENT', 'UNSUPPORTED_CURRENCY', 'no rate');
    return r;
  }

  /** The CustomerDirectory (identity) side of this stand-in. */
  get directory(): CustomerDirectory {
    return { customer: (platformId, customerId) => this.customerOf(platformId, customerId) };
  }

  /** The AccountsPort (accounts) side of this stand-in. */
  get accounts(): AccountsPort {
    return {
      internalAccountIds: async (platformId, customerId) =>
        [...this.internal.values()].filter((a) => a.platformId === platformId && a.customerId === customerId).map((a) => a.id),
      internalAccount: async (p, a) => this.account(this.internal, p, a, 'INTERNAL_ACCOUNT_NOT_FOUND'),
      externalAccount: async (p, a) => this.account(this.external, p, a, 'EXTERNAL_ACCOUNT_NOT_FOUND'),
    };
  }

  private async customerOf(platformId: string, customerId: string) {
    const c = this.customers.get(customerId);
    if (!c || c.platformId !== platformId) throw new DomainError('NOT_FOUND', 'CUSTOMER_NOT_FOUND', 'no such customer');
    return { customerId, platformCustomerId: c.platformCustomerId };
  }

  private account<A extends AccountRef & { platformId: string }>(
    map: Map<string, A>,
    platformId: string,
    id: string,
    code: string,
  ): AccountRef {
    const a = map.get(id);
    if (!a || a.platformId !== platformId) throw new DomainError('NOT_FOUND', code, 'no such account');
    return { id: a.id, ...(a.customerId ? { customerId: a.customerId } : {}), currency: a.currency };
  }

  private debit(accountId: string, amount: bigint): void {
    const a = this.internal.get(accountId)!;
    if (a.balance < amount) throw new DomainError('FAILED_PRECONDITION', 'INSUFFICIENT_FUNDS', 'insufficient funds');
    a.balance -= amount;
  }

  private transaction(platformId: string, customerId: string, source: string, destination: string, amount: bigint, agentId?: string) {
    const now = new Date();
    const t = payments.Transaction.fromPartial({
      id: newId('Transaction'),
      platformId,
      type: 'OUTGOING',
      status: 'COMPLETED',
      source: { kind: 'ACCOUNT', accountId: source, currency: 'USD' },
      destination: { kind: 'ACCOUNT', accountId: destination, currency: 'USD' },
      customerId,
      platformCustomerId: this.customers.get(customerId)?.platformCustomerId ?? 'pc',
      sentAmount: amount,
      receivedAmount: amount,
      fees: 0n,
      exchangeRate: '1',
      reference: 'SLC-TEST',
      createdAt: now,
      updatedAt: now,
      ...(agentId ? { agentId } : {}),
    });
    this.transactions.set(t.id, t);
    return t;
  }

  private quoteOf(q: payments.Quote): PaymentQuote {
    return {
      id: q.id,
      status: q.status,
      sourceAccountId: q.source!.accountId!,
      ...(q.customerId ? { customerId: q.customerId } : {}),
      sendingCurrency: q.source!.currency,
      totalSendingAmount: q.totalSendingAmount,
      expiresAt: q.expiresAt!,
      embeddedWallet: this.embedded.has(q.source!.accountId!),
      ...(q.transactionId ? { transactionId: q.transactionId } : {}),
      wire: q,
    };
  }

  private txOf(t: payments.Transaction): PaymentTransaction {
    return { id: t.id, customerId: t.customerId, wire: t };
  }

  private up(): void {
    if (this.down) throw new DomainError('UNAVAILABLE', 'SERVICE_UNAVAILABLE', 'payments is down');
  }
}
