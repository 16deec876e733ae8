import type { FastifyRequest } from 'fastify';
import { accounts } from '@sluice/contracts';
import { DomainError } from '@sluice/core';
import {
  Agent,
  AgentAction,
  ExternalAccount,
  Quote,
  Transaction,
  agentActionJson,
  agentJson,
  externalAccountJson,
  internalAccountJson,
  quoteJson,
  transactionJson,
} from '@sluice/api';
import { agentOf, requireAgentPermission, type AuthenticatedAgent } from '../http/agent-auth.js';
import { environmentOf, headerOf, requestKeyOf } from '../http/request.helpers.js';
import type { RouteModule } from '../http/types.js';
import { envelope, errorResponses, pageOf } from '../schemas/common.js';
import { AgentActionList, AgentActionsQuery, AgentTransactionsQuery, OwnActionParams } from '../schemas/agent.schemas.js';
import {
  accountInfoPb,
  CustomerExternalAccountCreateRequest,
  CustomerExternalAccountList,
  ExternalAccountParams,
  PlatformExternalAccountsQuery,
} from '../schemas/external-account.schemas.js';
import { CustomerInternalAccountList, PlatformInternalAccountsQuery } from '../schemas/internal-account.schemas.js';
import { QuoteParams, QuoteRequest, quoteRequestPb } from '../schemas/quote.schemas.js';
import {
  TransactionList,
  TransactionParams,
  TransferInRequest,
  TransferOutRequest,
  transactionsQueryPb,
} from '../schemas/transaction.schemas.js';
import { SigningChallenge, challengeJson } from '../schemas/wallet-auth.schemas.js';

const TAGS = ['Agent Operations'];
const AGENT = { auth: 'agent' as const };

/** Another customer's resource answers as an unknown one: 404 with the owning service's code. */
function notFound(code: string, what: string): DomainError {
  return new DomainError('NOT_FOUND', code, `${what} not found`);
}

function refuseWhilePaused(agent: AuthenticatedAgent): void {
  if (agent.isPaused) throw new DomainError('PERMISSION_DENIED', 'AGENT_PAUSED', 'The agent is paused; the platform must resume it first');
}

const TYPES: Record<string, accounts.InternalAccountType> = {
  INTERNAL_FIAT: accounts.InternalAccountType.INTERNAL_FIAT,
  INTERNAL_CRYPTO: accounts.InternalAccountType.INTERNAL_CRYPTO,
  EMBEDDED_WALLET: accounts.InternalAccountType.EMBEDDED_WALLET,
};

/**
 * The agent's own API (`Authorization: Bearer <accessToken>`, nothing else): every call is
 * bound to the agent's customer, and another customer's ids answer 404. Reads go to the
 * owning services with the customer filter; money goes through the agents service, which
 * checks the policy, reserves the usage and calls payments (docs/agents.md). Each permission
 * gates what it names: 403 MISSING_PERMISSION_<PERMISSION>.
 */
