import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { Logger } from '@sluice/logging';
import { DOMAINS, streamName, type Domain } from './envelope.js';

export interface Bus {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  close(): Promise<void>;
}

/** Connects to NATS (reconnecting forever) and opens JetStream. */
export async function connectBus(url: string, name: string, logger?: Logger): Promise<Bus> {
  const nc = await connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 500, timeout: 5000 });
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') logger?.warn({ nats: s.type }, 'NATS status');
    }
  })();
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  return {
    nc,
    js,
    jsm,
    async close() {
      await nc.drain();
    },
  };
}

/**
 * Creates (or updates) one stream per domain. Idempotent; run by `npm start`
 * and by each service at start so a fresh cluster works.
 * duplicate_window is the deduplication horizon for relay retries (Nats-Msg-Id).
 */
export async function ensureStreams(jsm: JetStreamManager, prefix: string, domains: readonly Domain[] = DOMAINS): Promise<void> {
  for (const d of domains) {
    const name = streamName(prefix, d);
    const config = {
      name,
      subjects: [`${prefix}.${d}.>`],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      duplicate_window: nanos(10 * 60 * 1000),
      max_age: nanos(14 * 24 * 3600 * 1000),
    };
    try {
      await jsm.streams.info(name);
      await jsm.streams.update(name, config);
    } catch (e) {
      if (String((e as Error).message).includes('not found')) await jsm.streams.add(config);
      else throw e;
    }
  }
}
