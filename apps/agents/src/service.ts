import { Type } from '@sluice/config';
import { implement } from '@sluice/rpc';
import { agents } from '@sluice/contracts';
import { defineService } from '@sluice/runtime';
import { migrations } from './store/migrations.js';

const config = Type.Object({});

/** The agents service: agents, policies, device codes, agent tokens and agent actions. Later issues add its API; today it serves health. */
export const agentsService = defineService({
  name: 'agents',
  schema: 'agents',
  domain: 'agents',
  config,
  migrations,
  compose: ({ logger }) => ({
    rpc: [implement<agents.AgentsServiceServer>(agents.AgentsServiceService, {}, logger, 'sluice.agents.v1.AgentsService')],
  }),
});
