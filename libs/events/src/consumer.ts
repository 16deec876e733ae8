import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { transactional, type EntityManager, type MikroORM } from '@sluice/store';
import { withContext, type Logger } from '@sluice/logging';
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

  private readonly handlers: ReadonlyMap<string, EventHandler>;

  constructor(private readonly o: ConsumerOptions) {
    this.handlers = new Map(o.handlers.map((h) => [h.contract.type, h]));
  }

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
      m.term(); // no reason: NATS 2.9 servers ignore a +TERM that carries one
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
        return;
      }
      handle = (em) => handler.handle(em, event.data, event);
    } else if (this.o.others) {
      const others = this.o.others;
      handle = (em) => others(em, event);
    } else {
      m.ack(); // a type this consumer does not handle
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
          await handle(em);
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
