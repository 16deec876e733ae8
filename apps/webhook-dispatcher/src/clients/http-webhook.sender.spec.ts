import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { HttpWebhookSender } from './http-webhook.sender.js';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  url: string;
}

let server: Server;
let port: number;
let received: Received[] = [];
let respond: (req: IncomingMessage, res: ServerResponse) => void = (_q, s) => s.end('ok');

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        url: req.url ?? '',
      });
      respond(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  received = [];
  respond = (_q, s) => s.end('ok');
});

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const payload =
  '{"id":"Webhook:0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a5b","type":"TEST","timestamp":"2025-01-01T00:00:00.000Z","data":{}}';
const webhookId = 'Webhook:0190b2a4-1c2d-7e3f-8a9b-0c1d2e3f4a5b';

function sender(over: Partial<ConstructorParameters<typeof HttpWebhookSender>[0]> = {}) {
  return new HttpWebhookSender({
    timeoutMs: 2000,
    allowPrivateTargets: true,
    maxResponseBytes: 64,
    userAgent: 'Sluice-Webhooks/test',
    ...over,
  });
}

describe('WebhookSender', () => {
  it('POSTs the exact body, signed per Standard Webhooks, and reports a 2xx as delivered', async () => {
    respond = (_q, s) => s.writeHead(204).end();
    const r = await sender().send(`http://127.0.0.1:${port}/hooks?x=1`, [secret], webhookId, payload);
    expect(r).toMatchObject({ ok: true, status: 204, url: `http://127.0.0.1:${port}/hooks?x=1` });
    expect(received).toHaveLength(1);
    const got = received[0]!;
    expect(got.url).toBe('/hooks?x=1');
    expect(got.body).toBe(payload);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toBe('Sluice-Webhooks/test');
    expect(got.headers['webhook-id']).toBe(webhookId);
    expect(new Webhook(secret).verify(got.body, got.headers as Record<string, string>)).toEqual(
      JSON.parse(payload),
    );
  });

  it('reports non-2xx with its status and truncated body', async () => {
    respond = (_q, s) => s.writeHead(500).end('x'.repeat(10_000));
    const r = await sender().send(`http://127.0.0.1:${port}/`, [secret], webhookId, payload);
    expect(r.ok).toBe(false);
    expect(r.status).toBe(500);
    expect(r.error).toBe('endpoint answered HTTP 500');
    expect(r.body!.length).toBeLessThanOrEqual(64);
    expect(r.body!.length).toBeGreaterThan(0);
  });

  it('does not follow redirects', async () => {
    respond = (q, s) => (q.url === '/moved' ? s.writeHead(302, { location: '/target' }).end() : s.end('ok'));
    const r = await sender().send(`http://127.0.0.1:${port}/moved`, [secret], webhookId, payload);
    expect(r.ok).toBe(false);
    expect(r.status).toBe(302);
    expect(received.map((x) => x.url)).toEqual(['/moved']);
  });

  it('times out a hanging endpoint: hangs up on it and reports the attempt with the whole wait', async () => {
    let hungUp!: () => void;
    const cut = new Promise<void>((r) => (hungUp = r));
    respond = (_q, s) => s.on('close', () => hungUp()); // never answers; notes when the sender hangs up
    const r = await sender({ timeoutMs: 300 }).send(
      `http://127.0.0.1:${port}/`,
      [secret],
      webhookId,
      payload,
    );
    expect(r.ok).toBe(false);
    expect(r.status).toBeUndefined();
    expect(r.error).toBe('timed out after 300 ms');
    // The duration covers the wait up to the timeout (a timer never fires early; the duration is rounded
    // to whole ms); how far past it a loaded machine lets the attempt run is not a property of the sender.
    expect(r.durationMs).toBeGreaterThanOrEqual(300 - 1);
    // The request was aborted, not left open on the endpoint.
    await cut;
  });

  it('reports a connection failure', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const r = await sender().send(`http://127.0.0.1:${deadPort}/`, [secret], webhookId, payload);
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/network error: ECONNREFUSED/);
  });

  describe('SSRF guard (private targets not allowed)', () => {
    it.each([
      [`http://127.0.0.1:PORT/`, 'loopback'],
      [`http://[::1]:PORT/`, 'loopback'],
      [`http://[::ffff:127.0.0.1]:PORT/`, 'IPv4-mapped loopback'],
      [`http://0x7f.1:PORT/`, 'loopback'],
      [`http://2130706433:PORT/`, 'loopback'],
      [`http://[0:0:0:0:0:ffff:7f00:1]:PORT/`, 'IPv4-mapped loopback'],
      [`http://[fd00:ec2::254]/`, 'unique-local'],
      [`http://localhost:PORT/`, 'loopback'],
      [`http://169.254.169.254/latest/meta-data`, 'link-local'],
    ])('refuses %s without connecting', async (url, reason) => {
      const r = await sender({ allowPrivateTargets: false }).send(
        url.replace('PORT', String(port)),
        [secret],
        webhookId,
        payload,
      );
      expect(r.ok).toBe(false);
      expect(r.status).toBeUndefined();
      expect(r.error).toMatch(/^target refused: /);
      expect(r.error).toContain(reason);
      expect(received).toHaveLength(0);
    });

    it('refuses a name when any of its addresses is private', async () => {
      const s = sender({
        allowPrivateTargets: false,
        resolve: async () => [
          { address: '93.184.216.34', family: 4 },
          { address: '10.0.0.7', family: 4 },
        ],
      });
      const r = await s.send('https://hooks.example.test/x', [secret], webhookId, payload);
      expect(r.error).toBe(
        'target refused: hooks.example.test resolves to 10.0.0.7 (private address); webhooks are only sent to public addresses',
      );
    });

    it('refuses non-http schemes', async () => {
      const r = await sender({ allowPrivateTargets: false }).send(
        'file:///etc/passwd',
        [secret],
        webhookId,
        payload,
      );
      expect(r.error).toMatch(/scheme file is not allowed/);
    });
  });

  it('connects to the address it checked (no second DNS lookup to rebind)', async () => {
    let lookups = 0;
    const s = sender({
      resolve: async () => {
        lookups++;
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    // The name does not exist in DNS: only the pinned address can reach the receiver.
    const r = await s.send(`http://rebind.invalid:${port}/pinned`, [secret], webhookId, payload);
    expect(r).toMatchObject({ ok: true, status: 200 });
    expect(lookups).toBe(1);
    expect(received[0]!.headers.host).toBe(`rebind.invalid:${port}`);
  });
});
