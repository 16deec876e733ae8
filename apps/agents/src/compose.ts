import { NotifiedLoop } from '@sluice/events';
import type { Composition, ServiceDeps, Worker } from '@sluice/runtime';
import type { AgentsConfig } from './service.js';
import type { AccountsPort, CustomerDirectory, PaymentsPort } from './app/ports.js';
import { ActionsService } from './app/actions.service.js';
import { AgentsService } from './app/agents.service.js';
import { UsageReleaser } from './app/usage.js';
import { AccountsClient } from './clients/accounts.client.js';
import { IdentityClient } from './clients/identity.client.js';
import { PaymentsClient } from './clients/payments.client.js';
import { AgentEventPublisher } from './events/agent.events.js';
import { agentsRpc } from './rpc/agents.rpc.js';
import { ACTIONS_CHANNEL, ActionRepository } from './store/action.repository.js';
import { AgentRepository } from './store/agent.repository.js';
import { AgentQuoteRepository, AttemptRepository, DeviceCodeRepository } from './store/device-code.repository.js';

/** Ports a test may serve otherwise; each left out is the gRPC client of its service. */
export interface AgentsAdapters {
  customers?: CustomerDirectory;
  accounts?: AccountsPort;
  payments?: PaymentsPort;
}

/** The object graph of a running agents service. */
export interface AgentsGraph extends Composition {
  agents: AgentsService;
  actions: ActionsService;
}

/** The composition root of agents: every object of the service, built once. */
export function composeAgents(
  { orm, clock, logger, outbox, config: c }: ServiceDeps<AgentsConfig>,
  adapters: AgentsAdapters = {},
): AgentsGraph {
  // Outbound clients: one per remote service, opened only when no adapter replaces it.
  const identityClient = adapters.customers ? undefined : new IdentityClient(c.IDENTITY_GRPC_URL);
  const accountsClient = adapters.accounts ? undefined : new AccountsClient(c.ACCOUNTS_GRPC_URL);
  const paymentsClient = adapters.payments ? undefined : new PaymentsClient(c.PAYMENTS_GRPC_URL);
  const customers = adapters.customers ?? identityClient!;
  const accounts = adapters.accounts ?? accountsClient!;
  const payments = adapters.payments ?? paymentsClient!;

  const store = {
    agents: new AgentRepository(),
    codes: new DeviceCodeRepository(),
    attempts: new AttemptRepository(),
    quotes: new AgentQuoteRepository(),
    actions: new ActionRepository(),
  };
  const events = new AgentEventPublisher(outbox);
  const usage = new UsageReleaser(clock, store);

  const agents = new AgentsService(
    orm,
    clock,
    {
      deviceCodeTtlMs: c.AGENT_DEVICE_CODE_TTL_SECONDS * 1000,
      maxCodeFailures: c.AGENT_DEVICE_CODE_MAX_FAILURES,
      codeFailureWindowMs: c.AGENT_DEVICE_CODE_FAILURE_WINDOW_SECONDS * 1000,
    },
    { ...store, customers, accounts, rates: payments, events, usage },
  );
  const actions = new ActionsService(
    orm,
    clock,
    { approvalTtlMs: c.AGENT_ACTION_APPROVAL_TTL_SECONDS * 1000, stallMs: c.AGENT_ACTION_STALL_SECONDS * 1000 },
    { ...store, payments, accounts, events, usage, logger },
  );

  // One loop: expire approvals past their time, drive stalled executions, forget old failure windows.
  // It wakes when an action starts waiting (announced on commit), when the next one is due, and
  // every AGENT_WORKER_POLL_MS (safety poll): an idle worker runs no query.
  const loop: NotifiedLoop = new NotifiedLoop(
    async () => {
      const expired = await actions.expireDue();
      const recovered = await actions.recoverStalled();
      await agents.purgeAttempts();
      if (expired || recovered) logger.info({ expired, recovered }, 'agent actions expired or recovered');
      if (expired > 0 || recovered > 0) return true;
      const next = await actions.nextDueAt();
      loop.wakeIn(next ? next.getTime() - clock.now().getTime() : undefined);
      return false;
    },
    {
      orm,
      channel: ACTIONS_CHANNEL,
      logger,
      safetyMs: c.AGENT_WORKER_POLL_MS,
      fallbackMs: 1000,
      onError: (err) => logger.warn({ err }, 'agents worker tick failed'),
    },
  );
  const worker: Worker = { start: () => loop.start(), stop: () => loop.stop() };

  return {
    agents,
    actions,
    workers: [worker],
    rpc: [agentsRpc({ agents, actions, clock, logger })],
    close: () => {
      identityClient?.close();
      accountsClient?.close();
      paymentsClient?.close();
    },
  };
}
