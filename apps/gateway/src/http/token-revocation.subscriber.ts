import type { NatsConnection } from '@nats-io/transport-node';
import { EVENTS, type EventContract } from '@sluice/api';
import { contractCheck, subjectFor, type EventEnvelope } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { CredentialCache } from './credential.cache.js';

/** What drops cached credentials: a revocation contract and the cache key (token or agent id) in its data. */
interface Revocation {
  contract: EventContract;
  /** The data field holding the cache key (logged under its own name). */
  field: 'tokenId' | 'agentId';
  /** What the log line says was revoked. */
  what: string;
}

/**
 * Listens to identity's TOKEN.DELETED events (`<prefix>.identity.token.deleted`)
 * and drops the token from the credential cache at once.
 *
 * A plain NATS subscription, not a durable consumer: every gateway replica must
 * see every event (fan-out), and an event missed while disconnected does not
 * matter because the cache is switched off (and emptied) for as long as the
 * connection is down; entries live at most AUTH_CACHE_TTL_MS (≤ 5 s) anyway.
 */
export function subscribeTokenRevocations(
  nc: NatsConnection,
  prefix: string,
  cache: CredentialCache,
  logger: Logger,
): { subject: string; close(): void } {
  const [sub] = subscribeRevocations(nc, prefix, cache, logger, [
    { contract: EVENTS.TOKEN_DELETED, field: 'tokenId', what: 'API token revoked' },
  ]);
  return sub!;
}

/**
 * The same for agent bearer tokens: AGENT_TOKEN.REVOKED (agent deleted, or a new
 * device code redeemed) and AGENT.UPDATED (paused, resumed, another policy) drop
 * every cached token of the agent at once, on every replica.
 */
export function subscribeAgentRevocations(
  nc: NatsConnection,
  prefix: string,
  cache: CredentialCache<{ tokenId: string }>,
  logger: Logger,
): { subject: string; close(): void }[] {
  return subscribeRevocations(nc, prefix, cache, logger, [
    { contract: EVENTS.AGENT_TOKEN_REVOKED, field: 'agentId', what: 'agent token revoked' },
    { contract: EVENTS.AGENT_UPDATED, field: 'agentId', what: 'agent changed' },
  ]);
}

function subscribeRevocations(
  nc: NatsConnection,
  prefix: string,
  cache: CredentialCache<{ tokenId: string }>,
  logger: Logger,
  revocations: Revocation[],
): { subject: string; close(): void }[] {
  const subs = revocations.map(({ contract, field, what }) => {
    const subject = subjectFor(prefix, contract.owner, contract.type);
    return nc.subscribe(subject, {
      callback: (err, msg) => {
        if (err) {
          logger.warn({ err, subject }, 'credential revocation subscription error; clearing the credential cache');
          cache.clear();
          return;
        }
        try {
          const event = msg.json<EventEnvelope<unknown>>();
          const problem = contractCheck(contract).firstError(event.data);
          if (problem) throw new Error(`${contract.type} breaks its contract: ${problem}`);
          const key = (event.data as Record<string, string>)[field]!;
          cache.revoke(key);
          logger.info({ [field]: key, eventId: event.id }, `${what}; dropped from the credential cache`);
        } catch (e) {
          logger.warn({ err: e, subject: msg.subject }, 'undecodable revocation event; clearing the credential cache');
          cache.clear();
        }
      },
    });
  });
  const status = nc.status();
  void (async () => {
    for await (const s of status) {
      if (s.type === 'disconnect' || s.type === 'reconnecting' || s.type === 'staleConnection') cache.setEnabled(false);
      else if (s.type === 'reconnect') cache.setEnabled(true);
    }
  })();
  let statusOpen = true;
  return subs.map((sub, i) => ({
    subject: subjectFor(prefix, revocations[i]!.contract.owner, revocations[i]!.contract.type),
    close() {
      if (statusOpen) (status as { stop?: () => void }).stop?.();
      statusOpen = false;
      sub.unsubscribe();
    },
  }));
}
