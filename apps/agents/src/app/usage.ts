import type { Clock } from '@sluice/core';
import type { EntityManager } from '@sluice/store';
import type { ActionState, Agent, AgentAction } from '../domain/agent.js';
import { releaseReservation } from '../domain/enforcement.js';
import type { ActionOutcome, ActionRepository } from '../store/action.repository.js';
import type { AgentRepository } from '../store/agent.repository.js';

/**
 * Ends an action that moved no money (REJECTED or FAILED) and gives its reservation back to
 * the agent's counters, in the caller's transaction, under the agent's row lock (taken
 * first, as every reservation does, so the two never deadlock).
 */
export class UsageReleaser {
  constructor(
    private readonly clock: Clock,
    private readonly deps: { agents: AgentRepository; actions: ActionRepository },
  ) {}

  /** Moves the action from `from` to FAILED with `reason` and releases its reservation; undefined when it was not in `from`. */
  async failLocked(em: EntityManager, agent: Agent, action: AgentAction, from: ActionState, reason: string) {
    return this.endLocked(em, agent, action, from, 'FAILED', { failureReason: reason });
  }

  /** Moves the action from `from` to `to` (REJECTED or FAILED) and releases its reservation, once. */
  async endLocked(
    em: EntityManager,
    agent: Agent,
    action: AgentAction,
    from: ActionState,
    to: 'REJECTED' | 'FAILED',
    outcome: ActionOutcome,
  ): Promise<AgentAction | undefined> {
    const now = this.clock.now();
    const ended = await this.deps.actions.transition(em, action.id, from, to, now, outcome);
    if (!ended) return undefined;
    await this.deps.agents.saveUsage(em, agent.id, releaseReservation(agent.usage, ended.reservation, now));
    return ended;
  }

  /** As `endLocked`, taking the agent's lock first (the agent may be deleted: then nothing is released). */
  async end(
    em: EntityManager,
    action: AgentAction,
    from: ActionState,
    to: 'REJECTED' | 'FAILED',
    outcome: ActionOutcome,
  ): Promise<AgentAction | undefined> {
    const agent = await this.deps.agents.getById(em, action.agentId, true);
    if (!agent) return this.deps.actions.transition(em, action.id, from, to, this.clock.now(), outcome);
    return this.endLocked(em, agent, action, from, to, outcome);
  }
}
