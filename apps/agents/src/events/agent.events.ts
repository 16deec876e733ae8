import { EVENTS, agentActionJson } from '@sluice/api';
import type { Outbox } from '@sluice/events';
import type { EntityManager } from '@sluice/store';
import type { AgentEvents, PaymentQuote } from '../app/ports.js';
import type { Agent, AgentAction } from '../domain/agent.js';
import { actionToPb } from '../rpc/agents.mapper.js';

/**
 * The events of agents, through the typed outbox in the caller's transaction. The webhook's
 * `data` is the public AgentAction built by the one mapper of the API (`agentActionJson` over
 * the proto AgentAction the RPCs return), so it equals the REST body of the same action.
 */
export class AgentEventPublisher implements AgentEvents {
  constructor(private readonly outbox: Outbox) {}

  async pendingApproval(em: EntityManager, action: AgentAction, quote: PaymentQuote | undefined): Promise<void> {
    await this.outbox.add(em, EVENTS.AGENT_ACTION_PENDING_APPROVAL, {
      platformId: action.platformId,
      data: agentActionJson(actionToPb({ action, ...(quote ? { quote } : {}) })),
      occurredAt: action.createdAt,
    });
  }

  async tokenRevoked(em: EntityManager, agent: Pick<Agent, 'id' | 'platformId'>): Promise<void> {
    await this.outbox.add(em, EVENTS.AGENT_TOKEN_REVOKED, { platformId: agent.platformId, data: { agentId: agent.id } });
  }

  async updated(em: EntityManager, agent: Pick<Agent, 'id' | 'platformId'>): Promise<void> {
    await this.outbox.add(em, EVENTS.AGENT_UPDATED, { platformId: agent.platformId, data: { agentId: agent.id } });
  }
}
