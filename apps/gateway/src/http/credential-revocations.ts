import type { NatsConnection } from '@nats-io/transport-node';
import { EVENTS } from '@sluice/api';
import { EventFanout, onEach } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { Worker } from '@sluice/runtime';
import type { CredentialCache } from './credential.cache.js';

/**
 * What keeps the gateway's credential caches honest on every replica: one `EventFanout` (a core
 * NATS subscription per replica, libs/events/src/fanout.ts) of
 *
 * - identity's TOKEN.DELETED (`<prefix>.identity.token.deleted`), which drops the token from the
 *   API-token cache (`revoke`: a verification in flight then is not cached either);
 * - agents' AGENT_TOKEN.REVOKED (agent deleted, or a new device code redeemed) and AGENT.UPDATED
 *   (paused, resumed, another policy), which drop every cached token of the agent.
 *
 * The caches are used only while the fan-out is live: off (and empty) from the start until the
 * server confirmed the subscription, and again while NATS is disconnected, stale or being
 * reconnected, or the fan-out is stopped; emptied each time events may have been missed or one was
 * not understood (`onGap`). Both caches follow one subscription: they hear the same connection, so
 * they are live together. An entry lives at most AUTH_CACHE_TTL_MS (≤ 5 s) anyway, for an event
 * its publisher could not send or a connection dead without the client knowing yet.
 *
 * Started and stopped with the gateway (compose.ts: the app's onReady and onClose).
 */
export function credentialRevocations(
  caches: { api: CredentialCache; agent: CredentialCache<{ tokenId: string }> },
  o: { nc: NatsConnection; prefix: string; logger: Logger },
): { fanout: EventFanout; worker: Worker } {
  const { api, agent } = caches;
  const { logger } = o;
  // Nothing is trusted before the fan-out is live.
  for (const cache of [api, agent]) cache.setEnabled(false);
  const dropAgent = (what: string) => (d: { agentId: string }, e: { id: string }) => {
    agent.revoke(d.agentId);
    logger.info({ agentId: d.agentId, eventId: e.id }, `${what}; dropped from the credential cache`);
  };
  const fanout: EventFanout = new EventFanout({
    nc: o.nc,
    prefix: o.prefix,
    name: 'gateway credential revocations',
    logger,
    handlers: [
      onEach(EVENTS.TOKEN_DELETED, (d, e) => {
        api.revoke(d.tokenId);
        logger.info({ tokenId: d.tokenId, eventId: e.id }, 'API token revoked; dropped from the credential cache');
      }),
      onEach(EVENTS.AGENT_TOKEN_REVOKED, dropAgent('agent token revoked')),
      onEach(EVENTS.AGENT_UPDATED, dropAgent('agent changed')),
    ],
    onGap: () => {
      for (const cache of [api, agent]) {
        cache.clear();
        cache.setEnabled(fanout.live);
      }
    },
  });
  return { fanout, worker: { start: () => fanout.start(), stop: () => fanout.stop() } };
}
