import type { EntityManager, MikroORM } from '@sluice/store';
import { Migration, writeAtCommit } from '@sluice/store';
import { newId } from '@sluice/core';
import { currentContext, type Logger } from '@sluice/logging';
import { contextOfTraceparent, currentTraceparent, endSpan, injectTraceContext, SpanKind, startSpan, withSpan } from '@sluice/tracing';
import type { Counter, Metrics } from '@sluice/metrics';
import { headers as natsHeaders } from '@nats-io/transport-node';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { EventContract, EventData } from '@sluice/api';
import { subjectFor, toJson, type Domain, type EventEnvelope } from './envelope.js';
import { contractCheck } from './contract-check.js';
import { notifyOnCommit, outboxChannel } from './notifications.js';
import { NotifiedLoop } from './notified-loop.js';

/** Creates the outbox and inbox tables in the service's schema. Include it in every service's migrations. */
export class EventTablesMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE TABLE IF NOT EXISTS outbox (
      seq bigserial PRIMARY KEY,
      id text NOT NULL UNIQUE,
      subject text NOT NULL,
      type text NOT NULL,
      platform_id text NOT NULL,
      envelope jsonb NOT NULL,
      occurred_at timestamptz NOT NULL,
      published_at timestamptz,
      attempts int NOT NULL DEFAULT 0
    )`);
    this.addSql(`CREATE INDEX IF NOT EXISTS outbox_unpublished ON outbox (seq) WHERE published_at IS NULL`);
    this.addSql(`CREATE TABLE IF NOT EXISTS inbox (
      consumer text NOT NULL,
      event_id text NOT NULL,
      handled_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (consumer, event_id)
    )`);
  }
}
const EVENT_TABLES_MIGRATION = { name: '0000_event_tables', class: EventTablesMigration };

/**
 * The W3C `traceparent` of the span that wrote an outbox row (NULL when tracing is off), so the relay
 * publishes the event with it as a header and its consumers continue the same trace. A migration of its
 * own, so databases created before it gain the column.
 */
class EventTraceMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`ALTER TABLE outbox ADD COLUMN IF NOT EXISTS traceparent text`);
  }
}

/**
 * Published rows are deleted after the retention (`OutboxRelay.prune`): this index finds them
 * without reading the table, and finds none as cheaply. Partial (published rows only), since the
 * unpublished ones have their own index. Built in the migrations' transaction: on an outbox that
 * grew for long before this release it reads the whole table once, and the service's writes wait
 * for it meanwhile (seconds per million rows).
 */
class EventPublishedIndexMigration extends Migration {
  override async up(): Promise<void> {
    this.addSql(`CREATE INDEX IF NOT EXISTS outbox_published ON outbox (published_at) WHERE published_at IS NOT NULL`);
  }
}

/** The migrations of the outbox and inbox tables, in order: put them first in every service's migrations. */
export const EVENT_TABLES_MIGRATIONS = [
  EVENT_TABLES_MIGRATION,
  { name: '0000_event_tables_trace', class: EventTraceMigration },
  { name: '0000_event_tables_published_index', class: EventPublishedIndexMigration },
];

/** Published outbox rows deleted per statement (one transaction each) when they are pruned. */
export const OUTBOX_PRUNE_BATCH = 1000;

/**
 * Writes events to the service's outbox table inside the caller's transaction,
 * so an event exists if and only if the change it describes was committed.
 */
export class Outbox {
  constructor(
    private readonly prefix: string,
    private readonly domain: Domain,
  ) {}

  /**
   * Writes one event of the catalogue. The contract must be one this service
   * owns, and the data must satisfy its schema: a producer that drifts from its
   * contract fails here, in its own transaction, rather than in every consumer.
   */
  async add<C extends EventContract>(
    em: EntityManager,
    contract: C,
    event: { platformId: string; data: EventData<C>; occurredAt?: Date },
  ): Promise<EventEnvelope<EventData<C>>> {
    if (contract.owner !== this.domain) {
      throw new Error(`${this.domain} does not own ${contract.type} (its owner is ${contract.owner})`);
    }
    const problem = contractCheck(contract).firstError(event.data);
    if (problem) throw new Error(`${contract.type} data breaks its contract: ${problem}`);
    const occurredAt = (event.occurredAt ?? new Date()).toISOString();
    const { requestId } = currentContext();
    const envelope: EventEnvelope<EventData<C>> = {
      id: newId('Event'),
      type: contract.type,
      occurredAt,
      platformId: event.platformId,
      ...(requestId ? { requestId } : {}),
      data: event.data,
    };
    // Nothing in the transaction reads its own outbox row: it is written in its COMMIT's round trip.
    await writeAtCommit(
      em,
      `INSERT INTO outbox (id, subject, type, platform_id, envelope, occurred_at, traceparent) VALUES (?, ?, ?, ?, ?::jsonb, ?, ?)`,
      [
        envelope.id,
        subjectFor(this.prefix, this.domain, contract.type),
        contract.type,
        event.platformId,
        toJson(envelope),
        occurredAt,
        currentTraceparent() ?? null,
      ],
    );
    // Wakes the relays of this schema when (and only if) the transaction commits.
    const schema = em.config.get('schema');
    if (schema) notifyOnCommit(em, outboxChannel(schema));
    return envelope;
  }
}

/**
 * Publishes committed outbox rows to JetStream, oldest first, with
 * `Nats-Msg-Id` = event id. It LISTENs on its schema's outbox channel (the
 * outbox notifies it on commit), so an idle service does not poll its table:
 * it looks when told, once on (re)connecting, and every `safetyMs` (10 s) in
 * case a notification was lost; without a LISTEN connection it polls every
 * `idleMs` (100 ms) as before. Rows are claimed with FOR UPDATE SKIP LOCKED, so
 * several relay replicas share the work without publishing the same row at
 * the same time; a relay that dies after publishing but before marking a row
 * leaves it to be published again with the same id, which JetStream drops
 * inside its duplicate window and consumers' inboxes absorb after it.
 *
 * Given a `retentionSeconds`, it also deletes published rows older than that (`prune`), every
 * `pruneEveryMs` (a minute) beside publishing, never in its way: a published row is of no use
 * to anyone once JetStream has it (consumers read the stream, which keeps events up to its own
 * max age), and it holds what the event carries (customers' personal fields, counterparty
 * information) in plain text. An unpublished row is never deleted, however old.
 */
export class OutboxRelay {
  private readonly loop: NotifiedLoop;
  private pruneTimer: NodeJS.Timeout | undefined;
  /** The prune pass in progress, if any (at most one per relay). */
  private pruning: Promise<unknown> | undefined;
  private stopped = false;
  private readonly pruned: Counter | undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly js: JetStreamClient,
    private readonly logger: Logger,
    private readonly opts: {
      batchSize?: number;
      /** Poll interval without a LISTEN connection. */
      idleMs?: number;
      /** Listen for the outbox's notifications (default true). */
      listen?: boolean;
      /** Poll interval while listening (a lost notification is found this late). */
      safetyMs?: number;
      /** Published rows older than this are deleted (`prune`); undefined: kept forever. */
      retentionSeconds?: number;
      /** How often `prune` runs while the relay runs (default 60 s; the first pass one interval after start). */
      pruneEveryMs?: number;
      /** Rows deleted per statement by `prune` (default OUTBOX_PRUNE_BATCH). */
      pruneBatch?: number;
      /** Where `outbox_pruned_events_total` is counted. */
      metrics?: Metrics;
    } = {},
  ) {
    this.pruned = opts.metrics?.counter({
      name: 'outbox_pruned_events_total',
      help: 'Published outbox events deleted after OUTBOX_RETENTION_SECONDS',
    });
    const schema = orm.config.get('schema');
    // Another pass at once only after a full batch (more rows may wait). After a partial one the rows
    // committed since its snapshot announce themselves (their commit nudges the loop, here or by
    // NOTIFY), so the confirming pass that would find nothing — a transaction per burst — is not run.
    const batchSize = opts.batchSize ?? 100;
    this.loop = new NotifiedLoop(async () => (await this.publishBatch()) >= batchSize, {
      orm,
      channel: outboxChannel(schema ?? 'public'),
      logger,
      listen: (opts.listen ?? true) && !!schema,
      safetyMs: opts.safetyMs ?? 10_000,
      fallbackMs: opts.idleMs ?? 100,
      onError: (err) => this.logger.error({ err }, 'outbox relay batch failed'),
    });
  }

  start(): void {
    this.stopped = false;
    this.loop.start();
    if (this.opts.retentionSeconds === undefined) return;
    this.pruneTimer = setInterval(() => {
      if (this.pruning) return;
      this.pruning = this.prune()
        .catch((err: unknown) => this.logger.error({ err }, 'outbox prune failed; will try again'))
        .finally(() => (this.pruning = undefined));
    }, this.opts.pruneEveryMs ?? 60_000);
    this.pruneTimer.unref();
  }

  /** True while it receives the outbox's notifications (and so does not poll). */
  get listening(): boolean {
    return this.loop.listening;
  }

  /** Asks the relay to look for new rows now instead of at its next poll. */
  nudge(): void {
    this.loop.nudge();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pruneTimer);
    this.pruneTimer = undefined;
    await this.pruning;
    await this.loop.stop();
  }

  /**
   * Deletes the rows published more than `retentionSeconds` ago (by the database's clock, which
   * set `published_at`), `pruneBatch` per statement, each its own transaction, until fewer are
   * left or the relay stops; returns how many. Only published rows: an unpublished one waits for
   * its publication whatever its age. Rows another replica is deleting are skipped (SKIP LOCKED),
   * so replicas pruning at once do not wait on each other. Nothing without a retention.
   */
  async prune(): Promise<number> {
    const retention = this.opts.retentionSeconds;
    if (retention === undefined) return 0;
    const batch = this.opts.pruneBatch ?? OUTBOX_PRUNE_BATCH;
    let total = 0;
    for (;;) {
      const res = await this.orm.em.fork().execute(
        `DELETE FROM outbox WHERE seq IN (
           SELECT seq FROM outbox WHERE published_at < now() - ?::integer * interval '1 second'
           LIMIT ? FOR UPDATE SKIP LOCKED)`,
        [retention, batch],
        'run',
      );
      const n = (res as { affectedRows?: number }).affectedRows ?? 0;
      total += n;
      if (n) this.pruned?.inc(n);
      if (n < batch || this.stopped) break;
    }
    if (total) this.logger.info({ deleted: total, retentionSeconds: retention }, 'published outbox events pruned');
    return total;
  }

  /** Publishes one batch; returns how many rows were published. */
  async publishBatch(): Promise<number> {
    const em = this.orm.em.fork();
    return em.transactional(async (tem) => {
      const rows = await tem.execute<{ seq: string; id: string; subject: string; envelope: unknown; traceparent: string | null }[]>(
        `SELECT seq, id, subject, envelope, traceparent FROM outbox WHERE published_at IS NULL ORDER BY seq LIMIT ? FOR UPDATE SKIP LOCKED`,
        [this.opts.batchSize ?? 100],
      );
      if (rows.length === 0) return 0;
      const done: string[] = [];
      for (const row of rows) {
        const envelope = typeof row.envelope === 'string' ? row.envelope : JSON.stringify(row.envelope);
        const h = natsHeaders();
        const parsed = JSON.parse(envelope) as EventEnvelope;
        if (parsed.requestId) h.set('Sluice-Request-Id', parsed.requestId);
        h.set('Sluice-Event-Type', parsed.type);
        // The trace of the request that wrote the event goes on: a producer span, whose context the
        // message carries as its `traceparent` header for the consumers.
        const parent = contextOfTraceparent(row.traceparent);
        const span =
          parent &&
          startSpan(`send ${row.subject}`, {
            kind: SpanKind.PRODUCER,
            parent,
            attributes: {
              'messaging.system': 'nats',
              'messaging.operation.type': 'send',
              'messaging.destination.name': row.subject,
              'messaging.message.id': row.id,
            },
          });
        withSpan(span, () => injectTraceContext((key, value) => h.set(key, value)));
        try {
          await this.js.publish(row.subject, envelope, { msgID: row.id, headers: h, timeout: 5000 });
          endSpan(span);
          done.push(row.seq);
        } catch (err) {
          endSpan(span, err);
          this.logger.warn({ err, eventId: row.id }, 'publish failed; will retry');
          await tem.execute(`UPDATE outbox SET attempts = attempts + 1 WHERE seq = ?`, [row.seq]);
          break; // keep order: do not publish later events before this one
        }
      }
      if (done.length) {
        await tem.execute(`UPDATE outbox SET published_at = now() WHERE seq = ANY(?::bigint[])`, [`{${done.join(',')}}`]);
      }
      return done.length;
    });
  }
}

/**
 * `outbox_oldest_unpublished_age_seconds`: how long the oldest event not yet
 * published to JetStream has waited (0 when none waits), read when scraped
 * with one query on the outbox's partial index of unpublished rows; the relay's
 * own loop does no extra work for it. A growing value means events (and the
 * webhooks they cause) are late: the relay is down, or NATS refuses them.
 */
export function observeOutbox(orm: MikroORM, metrics: Metrics, logger: Logger): void {
  metrics.scrapedGauge(
    {
      name: 'outbox_oldest_unpublished_age_seconds',
      help: 'Age of the oldest outbox event not yet published to JetStream (0 when none)',
    },
    async (g) => {
      const rows = await orm.em
        .fork()
        .execute<{ age: string | number | null }[]>(
          `SELECT extract(epoch FROM now() - occurred_at) AS age FROM outbox WHERE published_at IS NULL ORDER BY seq LIMIT 1`,
        );
      g.set(Math.max(0, Number(rows[0]?.age ?? 0)));
    },
    (err) => logger.warn({ err }, 'outbox lag not measured'),
  );
}
