import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { withContext, type Logger } from '@sluice/logging';
import { endSpan, extractTraceContext, SpanKind, startSpan, withSpan } from '@sluice/tracing';
import type { Counter, Histogram, Metrics } from '@sluice/metrics';
import type { EventContract, EventData } from '@sluice/api';
import type { Bus } from './nats.js';
import type { EventEnvelope } from './envelope.js';
import { contractCheck } from './contract-check.js';

/** What a consumer does with one event type: the contract it expects and its handler. */
export interface EventHandler<C extends EventContract = EventContract> {
  contract: C;
  /** Runs inside the transaction that records the event in the inbox; `data` satisfies the contract. */
  handle(em: EntityManager, data: EventData<C>, event: EventEnvelope<EventData<C>>): Promise<void>;
}

/** A typed handler of one event contract. */
export function on<C extends EventContract>(
  contract: C,
  handle: (em: EntityManager, data: EventData<C>, event: EventEnvelope<EventData<C>>) => Promise<void>,
): EventHandler {
  return { contract, handle } as unknown as EventHandler;
}

export interface ConsumerOptions {
  bus: Bus;
  orm: MikroORM;
  logger: Logger;
  stream: string;
  /** Durable name, shared by every replica of the consuming service. */
  durable: string;
  filterSubjects: string[];
  /**
   * The event types this consumer handles, each with its contract. An event is
   * handled inside a transaction that also records its id in the inbox; a
   * redelivered event whose id is already there is acked without calling the
   * handler again. Events of other types on the filtered subjects are acked
   * untouched; an event whose data breaks its contract is dead-lettered
   * (terminated, logged), never cast.
   */
  handlers: EventHandler[];
  /**
   * Events of a type without a handler: run in the inbox transaction like a
   * handler (a relay such as the webhook-dispatcher forwards them untouched);
   * without it they are acked untouched.
   */
  others?: (em: EntityManager, event: EventEnvelope<unknown>) => Promise<void>;
  /**
   * Asked before `others` opens its inbox transaction: `true` means this consumer knows it has
   * nothing to do for the event (a relay's event of no interest), so it is acked and counted
   * `ignored` without touching the database. Must be safe to answer again for a redelivery.
   */
  skipOthers?: (event: EventEnvelope<unknown>) => boolean | Promise<boolean>;
  /** Deliveries before an event is given up (terminated and logged). Default 50. */
  maxDeliver?: number;
}

function filterConfig(subjects: string[]): { filter_subject: string } | { filter_subjects: string[] } {
  return subjects.length === 1 ? { filter_subject: subjects[0]! } : { filter_subjects: subjects };
}

/**
 * A durable JetStream pull consumer with explicit acks and an inbox for
 * idempotent handling (delivery is at least once).
 */
/** What a consumer measures (see `consumerMetrics`). */
interface ConsumerMetrics {
  deliveries: Counter<'consumer' | 'event_type' | 'outcome'>;
  redeliveries: Counter<'consumer'>;
  seconds: Histogram<'consumer'>;
}

/** The started consumers of each app's metrics, whose backlog is read when scraped. */
const observed = new WeakMap<Metrics, Set<EventConsumer>>();

/**
 * Counts deliveries by outcome (`handled`, `duplicate`: already in the inbox,
 * `ignored`: a type it does not handle, `failed`: nak'd for redelivery,
 * `dead_lettered`: terminated), redeliveries and handling time; and, when
 * scraped, reads each durable consumer's backlog from JetStream (one durable is
 * shared by the replicas, which all report it: aggregate with max, not sum).
 */
function consumerMetrics(metrics: Metrics, consumer: EventConsumer, logger: Logger): ConsumerMetrics {
  let consumers = observed.get(metrics);
  if (!consumers) {
    const all = new Set<EventConsumer>();
    consumers = all;
    observed.set(metrics, all);
    const labelNames = ['consumer', 'stream'] as const;
    const onError = (err: unknown) => logger.warn({ err }, 'consumer backlog not measured');
    const backlog = (name: string, help: string, field: 'num_pending' | 'num_ack_pending') =>
      metrics.scrapedGauge(
        { name, help, labelNames },
        async (g) => {
          for (const c of all) {
            const info = await c.backlog();
            g.set({ consumer: info.durable, stream: info.stream }, info[field]);
          }
        },
        onError,
      );
    backlog('events_consumer_pending_messages', 'Events in the stream not yet delivered to the durable consumer', 'num_pending');
    backlog(
      'events_consumer_ack_pending_messages',
      'Events delivered and not yet acknowledged (being handled, or failed and awaiting redelivery)',
      'num_ack_pending',
    );
  }
  consumers.add(consumer);
  return {
    deliveries: metrics.counter({
      name: 'events_consumer_deliveries_total',
      help: 'Event deliveries a consumer processed, by outcome',
      labelNames: ['consumer', 'event_type', 'outcome'],
    }),
    redeliveries: metrics.counter({
      name: 'events_consumer_redeliveries_total',
      help: 'Deliveries of an event that was delivered before (an earlier attempt failed or timed out)',
      labelNames: ['consumer'],
    }),
    seconds: metrics.histogram({
      name: 'events_consumer_handling_seconds',
      help: 'Time to handle one event, the inbox transaction included',
      labelNames: ['consumer'],
    }),
  };
}

export class EventConsumer {
  private stopped = false;
  private metrics: ConsumerMetrics | undefined;
  private observedBy: Metrics | undefined;
  private messages: { stop(): void; close(): Promise<void | Error> } | undefined;
  private loop: Promise<void> | undefined;

  private readonly handlers: ReadonlyMap<string, EventHandler>;

