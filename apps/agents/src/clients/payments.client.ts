import { payments } from '@sluice/contracts';
import { createRpcClient, environmentToPb, type PromiseClient } from '@sluice/rpc';
import { fail } from '../domain/errors.js';
import type { AgentQuoteInput, PaymentQuote, PaymentScope, PaymentTransaction, PaymentsPort } from '../app/ports.js';

/** The quote as agents see it; the proto message rides along as `wire`. */
export function paymentQuote(q: payments.Quote): PaymentQuote {
  return {
    id: q.id,
    status: q.status,
    ...(q.source?.kind === 'ACCOUNT' && q.source.accountId ? { sourceAccountId: q.source.accountId } : {}),
    ...(q.customerId ? { customerId: q.customerId } : {}),
    sendingCurrency: q.source!.currency,
    totalSendingAmount: q.totalSendingAmount,
    expiresAt: q.expiresAt!,
    embeddedWallet: q.payloadToSign !== undefined,
    ...(q.transactionId ? { transactionId: q.transactionId } : {}),
    wire: q,
  };
}

function paymentTransaction(t: payments.Transaction): PaymentTransaction {
  return { id: t.id, customerId: t.customerId, wire: t };
}

/**
 * The one client of agents to payments: quotes and their execution, transfers, transactions and
 * exchange rates, always with the agent id of the action (recorded on the transaction).
 */
export class PaymentsClient implements PaymentsPort {
  private readonly client: PromiseClient<payments.PaymentsServiceClient>;

  constructor(address: string, deadlineMs = 5000) {
    this.client = createRpcClient(payments.PaymentsServiceClient, address, { defaultDeadlineMs: deadlineMs });
  }

  async createQuote(scope: PaymentScope & { customerId: string }, req: AgentQuoteInput): Promise<PaymentQuote> {
    const { quote } = await this.client.createQuote({
      ...(req.wire as payments.CreateQuoteRequest),
      platformId: scope.platformId,
      environment: environmentToPb(scope.environment),
      sourceCustomerId: scope.customerId,
      immediatelyExecute: false,
    });
    return paymentQuote(quote!);
  }

  async getQuote(platformId: string, quoteId: string): Promise<PaymentQuote> {
    const { quote } = await this.client.getQuote({ platformId, quoteId });
    return paymentQuote(quote!);
  }

  async executeQuote(
    scope: PaymentScope,
    p: { quoteId: string; agentId?: string; walletSignature?: string; signingRequestId?: string },
  ): Promise<{ quote: PaymentQuote } | { challenge: unknown }> {
    const res = await this.client.executeQuote({
      platformId: scope.platformId,
      environment: environmentToPb(scope.environment),
      quoteId: p.quoteId,
      ...(p.agentId ? { agentId: p.agentId } : {}),
      ...(p.walletSignature ? { walletSignature: p.walletSignature } : {}),
      ...(p.signingRequestId ? { signingRequestId: p.signingRequestId } : {}),
    });
    return res.signingChallenge ? { challenge: res.signingChallenge } : { quote: paymentQuote(res.quote!) };
  }

  async transfer(
    scope: PaymentScope,
    p: Parameters<PaymentsPort['transfer']>[1],
  ): Promise<PaymentTransaction> {
    const req = {
      platformId: scope.platformId,
      environment: environmentToPb(scope.environment),
      requestKey: p.requestKey,
      sourceAccountId: p.sourceAccountId,
      destinationAccountId: p.destinationAccountId,
      amount: p.amount,
      ...(p.description !== undefined ? { description: p.description } : {}),
      agentId: p.agentId,
    };
    const { transaction } = p.type === 'TRANSFER_OUT' ? await this.client.transferOut(req) : await this.client.transferIn(req);
    return paymentTransaction(transaction!);
  }

  async getTransaction(platformId: string, transactionId: string): Promise<PaymentTransaction> {
    const { transaction } = await this.client.getTransaction({ platformId, transactionId });
    return paymentTransaction(transaction!);
  }

  async exchangeRate(scope: PaymentScope, p: { from: string; to: string; amount: bigint }): Promise<string> {
    const { rates } = await this.client.listExchangeRates({
      platformId: scope.platformId,
      environment: environmentToPb(scope.environment),
      sourceCurrency: p.from,
      destinationCurrencies: [p.to],
      sendingAmount: p.amount,
    });
    const rate = rates.find((r) => r.destinationCurrency?.code === p.to);
    if (!rate) {
      throw fail('CURRENCY_NOT_CONVERTIBLE', `No exchange rate from ${p.from} to ${p.to}: the policy's limits cannot be applied`, {
        from: p.from,
        to: p.to,
      });
    }
    return rate.exchangeRate;
  }

  close(): void {
    this.client.close();
  }
}
