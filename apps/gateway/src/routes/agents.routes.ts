import type { Static } from '@sinclair/typebox';
import { payments } from '@sluice/contracts';
import {
  Agent,
  AgentAction,
  AgentDeviceCode,
  agentActionJson,
  agentDeviceCodeJson,
  agentJson,
  agentPolicyJson,
} from '@sluice/api';
import { environmentOf, optionalBody, requestKeyOf } from '../http/request.helpers.js';
import type { RouteModule } from '../http/types.js';
import { envelope, errorResponses, pageOf } from '../schemas/common.js';
import {
  AgentActionList,
  AgentActionParams,
  AgentActionRejectRequest,
  AgentApprovalsQuery,
  AgentCreateRequest,
  AgentCreateResponse,
  AgentDeviceCodeRedeemResponse,
  AgentDeviceCodeStatusResponse,
  AgentList,
  AgentListQuery,
  AgentParams,
  AgentPolicyUpdateRequest,
  AgentUpdateRequest,
  DeviceCodeParams,
  policyPatchPb,
  policyPb,
} from '../schemas/agent.schemas.js';

const TAGS = ['Agent Management'];
const date = (v: string | undefined) => (v === undefined ? undefined : new Date(v));

/**
 * The platform side of agents (HTTP Basic): create, list, read, update, delete, the policy,
 * device codes, and the approval of agent actions; and the two device-code routes an agent's
 * software calls without credentials (status, redeem). Another platform's agents and actions
 * answer 404. Policy model, order of checks and codes: docs/agents.md.
 */
