import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dropStreams, natsUrl, testPrefix, type TestDatabase } from '@sluice/testing';
import { checkGrpcHealth } from './lib/health.js';
import { startStack, type Stack } from './stack.js';

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
});
