import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { withContext, type Logger } from '@sluice/logging';
import type { Bus } from './nats.js';
import type { EventEnvelope } from './envelope.js';

export interface ConsumerOptions {
  bus: Bus;
  orm: MikroORM;
  logger: Logger;
  stream: string;
  /** Durable name, shared by every replica of the consuming service. */
  durable: string;
  filterSubjects: string[];
  /**
   * Handles one event inside a transaction that also records the event id in
   * the inbox; a redelivered event whose id is already there is acked without
   * calling the handler again.
   */
  handle: (em: EntityManager, event: EventEnvelope) => Promise<void>;
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
export class EventConsumer {
  private stopped = false;
  private messages: { stop(): void; close(): Promise<void | Error> } | undefined;
  private loop: Promise<void> | undefined;

  constructor(private readonly o: ConsumerOptions) {}

  async start(): Promise<void> {
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

  private async process(m: JsMsg): Promise<void> {
    let event: EventEnvelope;
    try {
      event = m.json<EventEnvelope>();
    } catch (err) {
      this.o.logger.error({ err, subject: m.subject }, 'undecodable event; terminating it');
      m.term('undecodable');
      return;
    }
    await withContext({ requestId: event.requestId, platformId: event.platformId, eventId: event.id }, async () => {
      try {
        await transactional(this.o.orm, async (em) => {
          const inserted = await em.execute<{ event_id: string }[]>(
            `INSERT INTO inbox (consumer, event_id) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING event_id`,
            [this.o.durable, event.id],
          );
          if (inserted.length === 0) return; // already handled
          await this.o.handle(em, event);
        });
        m.ack();
      } catch (err) {
        const attempt = m.info.deliveryCount;
        this.o.logger.error({ err, type: event.type, attempt }, 'event handling failed; will be redelivered');
        m.nak(Math.min(60_000, 500 * 2 ** Math.min(attempt, 7)));
      }
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.messages) await this.messages.close();
    await this.loop;
  }
}
