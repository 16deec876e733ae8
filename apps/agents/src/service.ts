import { Type, grpcClientConfig } from '@sluice/config';
import { defineService, type ServiceConfig } from '@sluice/runtime';
import { migrations } from './store/migrations.js';
import { composeAgents, type AgentsAdapters } from './compose.js';

const config = Type.Object({
  // identity: customers; accounts: the customer's accounts; payments: quotes, transfers, rates.
  ...grpcClientConfig('identity'),
  ...grpcClientConfig('accounts'),
  ...grpcClientConfig('payments'),
  AGENT_DEVICE_CODE_TTL_SECONDS: Type.Integer({
    default: 900,
    minimum: 60,
    maximum: 604_800,
    description: 'how long a device code can be redeemed (expiresAt = issue + this)',
  }),
  AGENT_DEVICE_CODE_MAX_FAILURES: Type.Integer({
    default: 10,
    minimum: 1,
    maximum: 1000,
    description:
      'failed device-code status/redeem attempts allowed per client address and per code within AGENT_DEVICE_CODE_FAILURE_WINDOW_SECONDS; more are refused with 429 TOO_MANY_ATTEMPTS',
  }),
  AGENT_DEVICE_CODE_FAILURE_WINDOW_SECONDS: Type.Integer({
    default: 900,
    minimum: 1,
    maximum: 86_400,
    description: 'window in which device-code failures are counted',
  }),
  AGENT_ACTION_APPROVAL_TTL_SECONDS: Type.Integer({
    default: 86_400,
    minimum: 1,
    maximum: 2_592_000,
    description:
      'how long an agent action waits for approval before it FAILs (APPROVAL_EXPIRED, usage released); an EXECUTE_QUOTE action at most until its quote expires',
  }),
  AGENT_ACTION_STALL_SECONDS: Type.Integer({
    default: 30,
    minimum: 1,
    maximum: 3_600,
    description: 'an approved action whose execution has not reported back this long is driven again (payments calls are idempotent on the action)',
  }),
  AGENT_WORKER_POLL_MS: Type.Integer({
    default: 10_000,
    minimum: 10,
    maximum: 60_000,
    description:
      'safety poll of the agents worker (expired approvals, stalled executions): an action that starts waiting wakes it on commit (LISTEN/NOTIFY, every replica) and it sleeps until the next one is due, so this only bounds how late a lost notification is noticed (without a LISTEN connection it polls every second)',
  }),
});

/** The validated configuration of agents. */
export type AgentsConfig = ServiceConfig<typeof config>;

/** The agents service with some ports served by other adapters (tests). */
export function defineAgentsService(adapters: AgentsAdapters = {}) {
  return defineService({
    name: 'agents',
    schema: 'agents',
    domain: 'agents',
    config,
    migrations,
    compose: (deps) => composeAgents(deps, adapters),
  });
}

/**
 * The agents service: agents bound to one customer, their policies, device codes and bearer
 * tokens, usage counters, and agent actions with their approval.
 */
export const agentsService = defineAgentsService();