const agentMeRoutes: RouteModule = (app, deps) => {
  const { agents: agentsClient, payments: paymentsClient, accounts: accountsClient } = deps.clients;
  const ref = (request: FastifyRequest) => {
    const agent = agentOf(request);
    return { platformId: agent.platformId, agentId: agent.id };
  };

  app.get(
    '/agents/me',
    {
      config: AGENT,
      schema: {
        tags: TAGS,
        operationId: 'getAgentMe',
        summary: 'Get the current agent',
        description: 'The agent’s own profile, policy and usage (UTC day and month).',
        response: { 200: Agent, ...errorResponses() },
      },
    },
    async (request) => agentJson((await agentsClient.getAgent(ref(request))).agent!),
  );

  app.get(
    '/agents/me/transactions',
    {
      config: AGENT,
      schema: {
        tags: TAGS,
        operationId: 'agentListTransactions',
        summary: 'List the customer’s transactions',
        description:
          'Transactions of the agent’s customer (VIEW_TRANSACTIONS), with the filters of GET /transactions except customerId and platformCustomerId.',
        querystring: AgentTransactionsQuery,
        response: { 200: TransactionList, ...errorResponses() },
      },
    },
    async (request) => {
      const agent = requireAgentPermission(request, 'VIEW_TRANSACTIONS');
      const page = await paymentsClient.listTransactions({
        platformId: agent.platformId,
        ...transactionsQueryPb(request.query),
        customerId: agent.customerId,
      });
      return envelope(page.transactions.map(transactionJson), page.page);
    },
  );

  app.get(
    '/agents/me/transactions/:transactionId',
    {
      config: AGENT,
      schema: {
        tags: TAGS,
        operationId: 'agentGetTransaction',
        summary: 'Get a transaction of the customer',
        description: 'VIEW_TRANSACTIONS. 404 TRANSACTION_NOT_FOUND also for another customer’s transaction.',
        params: TransactionParams,
        response: { 200: Transaction, ...errorResponses() },
      },
    },
    async (request) => {
      const agent = requireAgentPermission(request, 'VIEW_TRANSACTIONS');
      const { transaction } = await paymentsClient.getTransaction({
        platformId: agent.platformId,
        transactionId: request.params.transactionId,
      });
      if (transaction!.customerId !== agent.customerId) throw notFound('TRANSACTION_NOT_FOUND', 'Transaction');
      return transactionJson(transaction!);
    },
  );

  app.get(
    '/agents/me/internal-accounts',
    {
      config: AGENT,
      schema: {
        tags: TAGS,
        operationId: 'agentListInternalAccounts',
        summary: 'List the customer’s internal accounts',
        description: 'The internal accounts (and balances) of the agent’s customer (VIEW_TRANSACTIONS); filters currency and type.',
        querystring: PlatformInternalAccountsQuery,
        response: { 200: CustomerInternalAccountList, ...errorResponses() },
      },
    },
    async (request) => {
      const agent = requireAgentPermission(request, 'VIEW_TRANSACTIONS');
      const q = request.query;
      const res = await accountsClient.listInternalAccounts({
        platformId: agent.platformId,
        owner: accounts.Owner.CUSTOMERS,
        customerId: agent.customerId,
        ...(q.currency ? { currency: q.currency } : {}),
        ...(q.type ? { type: TYPES[q.type]! } : {}),
        page: pageOf(q),
      });
      return envelope(res.accounts.map(internalAccountJson), res.page);
    },
  );

  app.get(
    '/agents/me/external-accounts',
    {
      config: AGENT,
      schema: {
        tags: TAGS,
        operationId: 'agentListExternalAccounts',
        summary: 'List the customer’s external accounts',
        description: 'MANAGE_EXTERNAL_ACCOUNTS. Filter: currency.',
        querystring: PlatformExternalAccountsQuery,
        response: { 200: CustomerExternalAccountList, ...errorResponses() },
      },
    },
    async (request) => {
      const agent = requireAgentPermission(request, 'MANAGE_EXTERNAL_ACCOUNTS');
      const q = request.query;
      const res = await accountsClient.listExternalAccounts({
        platformId: agent.platformId,
        owner: accounts.Owner.CUSTOMERS,
        customerId: agent.customerId,
        ...(q.currency ? { currency: q.currency } : {}),
        page: pageOf(q),
      });
      return envelope(res.accounts.map(externalAccountJson), res.page);
    },
  );

  app.post(
    '/agents/me/external-accounts',
    {
      config: AGENT,
      schema: {
        tags: TAGS,
        operationId: 'agentCreateExternalAccount',
        summary: 'Add an external account for the customer',
        description:
          'MANAGE_EXTERNAL_ACCOUNTS; refused while the agent is paused. customerId may be omitted (it is the agent’s customer; another is 404). Validation and beneficiary verification as POST /customers/external-accounts.',
        body: CustomerExternalAccountCreateRequest,
        response: { 201: ExternalAccount, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const agent = requireAgentPermission(request, 'MANAGE_EXTERNAL_ACCOUNTS');
      refuseWhilePaused(agent);
      const b = request.body;
      if (b.customerId !== undefined && b.customerId !== agent.customerId) throw notFound('CUSTOMER_NOT_FOUND', 'Customer');
      const { account } = await accountsClient.createExternalAccount({
        platformId: agent.platformId,
        environment: environmentOf(request),
        customerId: agent.customerId,
        currency: b.currency,
        accountInfo: accountInfoPb(b.accountInfo),
        ...(b.platformAccountId ? { platformAccountId: b.platformAccountId } : {}),
        ...(b.defaultUmaDepositAccount !== undefined ? { defaultUmaDepositAccount: b.defaultUmaDepositAccount } : {}),
      });
      return reply.code(201).send(externalAccountJson(account!));
    },
  );

  /** The customer's external account of the path (404 for another customer's). */
  const ownExternal = async (agent: AuthenticatedAgent, accountId: string) => {
    const { account } = await accountsClient.getExternalAccount({ platformId: agent.platformId, accountId });
    if (account!.customerId !== agent.customerId) throw notFound('EXTERNAL_ACCOUNT_NOT_FOUND', 'External account');
    return account!;
  };

  app.get(
    '/agents/me/external-accounts/:externalAccountId',
    {
      config: AGENT,
      schema: {
        tags: TAGS,
        operationId: 'agentGetExternalAccount',
        summary: 'Get an external account of the customer',
        description: 'MANAGE_EXTERNAL_ACCOUNTS. 404 also for another customer’s account.',
        params: ExternalAccountParams,
        response: { 200: ExternalAccount, ...errorResponses() },
      },
    },
    async (request) => {
      const agent = requireAgentPermission(request, 'MANAGE_EXTERNAL_ACCOUNTS');
      return externalAccountJson(await ownExternal(agent, request.params.externalAccountId));
    },
  );

  app.delete(
    '/agents/me/external-accounts/:externalAccountId',
    {
      config: AGENT,
      schema: {
        tags: TAGS,
        operationId: 'agentDeleteExternalAccount',
        summary: 'Delete an external account of the customer',
        description: 'MANAGE_EXTERNAL_ACCOUNTS; refused while paused. 404 also for another customer’s account.',
        params: ExternalAccountParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const agent = requireAgentPermission(request, 'MANAGE_EXTERNAL_ACCOUNTS');
      refuseWhilePaused(agent);
      await ownExternal(agent, request.params.externalAccountId);
      await accountsClient.deleteExternalAccount({ platformId: agent.platformId, accountId: request.params.externalAccountId });
      return reply.code(204).send();
    },
  );

  app.post(
    '/agents/me/quotes',
    {
      config: AGENT,
      schema: {
        tags: TAGS,
        operationId: 'agentCreateQuote',
        summary: 'Create a quote',
        description:
          'CREATE_QUOTES; refused while paused. As POST /quotes, from an internal account of the agent’s customer (sourceType ACCOUNT; another customer’s account is 404). immediatelyExecute must be false: execution is an action the policy checks (POST /agents/me/quotes/{quoteId}/execute).',
        body: QuoteRequest,
        response: { 201: Quote, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const { quote } = await agentsClient.createAgentQuote({
        ...ref(request),
        quote: { ...quoteRequestPb(request.body), platformId: request.platform.id, environment: environmentOf(request) },
      });
      return reply.code(201).send(quoteJson(quote!));
    },
  );

  app.get(
    '/agents/me/quotes/:quoteId',
    {
      config: AGENT,
      schema: {
        tags: TAGS,
        operationId: 'agentGetQuote',
        summary: 'Get a quote of this agent',
        description: '404 QUOTE_NOT_FOUND for a quote this agent did not create.',
        params: QuoteParams,
        response: { 200: Quote, ...errorResponses() },
      },
    },
    async (request) => quoteJson((await agentsClient.getAgentQuote({ ...ref(request), quoteId: request.params.quoteId })).quote!),
  );

  app.post(
    '/agents/me/quotes/:quoteId/execute',
    {
      config: AGENT,
      schema: {
        tags: TAGS,
        operationId: 'agentExecuteQuote',
        summary: 'Execute a quote',
        description:
          'EXECUTE_QUOTES. An EXECUTE_QUOTE action for the quote’s totalSendingAmount, checked against the policy (403 with the failing rule’s code) and reserved in the usage counters: APPROVED with its transaction (AUTO), or PENDING_APPROVAL without one (the platform decides; AGENT_ACTION.PENDING_APPROVAL webhook). A payment refused by payments (INSUFFICIENT_FUNDS, ...) is that error; the action stays FAILED and its usage is released. Executing a quote again answers its live action. A retry with the same Idempotency-Key answers as the first execute did (the same refusal, or its action as it is now), even once the quote could be paid; a new attempt needs a new key, and the key with another quote is 400 INVALID_INPUT (Idempotency-Key). An EMBEDDED_WALLET source needs Service-Wallet-Signature (and Request-Id) as for POST /quotes/{quoteId}/execute: without them the answer is 202 with the signing challenge, nothing is reserved and the key stays unused.',
        params: QuoteParams,
        response: { 200: AgentAction, 202: SigningChallenge, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const signature = headerOf(request, 'Service-Wallet-Signature');
      const requestId = headerOf(request, 'Request-Id');
      const out = await agentsClient.executeAgentQuote({
        ...ref(request),
        quoteId: request.params.quoteId,
        ...(signature ? { walletSignature: signature } : {}),
        ...(requestId ? { signingRequestId: requestId } : {}),
        requestKey: requestKeyOf(request),
      });
      if (out.signingChallenge) return reply.code(202).send(challengeJson(out.signingChallenge));
      return agentActionJson(out.action!);
    },
  );

  for (const [path, type, body] of [
    ['/agents/me/transfer-out', 'TRANSFER_OUT', TransferOutRequest],
    ['/agents/me/transfer-in', 'TRANSFER_IN', TransferInRequest],
  ] as const) {
    app.post(
      path,
      {
        config: AGENT,
        schema: {
          tags: TAGS,
          operationId: type === 'TRANSFER_OUT' ? 'agentCreateTransferOut' : 'agentCreateTransferIn',
          summary: type === 'TRANSFER_OUT' ? 'Create a transfer-out' : 'Create a transfer-in',
          description: `CREATE_TRANSFERS. A ${type} action between accounts of the agent’s customer (another customer’s account is 404), checked against the policy and reserved: APPROVED with its transaction (AUTO), or PENDING_APPROVAL (the platform decides). A payment refused by payments (INSUFFICIENT_FUNDS, ...) is that error; the action stays FAILED and its usage is released.`,
          body,
          response: { 201: AgentAction, ...errorResponses() },
        },
      },
      async (request, reply) => {
        const b = request.body;
        const { action } = await agentsClient.agentTransfer({
          ...ref(request),
          type,
          sourceAccountId: b.source.accountId,
          destinationAccountId: b.destination.accountId,
          amount: BigInt(b.amount),
          ...(b.description !== undefined ? { description: b.description } : {}),
          requestKey: requestKeyOf(request),
        });
        return reply.code(201).send(agentActionJson(action!));
      },
    );
  }

  app.get(
    '/agents/me/actions',
    {
      config: AGENT,
      schema: {
        tags: TAGS,
        operationId: 'agentListActions',
        summary: 'List this agent’s actions',
        description: 'Newest first; filter status.',
        querystring: AgentActionsQuery,
        response: { 200: AgentActionList, ...errorResponses() },
      },
    },
    async (request) => {
      const q = request.query;
      const res = await agentsClient.listAgentActions({ ...ref(request), ...(q.status ? { status: q.status } : {}), page: pageOf(q) });
      return envelope(res.actions.map(agentActionJson), res.page);
    },
  );

  app.get(
    '/agents/me/actions/:actionId',
    {
      config: AGENT,
      schema: {
        tags: TAGS,
        operationId: 'agentGetAction',
        summary: 'Get an action of this agent',
        description: '404 AGENT_ACTION_NOT_FOUND for another agent’s action.',
        params: OwnActionParams,
        response: { 200: AgentAction, ...errorResponses() },
      },
    },
    async (request) => agentActionJson((await agentsClient.getAgentAction({ ...ref(request), actionId: request.params.actionId })).action!),
  );
};

export default agentMeRoutes;
