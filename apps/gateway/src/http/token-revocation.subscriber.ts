import type { NatsConnection } from '@nats-io/transport-node';
import { EVENTS } from '@sluice/api';
import { contractCheck, subjectFor, type EventEnvelope } from '@sluice/events';
import type { Logger } from '@sluice/logging';
import type { CredentialCache } from './credential.cache.js';

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
  const contract = EVENTS.TOKEN_DELETED;
  const subject = subjectFor(prefix, contract.owner, contract.type);
  const sub = nc.subscribe(subject, {
    callback: (err, msg) => {
      if (err) {
        logger.warn({ err }, 'token revocation subscription error; clearing the credential cache');
        cache.clear();
        return;
      }
      try {
        const event = msg.json<EventEnvelope<unknown>>();
        const problem = contractCheck(contract).firstError(event.data);
        if (problem) throw new Error(`TOKEN.DELETED breaks its contract: ${problem}`);
        const { tokenId } = event.data as { tokenId: string };
        cache.revoke(tokenId);
        logger.info(
          { tokenId, eventId: event.id },
          'API token revoked; dropped from the credential cache',
        );
      } catch (e) {
        logger.warn(
          { err: e, subject: msg.subject },
          'undecodable TOKEN.DELETED event; clearing the credential cache',
        );
        cache.clear();
      }
    },
  });
  const status = nc.status();
  void (async () => {
    for await (const s of status) {
      if (s.type === 'disconnect' || s.type === 'reconnecting' || s.type === 'staleConnection')
        cache.setEnabled(false);
      else if (s.type === 'reconnect') cache.setEnabled(true);
    }
  })();
  return {
    subject,
    close() {
      (status as { stop?: () => void }).stop?.();
      sub.unsubscribe();
    },
  };
}
