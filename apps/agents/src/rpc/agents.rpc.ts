import { agents as pb, payments } from '@sluice/contracts';
import { environmentFromPb, implement, pageInfo, pageRequest, type AsyncService, type RegisteredService } from '@sluice/rpc';
import { invalidInput, newId, type Clock, type Page } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import type { ActionsService, ActionView } from '../app/actions.service.js';
import type { AgentsService } from '../app/agents.service.js';
import { ACTION_STATUSES, type ActionStatus } from '../domain/agent.js';
import { actionToPb, agentToPb, challengeToPb, deviceCodeToPb, patchFromPb, policyFromPb, policyToPb } from './agents.mapper.js';

const actionsPage = (page: Page<ActionView>) => ({ actions: page.data.map(actionToPb), page: pageInfo(page) });
const quoteOf = (wire: unknown) => wire as payments.Quote;

/** gRPC handlers of sluice.agents.v1.AgentsService: proto → one use case → proto. */
export function agentsRpc(o: { agents: AgentsService; actions: ActionsService; clock: Clock; logger: Logger }): RegisteredService {
  const { agents, actions, clock } = o;
  const agentPb = (a: Parameters<typeof agentToPb>[0]) => agentToPb(a, clock.now());
  const handlers: AsyncService<pb.AgentsServiceServer> = {
    async createAgent(req) {
      const environment = environmentFromPb(req.environment);
      if (!environment) throw invalidInput([{ field: 'environment', message: 'is required' }]);
      const { agent, deviceCode } = await agents.create({
        platformId: req.platformId,
        environment,
        name: req.name,
        customerId: req.customerId,
        policy: policyFromPb(req.policy),
        ...(req.requestKey !== undefined ? { requestKey: req.requestKey } : {}),
      });
      return { agent: agentPb(agent), deviceCode: deviceCodeToPb(deviceCode) };
    },
    async listAgents(req) {
      const page = await agents.list(
        req.platformId,
        {
          ...(req.customerId !== undefined ? { customerId: req.customerId } : {}),
          ...(req.isPaused !== undefined ? { isPaused: req.isPaused } : {}),
          ...(req.isConnected !== undefined ? { isConnected: req.isConnected } : {}),
          ...(req.createdAfter ? { createdAfter: req.createdAfter } : {}),
          ...(req.createdBefore ? { createdBefore: req.createdBefore } : {}),
          ...(req.updatedAfter ? { updatedAfter: req.updatedAfter } : {}),
          ...(req.updatedBefore ? { updatedBefore: req.updatedBefore } : {}),
        },
        pageRequest(req.page),
      );
      return { agents: page.data.map(agentPb), page: pageInfo(page) };
    },
    async getAgent(req) {
      return { agent: agentPb(await agents.get(req.platformId, req.agentId)) };
    },
    async updateAgent(req) {
      const agent = await agents.update(req.platformId, req.agentId, {
        ...(req.name !== undefined ? { name: req.name } : {}),
        ...(req.isPaused !== undefined ? { isPaused: req.isPaused } : {}),
      });
      return { agent: agentPb(agent) };
    },
    async deleteAgent(req) {
      await agents.delete(req.platformId, req.agentId);
      return { agentId: req.agentId };
    },
    async updateAgentPolicy(req) {
      return { agent: agentPb(await agents.updatePolicy(req.platformId, req.agentId, patchFromPb(req.patch))) };
    },
    async createDeviceCode(req) {
      return { deviceCode: deviceCodeToPb(await agents.newDeviceCode(req.platformId, req.agentId, req.requestKey)) };
    },
    async getDeviceCodeStatus(req) {
      return agents.deviceCodeStatus(req.code, req.source);
    },
    async redeemDeviceCode(req) {
      const { agent, accessToken } = await agents.redeem(req.code, req.source);
      return { agentId: agent.id, agentName: agent.name, accessToken, policy: policyToPb(agent.policy) };
    },
    async authenticateAgent(req) {
      return { agent: agentPb(await agents.authenticate(req.accessToken)) };
    },
    async listApprovals(req) {
      const page = await actions.listApprovals(req.platformId, {
        ...(req.agentId !== undefined ? { agentId: req.agentId } : {}),
        ...(req.customerId !== undefined ? { customerId: req.customerId } : {}),
        ...(req.startDate ? { startDate: req.startDate } : {}),
        ...(req.endDate ? { endDate: req.endDate } : {}),
        ascending: req.sortOrder === payments.SortOrder.ASC,
        ...pageRequest(req.page),
      });
      return actionsPage(page);
    },
    async approveAction(req) {
      return { action: actionToPb(await actions.approve(req.platformId, req.agentId, req.actionId)) };
    },
    async rejectAction(req) {
      return { action: actionToPb(await actions.reject(req.platformId, req.agentId, req.actionId, req.reason)) };
    },
    async createAgentQuote(req) {
      const q = req.quote;
      const quote = await actions.createQuote(
        { platformId: req.platformId, agentId: req.agentId },
        {
          sourceKind: q?.sourceKind || 'ACCOUNT',
          sourceAccountId: q?.sourceAccountId ?? '',
          immediatelyExecute: q?.immediatelyExecute ?? false,
          wire: q ?? {},
        },
      );
      return { quote: quoteOf(quote.wire) };
    },
    async getAgentQuote(req) {
      const quote = await actions.getQuote({ platformId: req.platformId, agentId: req.agentId }, req.quoteId);
      return { quote: quoteOf(quote.wire) };
    },
    async executeAgentQuote(req) {
      const out = await actions.executeQuote(
        { platformId: req.platformId, agentId: req.agentId },
        {
          quoteId: req.quoteId,
          ...(req.walletSignature !== undefined ? { walletSignature: req.walletSignature } : {}),
          ...(req.signingRequestId !== undefined ? { signingRequestId: req.signingRequestId } : {}),
          ...(req.requestKey !== undefined ? { requestKey: req.requestKey } : {}),
        },
      );
      return 'challenge' in out ? { signingChallenge: challengeToPb(out.challenge) } : { action: actionToPb(out.action) };
    },
    async agentTransfer(req) {
      if (req.type !== 'TRANSFER_OUT' && req.type !== 'TRANSFER_IN') {
        throw invalidInput([{ field: 'type', message: 'must be TRANSFER_OUT or TRANSFER_IN' }]);
      }
      const view = await actions.transfer(
        { platformId: req.platformId, agentId: req.agentId },
        {
          type: req.type,
          sourceAccountId: req.sourceAccountId,
          destinationAccountId: req.destinationAccountId,
          amount: req.amount,
          ...(req.description !== undefined ? { description: req.description } : {}),
          requestKey: req.requestKey || newId('Request'),
        },
      );
      return { action: actionToPb(view) };
    },
    async listAgentActions(req) {
      if (req.status !== undefined && !(ACTION_STATUSES as readonly string[]).includes(req.status)) {
        throw invalidInput([{ field: 'status', message: `must be one of ${ACTION_STATUSES.join(', ')}` }]);
      }
      const page = await actions.listOwn(
        { platformId: req.platformId, agentId: req.agentId },
        { ...(req.status !== undefined ? { status: req.status as ActionStatus } : {}), ...pageRequest(req.page) },
      );
      return actionsPage(page);
    },
    async getAgentAction(req) {
      return { action: actionToPb(await actions.getOwn({ platformId: req.platformId, agentId: req.agentId }, req.actionId)) };
    },
  };
  return implement<pb.AgentsServiceServer>(pb.AgentsServiceService, handlers, o.logger, 'sluice.agents.v1.AgentsService');
}
