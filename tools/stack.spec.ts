import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { Writable } from 'node:stream';
import { Server as GrpcServer, ServerCredentials } from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, dropStreams, natsUrl, testPrefix, type TestDatabase } from '@sluice/testing';
import { checkGrpcHealth } from './lib/health.js';
import { listenerOf } from './lib/ports.js';
import { startStack, type AppName, type Stack } from './stack.js';

/**
 * The stack chooses free ports with `pickFreePort`; a test can queue "thieves" that take
 * the next chosen ports right after they are chosen (before any app can bind them), the
 * race another process on a busy machine wins now and then.
 */
const thieves = vi.hoisted(() => ({ queue: [] as ((port: number) => Promise<void>)[] }));
vi.mock('./lib/ports.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('./lib/ports.js')>();
  return {
    ...real,
    pickFreePort: async (host?: string, avoid?: ReadonlySet<number>) => {
      const port = await real.pickFreePort(host, avoid);
      await thieves.queue.shift()?.(port);
      return port;
    },
  };
});

// Two skeleton services are enough to exercise the supervisor: migrations, ports,
// readiness, prefixed logs, an unexpected exit stopping the rest, and stop().
describe('startStack', () => {
  let db: TestDatabase;
  let nats: string;
  const prefix = testPrefix('stack');
  let stack: Stack | undefined;

  beforeAll(async () => {
    db = await createTestDatabase('stack');
    nats = await natsUrl();
  });

  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
    if (nats) await dropStreams(nats, prefix);
  });

  it('migrates, starts each app as its own process and waits until it serves', async () => {
    stack = await startStack({
      apps: ['compliance', 'agents'],
      databaseUrl: db.url,
      natsUrl: nats,
      prefix,
      freePorts: true,
      silent: true,
      credentials: false,
    });
    expect(Object.keys(stack.grpc).sort()).toEqual(['agents', 'compliance']);
    for (const address of Object.values(stack.grpc))
      expect(await checkGrpcHealth(address!)).toEqual({ status: 'SERVING' });
    expect(stack.pid('compliance')).not.toBe(stack.pid('agents'));
    expect(stack.logs('compliance').some((l) => l.includes('compliance ready'))).toBe(true);
    // The separate migration step ran, so the services were told not to migrate.
    expect(stack.env.MIGRATE_ON_START).toBe('false');
    expect(stack.env.COMPLIANCE_GRPC_URL).toBe(stack.grpc.compliance);
  }, 180_000);

  it('stops every other app when one exits on its own, and reports which', async () => {
    process.kill(stack!.pid('compliance')!, 'SIGKILL');
    const exit = await stack!.failed;
    expect(exit).toMatchObject({ app: 'compliance', signal: 'SIGKILL' });
    expect(stack!.pid('agents')).toBeUndefined();
    expect('error' in (await checkGrpcHealth(stack!.grpc.agents!, 500))).toBe(true);
    await stack!.stop(); // idempotent
  }, 60_000);

  it('refuses to start on a busy port, naming it and the app, before starting anything', async () => {
    const busy: Server = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as { port: number }).port;
    try {
      await expect(
        startStack({
          apps: ['agents'],
          grpcPorts: { agents: port },
          databaseUrl: db.url,
          natsUrl: nats,
          prefix,
          silent: true,
          credentials: false,
        }),
      ).rejects.toThrow(new RegExp(`${port} \\(agents\\) already in use`));
    } finally {
      busy.close();
    }
  });

  it('rejects a malformed credential variable before starting anything', async () => {
    await expect(
      startStack({
        apps: ['agents'],
        freePorts: true,
        databaseUrl: db.url,
        natsUrl: nats,
        prefix,
        silent: true,
        credentials: { sandbox: 'nope' },
      }),
    ).rejects.toThrow(/credentials\.sandbox must be "<tokenId>:<secret>"/);
  });

  it('survives its chosen ports being taken before the apps bind them, even by servers that answer health', async () => {
    const closers: (() => void)[] = [];
    const stolen = new Map<AppName, number>();
    // The stack chooses the ports in app order (backends, then the gateway). Each is taken
    // at once: compliance's by a bare listener (the app fails to bind and exits), agents' by
    // a gRPC server answering health SERVING and the gateway's by an HTTP server answering
    // /healthz 200, which a readiness probe alone would take for the app.
    thieves.queue.push(
      async (port) => {
        const s = createServer();
        await new Promise<void>((r) => s.listen(port, '127.0.0.1', r));
        closers.push(() => s.close());
        stolen.set('compliance', port);
      },
      async (port) => {
        const s = new GrpcServer();
        new HealthImplementation({ '': 'SERVING' }).addToServer(s);
        await new Promise<void>((r, j) =>
          s.bindAsync(`127.0.0.1:${port}`, ServerCredentials.createInsecure(), (e) => (e ? j(e) : r())),
        );
        closers.push(() => s.forceShutdown());
        stolen.set('agents', port);
      },
      async (port) => {
        const s = createHttpServer((_req, res) => res.end(JSON.stringify({ status: 'not the gateway' })));
        await new Promise<void>((r) => s.listen(port, '127.0.0.1', r));
        closers.push(() => s.close());
        stolen.set('gateway', port);
      },
    );
    const output: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        output.push(chunk.toString());
        done();
      },
    });
    let taken: Stack | undefined;
    try {
      taken = await startStack({
        apps: ['compliance', 'agents', 'gateway'],
        databaseUrl: db.url,
        natsUrl: nats,
        prefix,
        freePorts: true,
        migrate: false,
        stdout: sink,
        stderr: sink,
        credentials: false,
        logLevel: 'warn',
      });
      expect(thieves.queue).toHaveLength(0);
      expect([...stolen.keys()]).toEqual(['compliance', 'agents', 'gateway']);
      const portOf = (address: string) => Number(new URL(`http://${address}`).port);
      const ports: Record<string, number> = {
        compliance: portOf(taken.grpc.compliance!),
        agents: portOf(taken.grpc.agents!),
        gateway: portOf(new URL(taken.gatewayUrl).host),
      };
      for (const [app, port] of stolen) expect(ports[app], app).not.toBe(port);
      // Each address is served by the stack's own process, not by whoever took the first port.
      for (const app of ['compliance', 'agents', 'gateway'] as const)
        expect(listenerOf(ports[app]!, taken.pid(app)), app).toBe('ours');
      expect(
        await checkGrpcHealth(taken.grpc.agents!, 1000, 'sluice.agents.v1.AgentsService'),
      ).toEqual({ status: 'SERVING' });
      expect(
        await checkGrpcHealth(taken.grpc.compliance!, 1000, 'sluice.compliance.v1.ComplianceService'),
      ).toEqual({ status: 'SERVING' });
      expect(await (await fetch(`${taken.gatewayUrl}/healthz`)).json()).toEqual({ status: 'ok' });
      // Every child is told the addresses the apps really have.
      expect(taken.env.AGENTS_GRPC_URL).toBe(taken.grpc.agents);
      expect(taken.env.GATEWAY_PORT).toBe(String(ports.gateway));
      // And it said why it started again.
      const said = output.join('');
      for (const [app, port] of stolen) expect(said).toContain(`${port} (${app})`);
      expect(said).toMatch(/taken by another process before the app could listen on it; starting again/);
    } finally {
      await taken?.stop();
      thieves.queue.length = 0;
      for (const close of closers) close();
    }
  }, 180_000);
});
