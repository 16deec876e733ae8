import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { EventContract, EventData } from '@sluice/api';
import type { Logger } from '@sluice/logging';
import { contractCheck } from './contract-check.js';
import { subjectFor, type EventEnvelope } from './envelope.js';

/** What a fan-out subscriber does with one event type: the contract it expects and its handler. */
export interface FanoutHandler<C extends EventContract = EventContract> {
  contract: C;
  /** Called for each event of the type; `data` satisfies the contract. Synchronous: it only adjusts memory. */
  handle(data: EventData<C>, event: EventEnvelope<EventData<C>>): void;
}

/** A typed fan-out handler of one event contract. */
export function onEach<C extends EventContract>(
  contract: C,
  handle: (data: EventData<C>, event: EventEnvelope<EventData<C>>) => void,
): FanoutHandler {
  return { contract, handle } as unknown as FanoutHandler;
}

export interface EventFanoutOptions {
  /** The process's NATS connection (the service's bus). */
  nc: NatsConnection;
  /** EVENT_SUBJECT_PREFIX: the subjects are `subjectFor(prefix, owner, type)`, those identity's outbox publishes to its stream. */
  prefix: string;
  handlers: FanoutHandler[];
  logger: Logger;
  /** Names the subscriber in its log lines. */
  name: string;
  /**
   * Called whenever events may have been missed or were not understood — the subscription became
   * live (at start, and again after a reconnection: what was published meanwhile did not come),
   * stopped being live (stopped, connection lost), an event could not be read or handled — so the
   * owner forgets everything it kept on the strength of the events.
   */
  onGap: () => void;
}

/**
 * A per-replica subscription to some event types: every process that starts one sees every event
 * of those types (a core NATS subscription on their subjects, which JetStream publishes reach
 * too), unlike an `EventConsumer`, whose durable consumer hands each event to one replica of the
 * service. What it carries is for invalidating what a process keeps in memory; it is not durable
 * (no acks, no redelivery, nothing while disconnected), so an owner trusts what it kept only
 * while `live` and forgets everything on each `onGap`:
 *
 * - `live` becomes true once the server confirmed the subscription (a flush after the SUB, and
 *   again after each reconnection, on which the client subscribes anew) and false as soon as the
 *   connection is lost, stale or being re-established, or the subscription is stopped or refused;
 * - every change of `live`, and every event it could not read (undecodable, breaking its
 *   contract) or whose handler threw, calls `onGap`.
 *
 * What is left is the time an event takes from its publisher's commit to this process (the
 * publisher's outbox relay, then NATS), and a connection that died without the client noticing
 * yet (until its stale-connection check): owners bound that with a maximum age of what they keep.
 */
export class EventFanout {
  private subs: Subscription[] = [];
  private status: (AsyncIterable<unknown> & { stop?: () => void }) | undefined;
  private _live = false;
  /** Moves on every change (so a confirmation that completes after a later loss does not count). */
  private epoch = 0;
  /** A subscription the server refused (permissions): not live again until restarted. */
  private refused = false;
  private _timesLive = 0;
  private readonly handlers: ReadonlyMap<string, FanoutHandler>;

  constructor(private readonly o: EventFanoutOptions) {
    this.handlers = new Map(o.handlers.map((h) => [h.contract.type, h]));
  }

  /** Whether events of the types reach this process now. */
  get live(): boolean {
    return this._live;
  }

  /** How many times the subscription became live (1 after start, one more after each reconnection). */
  get timesLive(): number {
    return this._timesLive;
  }

  /** Subscribes; resolves once live (or, if the connection is down, at once: it becomes live when it is back). */
  async start(): Promise<void> {
    if (this.subs.length) return;
    this.refused = false;
    const { nc } = this.o;
    const status = nc.status() as AsyncIterable<{ type: string }> & { stop?: () => void };
    this.status = status;
    void (async () => {
      for await (const s of status) {
        if (s.type === 'reconnect') void this.confirm();
        else if (['disconnect', 'reconnecting', 'staleConnection', 'forceReconnect', 'close'].includes(s.type))
          this.down(`NATS ${s.type}`);
      }
    })();
    this.subs = [...this.handlers.values()].map((h) => {
      const subject = subjectFor(this.o.prefix, h.contract.owner, h.contract.type);
      return nc.subscribe(subject, { callback: (err, msg) => this.receive(subject, err, msg) });
    });
    await this.confirm();
  }

  /** Unsubscribes; not live from now on. */
  async stop(): Promise<void> {
    this.status?.stop?.();
    this.status = undefined;
    for (const s of this.subs.splice(0)) s.unsubscribe();
    this.down('stopped');
  }

  /** Live once the server has seen the subscriptions: a PING after the SUBs, answered. */
  private async confirm(): Promise<void> {
    const epoch = ++this.epoch;
    try {
      await this.o.nc.flush();
    } catch {
      return; // lost again meanwhile: the next reconnection confirms
    }
    if (epoch !== this.epoch || this.refused || this.subs.length === 0 || this.o.nc.isClosed()) return;
    this._live = true;
    this._timesLive++;
    this.o.logger.info({ subscriber: this.o.name }, 'event fan-out live');
    this.o.onGap();
  }

  private down(why: string): void {
    this.epoch++;
    const was = this._live;
    this._live = false;
    if (was) this.o.logger.warn({ subscriber: this.o.name, why }, 'event fan-out not live; what it kept is forgotten');
    this.o.onGap();
  }

  private receive(subject: string, err: Error | null, msg: Msg): void {
    if (err) {
      this.refused = true;
      this.o.logger.error({ err, subject, subscriber: this.o.name }, 'event fan-out subscription refused');
      this.down('subscription refused');
      return;
    }
    try {
      const event = msg.json<EventEnvelope<unknown>>();
      const handler = this.handlers.get(event.type);
      if (!handler) return; // another type on the subject (none today: one subject per type)
      const problem = contractCheck(handler.contract).firstError(event.data);
      if (problem) throw new Error(`${event.type} breaks its contract: ${problem}`);
      handler.handle(event.data as never, event as never);
    } catch (e) {
      this.o.logger.warn({ err: e, subject, subscriber: this.o.name }, 'event not understood; what was kept is forgotten');
      this.o.onGap();
    }
  }
}