const agentsRoutes: RouteModule = (app, deps) => {
  const client = deps.clients.agents;

  app.post(
    '/agents',
    {
      schema: {
        tags: TAGS,
        operationId: 'createAgent',
        summary: 'Create an agent',
        description:
          'An agent acting for one customer of the platform under a policy, and its device code (shown once; type it into the agent software, which redeems it for its access token). 404 CUSTOMER_NOT_FOUND; 400 INVALID_INPUT naming each bad policy field (unknown permission or execution mode, negative limit, unsupported currency, an account that is not an internal account of the customer); nothing is stored then. A retry with the same Idempotency-Key whose first answer was lost answers the agent that request made, never a second one (its device code as for POST /agents/{agentId}/device-codes).',
        body: AgentCreateRequest,
        response: { 201: AgentCreateResponse, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const { agent, deviceCode } = await client.createAgent({
        platformId: request.platform.id,
        environment: environmentOf(request),
        name: request.body.name,
        customerId: request.body.customerId,
        policy: policyPb(request.body.policy),
        requestKey: requestKeyOf(request),
      });
      return reply.code(201).send({ agent: agentJson(agent!), deviceCode: agentDeviceCodeJson(deviceCode!) });
    },
  );

  app.get(
    '/agents',
    {
      schema: {
        tags: TAGS,
        operationId: 'listAgents',
        summary: 'List agents',
        description:
          'The platform’s agents, newest first, filtered by customerId, isPaused, isConnected and creation/update times (inclusive).',
        querystring: AgentListQuery,
        response: { 200: AgentList, ...errorResponses() },
      },
    },
    async (request) => {
      const q = request.query;
      const at = (k: 'createdAfter' | 'createdBefore' | 'updatedAfter' | 'updatedBefore') =>
        q[k] ? { [k]: date(q[k]) } : {};
      const res = await client.listAgents({
        platformId: request.platform.id,
        ...(q.customerId ? { customerId: q.customerId } : {}),
        ...(q.isPaused !== undefined ? { isPaused: q.isPaused } : {}),
        ...(q.isConnected !== undefined ? { isConnected: q.isConnected } : {}),
        ...at('createdAfter'),
        ...at('createdBefore'),
        ...at('updatedAfter'),
        ...at('updatedBefore'),
        page: pageOf(q),
      });
      return envelope(res.agents.map(agentJson), res.page);
    },
  );

  app.get(
    '/agents/approvals',
    {
      schema: {
        tags: TAGS,
        operationId: 'listAgentApprovals',
        summary: 'List agent actions awaiting approval',
        description:
          'The platform’s PENDING_APPROVAL agent actions (quote or transfer details included), filtered by agentId, customerId and createdAt between startDate and endDate (inclusive); newest first unless sortOrder=asc. Decide with POST /agents/{agentId}/actions/{actionId}/approve or /reject.',
        querystring: AgentApprovalsQuery,
        response: { 200: AgentActionList, ...errorResponses() },
      },
    },
    async (request) => {
      const q = request.query;
      const res = await client.listApprovals({
        platformId: request.platform.id,
        ...(q.agentId ? { agentId: q.agentId } : {}),
        ...(q.customerId ? { customerId: q.customerId } : {}),
        ...(q.startDate ? { startDate: new Date(q.startDate) } : {}),
        ...(q.endDate ? { endDate: new Date(q.endDate) } : {}),
        sortOrder: q.sortOrder === 'asc' ? payments.SortOrder.ASC : payments.SortOrder.DESC,
        page: pageOf(q),
      });
      return envelope(res.actions.map(agentActionJson), res.page);
    },
  );

  app.get(
    '/agents/:agentId',
    {
      schema: {
        tags: TAGS,
        operationId: 'getAgentById',
        summary: 'Get an agent',
        description:
          'The agent with its policy and its usage counters (UTC day and month). 404 AGENT_NOT_FOUND.',
        params: AgentParams,
        response: { 200: Agent, ...errorResponses() },
      },
    },
    async (request) => {
      const { agent } = await client.getAgent({
        platformId: request.platform.id,
        agentId: request.params.agentId,
      });
      return agentJson(agent!);
    },
  );

  app.patch(
    '/agents/:agentId',
    {
      schema: {
        tags: TAGS,
        operationId: 'updateAgent',
        summary: 'Update an agent',
        description:
          'name and/or isPaused. A paused agent’s every money-moving action is refused (403 AGENT_PAUSED) until it is resumed; its reads stay allowed.',
        params: AgentParams,
        body: AgentUpdateRequest,
        response: { 200: Agent, ...errorResponses() },
      },
    },
    async (request) => {
      const b = request.body;
      const { agent } = await client.updateAgent({
        platformId: request.platform.id,
        agentId: request.params.agentId,
        ...(b.name !== undefined ? { name: b.name } : {}),
        ...(b.isPaused !== undefined ? { isPaused: b.isPaused } : {}),
      });
      return agentJson(agent!);
    },
  );

  app.delete(
    '/agents/:agentId',
    {
      schema: {
        tags: TAGS,
        operationId: 'deleteAgent',
        summary: 'Delete an agent',
        description:
          'The agent’s access token stops working on every gateway replica within seconds (AGENT_TOKEN.REVOKED); its pending actions fail (AGENT_DELETED).',
        params: AgentParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses() },
      },
    },
    async (request, reply) => {
      await client.deleteAgent({ platformId: request.platform.id, agentId: request.params.agentId });
      return reply.code(204).send();
    },
  );

  app.patch(
    '/agents/:agentId/policy',
    {
      schema: {
        tags: TAGS,
        operationId: 'updateAgentPolicy',
        summary: 'Update an agent’s policy',
        description:
          'Partial update: given fields replace (permissions, accountRestrictions and approvalThresholds as a whole; spendingLimits field by field), omitted ones keep their values, null removes dailyLimit or monthlyLimit. Effective for the next action at once. 400 INVALID_INPUT naming the field.',
        params: AgentParams,
        body: AgentPolicyUpdateRequest,
        response: { 200: Agent, ...errorResponses() },
      },
    },
    async (request) => {
      const { agent } = await client.updateAgentPolicy({
        platformId: request.platform.id,
        agentId: request.params.agentId,
        patch: policyPatchPb(request.body),
      });
      return agentJson(agent!);
    },
  );

  app.post(
    '/agents/:agentId/device-codes',
    {
      schema: {
        tags: TAGS,
        operationId: 'regenerateAgentDeviceCode',
        summary: 'Issue a new device code',
        description:
          'A new device code for the agent (for instance to reinstall it); its earlier unredeemed codes stop working. Redeeming it gives a new access token and the previous token stops working. A retry with the same Idempotency-Key whose first answer was lost gets a fresh code in place of that request’s (the same expiresAt; the earlier one stops working, so one code is valid), or 400 DEVICE_CODE_ALREADY_REDEEMED / DEVICE_CODE_EXPIRED once that code was redeemed, replaced by a newer one or expired.',
        params: AgentParams,
        response: { 201: AgentDeviceCode, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const { deviceCode } = await client.createDeviceCode({
        platformId: request.platform.id,
        agentId: request.params.agentId,
        requestKey: requestKeyOf(request),
      });
      return reply.code(201).send(agentDeviceCodeJson(deviceCode!));
    },
  );

  const decisionIds = (request: { platform: { id: string }; params: Static<typeof AgentActionParams> }) => ({
    platformId: request.platform.id,
    agentId: request.params.agentId,
    actionId: request.params.actionId,
  });

  app.post(
    '/agents/:agentId/actions/:actionId/approve',
    {
      schema: {
        tags: TAGS,
        operationId: 'approveAgentAction',
        summary: 'Approve an agent action',
        description:
          'Executes a PENDING_APPROVAL action once: APPROVED with its transaction (carrying agentId), or FAILED with failureReason when payments refuses it (QUOTE_EXPIRED, INSUFFICIENT_FUNDS, ...; its usage is released). 409 ACTION_NOT_PENDING when it was decided already (approving twice, or an approve racing a reject, moves money at most once) or expired.',
        params: AgentActionParams,
        response: { 200: AgentAction, ...errorResponses(409) },
      },
    },
    async (request) => agentActionJson((await client.approveAction(decisionIds(request))).action!),
  );

  app.post(
    '/agents/:agentId/actions/:actionId/reject',
    {
      preValidation: optionalBody,
      schema: {
        tags: TAGS,
        operationId: 'rejectAgentAction',
        summary: 'Reject an agent action',
        description:
          'REJECTED with the reason; nothing moves and the action’s reserved usage is released. 409 ACTION_NOT_PENDING when it was decided already.',
        params: AgentActionParams,
        body: AgentActionRejectRequest,
        response: { 200: AgentAction, ...errorResponses(409) },
      },
    },
    async (request) => {
      const reason = request.body?.reason;
      const { action } = await client.rejectAction({
        ...decisionIds(request),
        ...(reason !== undefined ? { reason } : {}),
      });
      return agentActionJson(action!);
    },
  );

  // No credentials: the device code is the proof (failures are counted per code and per client address).
  app.get(
    '/agents/device-codes/:code/status',
    {
      config: { auth: 'none' },
      schema: {
        tags: TAGS,
        operationId: 'getAgentDeviceCodeStatus',
        summary: 'Get a device code’s status',
        description:
          'Whether the code was redeemed; needs no credentials. 404 DEVICE_CODE_NOT_FOUND; 429 TOO_MANY_ATTEMPTS after AGENT_DEVICE_CODE_MAX_FAILURES failed attempts from one address or on one code within the window (docs/agents.md).',
        params: DeviceCodeParams,
        response: { 200: AgentDeviceCodeStatusResponse, ...errorResponses(429) },
      },
    },
    async (request) => client.getDeviceCodeStatus({ code: request.params.code, source: request.ip }),
  );

  app.post(
    '/agents/device-codes/:code/redeem',
    {
      config: { auth: 'none' },
      schema: {
        tags: TAGS,
        operationId: 'redeemAgentDeviceCode',
        summary: 'Redeem a device code',
        description:
          'Called by the agent software, without credentials: the agent’s access token, returned only here (send it as Authorization: Bearer on /agents/me...). A code redeems once (400 DEVICE_CODE_ALREADY_REDEEMED), expires after AGENT_DEVICE_CODE_TTL_SECONDS or when a newer code is issued (400 DEVICE_CODE_EXPIRED); 404 DEVICE_CODE_NOT_FOUND; 429 TOO_MANY_ATTEMPTS.',
        params: DeviceCodeParams,
        response: { 200: AgentDeviceCodeRedeemResponse, ...errorResponses(429) },
      },
    },
    async (request) => {
      const r = await client.redeemDeviceCode({ code: request.params.code, source: request.ip });
      return {
        agentId: r.agentId,
        agentName: r.agentName,
        accessToken: r.accessToken,
        policy: agentPolicyJson(r.policy!),
      };
    },
  );
};

export default agentsRoutes;