  constructor(private readonly o: ConsumerOptions) {
    this.handlers = new Map(o.handlers.map((h) => [h.contract.type, h]));
  }

  /** Starts consuming; with `metrics`, counts what it does (see consumerMetrics). */
  async start(opts: { metrics?: Metrics } = {}): Promise<void> {
    if (opts.metrics) {
      this.metrics = consumerMetrics(opts.metrics, this, this.o.logger);
      this.observedBy = opts.metrics;
    }
    const { jsm, js } = this.o.bus;
    const config = {
      durable_name: this.o.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      // One subject uses filter_subject, which servers before 2.10 understand too.
      ...filterConfig(this.o.filterSubjects),
      ack_wait: nanos(30_000),
      max_deliver: this.o.maxDeliver ?? 50,
      backoff: [1, 2, 5, 10, 30, 60].map((s) => nanos(s * 1000)),
    };
    try {
      await jsm.consumers.info(this.o.stream, this.o.durable);
      await jsm.consumers.update(this.o.stream, this.o.durable, {
        ...filterConfig(this.o.filterSubjects),
        ack_wait: config.ack_wait,
        max_deliver: config.max_deliver,
        backoff: config.backoff,
      });
    } catch (e) {
      if (String((e as Error).message).includes('not found')) await jsm.consumers.add(this.o.stream, config);
      else throw e;
    }
    const consumer = await js.consumers.get(this.o.stream, this.o.durable);
    const messages = await consumer.consume({ max_messages: 64 });
    this.messages = messages;
    this.loop = (async () => {
      for await (const m of messages) {
        await this.process(m);
        if (this.stopped) break;
      }
    })();
  }

  /** The durable consumer's backlog as JetStream reports it. */
  async backlog(): Promise<{ durable: string; stream: string; num_pending: number; num_ack_pending: number }> {
    const info = await this.o.bus.jsm.consumers.info(this.o.stream, this.o.durable);
    return { durable: this.o.durable, stream: this.o.stream, num_pending: info.num_pending, num_ack_pending: info.num_ack_pending };
  }

  private count(eventType: string, outcome: 'handled' | 'duplicate' | 'ignored' | 'failed' | 'dead_lettered'): void {
    this.metrics?.deliveries.inc({ consumer: this.o.durable, event_type: eventType, outcome });
  }

  private async process(m: JsMsg): Promise<void> {
    if (m.info.deliveryCount > 1) this.metrics?.redeliveries.inc({ consumer: this.o.durable });
    let event: EventEnvelope;
    try {
      event = m.json<EventEnvelope>();
    } catch (err) {
      this.o.logger.error({ err, subject: m.subject }, 'undecodable event; terminating it');
      m.term(); // no reason: NATS 2.9 servers ignore a +TERM that carries one
      this.count('undecodable', 'dead_lettered');
      return;
    }
    const handler = this.handlers.get(event.type);
    let handle: (em: EntityManager) => Promise<void>;
    if (handler) {
      const problem = contractCheck(handler.contract).firstError(event.data);
      if (problem) {
        this.o.logger.error(
          { eventId: event.id, type: event.type, subject: m.subject, problem },
          'event breaks its contract; dead-lettered (terminated)',
        );
        m.term(); // no reason: NATS 2.9 servers ignore a +TERM that carries one
        this.count(event.type, 'dead_lettered');
        return;
      }
      handle = (em) => handler.handle(em, event.data, event);
    } else if (this.o.others) {
      const others = this.o.others;
      let skip = false;
      try {
        skip = (await this.o.skipOthers?.(event)) ?? false;
      } catch (err) {
        // Not knowing is not a reason to skip: the inbox transaction decides.
        this.o.logger.warn({ err, eventId: event.id, type: event.type }, 'could not tell whether to skip an event');
      }
      if (skip) {
        m.ack();
        this.count(event.type, 'ignored');
        return;
      }
      handle = (em) => others(em, event);
    } else {
      m.ack(); // a type this consumer does not handle
      this.count(event.type, 'ignored');
      return;
    }
    // The producer's trace goes on (the relay's `traceparent` header): the handler runs in a consumer span.
    const span = startSpan(`process ${m.subject}`, {
      kind: SpanKind.CONSUMER,
      parent: extractTraceContext((key) => m.headers?.get(key) || undefined),
      attributes: {
        'messaging.system': 'nats',
        'messaging.operation.type': 'process',
        'messaging.destination.name': m.subject,
        'messaging.consumer.group.name': this.o.durable,
        'messaging.message.id': event.id,
      },
    });
    await withContext({ requestId: event.requestId, platformId: event.platformId, eventId: event.id }, () => withSpan(span, async () => {
      const stopTimer = this.metrics?.seconds.startTimer({ consumer: this.o.durable });
      try {
        const outcome = await transactional(this.o.orm, async (em) => {
          const inserted = await em.execute<{ event_id: string }[]>(
            `INSERT INTO inbox (consumer, event_id) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING event_id`,
            [this.o.durable, event.id],
          );
          if (inserted.length === 0) return 'duplicate' as const; // already handled
          await handle(em);
          return 'handled' as const;
        });
        m.ack();
        stopTimer?.();
        this.count(event.type, outcome);
        endSpan(span, undefined, { 'sluice.outcome': outcome });
      } catch (err) {
        stopTimer?.();
        endSpan(span, err);
        this.count(event.type, 'failed');
        const attempt = m.info.deliveryCount;
        this.o.logger.error({ err, type: event.type, attempt }, 'event handling failed; will be redelivered');
        m.nak(Math.min(60_000, 500 * 2 ** Math.min(attempt, 7)));
      }
    }));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.observedBy) observed.get(this.observedBy)?.delete(this);
    if (this.messages) await this.messages.close();
    await this.loop;
  }
}
