import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import {
  Server as GrpcServer,
  ServerCredentials,
  status,
  type sendUnaryData,
  type ServerUnaryCall,
} from '@grpc/grpc-js';
import { common, identity } from '@sluice/contracts';
import { newId } from '@sluice/core';
import { connectBus, subjectFor, type Bus, type Domain, type EventEnvelope } from '@sluice/events';

/** A `whsec_` secret like identity issues. */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

/**
 * A real HTTP receiver on 127.0.0.1. Each test uses its own path; `behave`
 * decides the answer per path (default 200 "ok").
 */
export class Receiver {
  readonly requests: Received[] = [];
  private behaviours = new Map<string, (req: Received, n: number, res: ServerResponse) => void>();
  private server!: Server;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const r: Received = {
          path,
          headers: req.headers as Record<string, string>,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        this.requests.push(r);
        const n = this.requests.filter((x) => x.path === path).length;
        const b = this.behaviours.get(path);
        if (b) b(r, n, res);
        else res.end('ok');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  behave(path: string, fn: (req: Received, n: number, res: ServerResponse) => void): void {
    this.behaviours.set(path, fn);
  }

  at(path: string): Received[] {
    return this.requests.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/**
 * A test double of identity serving only GetWebhookTarget (the end-to-end
 * suite runs the real identity service). Other methods answer UNIMPLEMENTED.
 */
export class FakeIdentity {
  readonly targets = new Map<string, { endpoint?: string; secrets: string[] }>();
  /** Calls per platform that fail with UNAVAILABLE before it answers. */
  readonly failures = new Map<string, number>();
  calls = 0;
  private server = new GrpcServer();
  port = 0;

  async start(): Promise<void> {
    const getWebhookTarget = (
      call: ServerUnaryCall<identity.GetWebhookTargetRequest, identity.GetWebhookTargetResponse>,
      cb: sendUnaryData<identity.GetWebhookTargetResponse>,
    ) => {
      this.calls++;
      const id = call.request.platformId;
      const fails = this.failures.get(id) ?? 0;
      if (fails > 0) {
        this.failures.set(id, fails - 1);
        cb({ code: status.UNAVAILABLE, details: 'identity is restarting' }, null);
        return;
      }
      const t = this.targets.get(id);
      if (!t) {
        cb({ code: status.NOT_FOUND, details: 'Platform not found' }, null);
        return;
      }
      cb(null, {
        signingSecrets: t.secrets,
        environment: common.Environment.SANDBOX,
        ...(t.endpoint ? { webhookEndpoint: t.endpoint } : {}),
      });
    };
    this.server.addService(identity.IdentityServiceService, { getWebhookTarget });
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
  }

  /** Registers a platform with an endpoint (or none) and returns its id and secrets. */
  /** A platform (a new one, or `id` changed) with this endpoint and these secrets. */
  platform(
    endpoint: string | undefined,
    secrets = [newSecret()],
    id = newId('Platform'),
  ): { id: string; secrets: string[] } {
    this.targets.set(id, { ...(endpoint ? { endpoint } : {}), secrets });
    return { id, secrets };
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
  }
}

/** Publishes event envelopes straight to JetStream, as another service's outbox relay would. */
export class Publisher {
  private constructor(
    private readonly bus: Bus,
    private readonly prefix: string,
  ) {}

  static async connect(url: string, prefix: string): Promise<Publisher> {
    return new Publisher(await connectBus(url, 'webhook-dispatcher-test'), prefix);
  }

  envelope(type: string, platformId: string, data: Record<string, unknown>): EventEnvelope {
    return { id: newId('Event'), type, occurredAt: new Date().toISOString(), platformId, data };
  }

  /** Publishes; `msgId` defaults to the event id (a different one makes JetStream keep a second copy). */
  async publish(domain: Domain, ev: EventEnvelope, msgId = ev.id): Promise<void> {
    await this.bus.js.publish(subjectFor(this.prefix, domain, ev.type), JSON.stringify(ev), { msgID: msgId });
  }

  async close(): Promise<void> {
    await this.bus.close();
  }
}

/** A public InternalAccount as the accounts service puts it in INTERNAL_ACCOUNT.BALANCE_UPDATED. */
export function balanceUpdated(amount: number): Record<string, unknown> {
  return {
    id: newId('InternalAccount'),
    customerId: newId('Customer'),
    type: 'INTERNAL_FIAT',
    balance: { amount, currency: { code: 'USD', name: 'United States Dollar', symbol: '$', decimals: 2 } },
    fundingPaymentInstructions: [],
    createdAt: '2025-10-13T10:00:00.000Z',
    updatedAt: new Date().toISOString(),
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
