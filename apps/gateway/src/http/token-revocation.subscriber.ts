import type { NatsConnection } from '@nats-io/transport-node';
import { subjectFor, type EventEnvelope } from '@sluice/events';
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
  const subject = subjectFor(prefix, 'identity', 'TOKEN.DELETED');
  const sub = nc.subscribe(subject, {
    callback: (err, msg) => {
      if (err) {
        logger.warn({ err }, 'token revocation subscription error; clearing the credential cache');
        cache.clear();
        return;
      }
      try {
        const event = msg.json<EventEnvelope<{ tokenId?: unknown }>>();
        if (typeof event.data?.tokenId !== 'string') throw new Error('event without data.tokenId');
        cache.revoke(event.data.tokenId);
        logger.info(
          { tokenId: event.data.tokenId, eventId: event.id },
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
