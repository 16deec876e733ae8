/**
 * A kit client spreads its calls over every replica of a service (round robin over
 * `ip:port,ip:port`), keeps every call succeeding while one replica drains and stops
 * (graceful shutdown: GOAWAY, in-flight calls finish) and while one is killed outright,
 * as long as another serves; and a service whose database is unreachable answers
 * UNAVAILABLE (retryable: the gateway's 503), not INTERNAL.
 *
 * Real servers in this process (the drain case) and in their own processes (the kill case).
 */
import { afterEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { status } from '@grpc/grpc-js';
import { createLogger } from '@sluice/logging';
import { isDependencyUnavailable } from '@sluice/core';
import { createRpcClient, implement, RpcError, rpcTarget, startRpcServer, type RpcServer } from '../src/index.js';
import { EchoClient, EchoService } from './fixtures/echo-service.js';
import { answeredBy, freePort, spawnEchoServer } from './fixtures/echo-process.js';

const logger = createLogger('rpc-replicas-test', 'silent');
type Echo = { text?: string; pid?: number };
type EchoRpc = { echo(req: Echo, opts?: { deadlineMs?: number }): Promise<Echo>; close(): void };

/** An in-process echo replica answering with its own marker (in `pid`). */
async function replica(marker: number, handler?: () => Promise<Echo>): Promise<RpcServer> {
  return startRpcServer({
    host: '127.0.0.1',
    port: 0,
    logger,
    services: [
      implement(
        EchoService,
        { echo: handler ?? (async (req: Echo) => ({ text: req.text, pid: marker })) } as never,
        logger,
      ),
    ],
  });
}

/** `n` concurrent callers calling back to back until `until()` resolves; returns every answer and failure. */
async function load(client: EchoRpc, n: number, until: Promise<unknown>) {
  let done = false;
  void until.then(() => (done = true));
  const answered: number[] = [];
  const failed: unknown[] = [];
  /** The texts of the failed calls (each call's text is unique). */
  const failedTexts: string[] = [];
  let seq = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (!done) {
        const text = `call-${++seq}`;
        try {
          answered.push((await client.echo({ text }, { deadlineMs: 5_000 })).pid!);
        } catch (err) {
          failed.push(err);
          failedTexts.push(text);
        }
      }
    }),
  );
  return { answered, failed, failedTexts };
}

describe('rpc replicas', () => {
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it('turns a list of replica addresses into one balanced target', () => {
    expect(rpcTarget('127.0.0.1:5001')).toBe('127.0.0.1:5001');
    expect(rpcTarget('dns:///payments-headless:50054')).toBe('dns:///payments-headless:50054');
    expect(rpcTarget('127.0.0.1:5001,127.0.0.1:5002')).toBe('ipv4:127.0.0.1:5001,127.0.0.1:5002');
    expect(rpcTarget('[::1]:5001,[::1]:5002')).toBe('ipv6:[::1]:5001,[::1]:5002');
    expect(() => rpcTarget('payments-1:5001,payments-2:5001')).toThrow(/IP literals/);
  });

  it('spreads calls over every replica and loses none while one drains and stops', async () => {
    const [a, b, c] = [await replica(1), await replica(2), await replica(3)];
    cleanup.push(() => a.shutdown(0), () => b.shutdown(0), () => c.shutdown(0));
    const client = createRpcClient(
      EchoClient as never,
      [a, b, c].map((s) => `127.0.0.1:${s.port}`).join(','),
    ) as unknown as EchoRpc;
    cleanup.push(() => client.close());

    const spread = await load(client, 6, new Promise((r) => setTimeout(r, 1_500)));
    expect(spread.failed).toEqual([]);
    const share = (m: number) => spread.answered.filter((p) => p === m).length / spread.answered.length;
    // Round robin: each of three replicas takes about a third (not one replica taking everything).
    for (const m of [1, 2, 3]) expect(share(m), `share of replica ${m}`).toBeGreaterThan(0.2);

    // Replica 2 shuts down gracefully under load (as on SIGTERM): not one call fails.
    const during = await load(
      client,
      6,
      (async () => {
        await new Promise((r) => setTimeout(r, 300));
        await b.shutdown(5_000);
        await new Promise((r) => setTimeout(r, 500));
      })(),
    );
    expect(during.failed).toEqual([]);
    const afterStop = during.answered.slice(-50);
    expect(afterStop).not.toContain(2);
  });

  it('loses no call the killed replica had not answered when a replica process is killed while another serves', async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const first = await spawnEchoServer(p1);
    const second = await spawnEchoServer(p2);
    cleanup.push(
      () => first.exitCode === null && first.kill('SIGKILL'),
      () => second.exitCode === null && second.kill('SIGKILL'),
    );
    const client = createRpcClient(EchoClient as never, `127.0.0.1:${p1},127.0.0.1:${p2}`) as unknown as EchoRpc;
    cleanup.push(() => client.close());
    const run = await load(
      client,
      4,
      (async () => {
        await new Promise((r) => setTimeout(r, 500));
        const exited = new Promise((r) => first.once('exit', r));
        first.kill('SIGKILL');
        await exited;
        await new Promise((r) => setTimeout(r, 1_000));
      })(),
    );
    expect(new Set(run.answered)).toEqual(new Set([first.pid, second.pid]));
    // A call on the connection the kernel reset is retried on the live replica (UNAVAILABLE retry
    // policy) — unless the killed replica had already answered it and its answer was cut off with the
    // connection: grpc-js commits a call once the answer's headers arrive, and running it again would
    // run it twice (the services' request keys make such a retry by their caller safe). So no call
    // the killed replica had not answered fails, and a failure is UNAVAILABLE (the gateway's 503).
    const killedAnswered = answeredBy(first);
    expect(killedAnswered.size, 'calls the killed replica answered').toBeGreaterThan(0);
    expect(run.failedTexts.filter((t) => !killedAnswered.has(t)), 'failed calls the killed replica never answered').toEqual([]);
    for (const err of run.failed) expect((err as RpcError).grpcCode).toBe(status.UNAVAILABLE);
    expect(run.failed.length, 'calls cut off with the killed connections').toBeLessThanOrEqual(4);
    expect(run.answered.slice(-20).every((p) => p === second.pid)).toBe(true);
  });

  it('answers UNAVAILABLE, not INTERNAL, when the database the handler uses is unreachable', async () => {
    const dbPort = await freePort(); // nothing listens there
    const down = await replica(0, async () => {
      const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${dbPort}/postgres` });
      await client.connect();
      return {};
    });
    cleanup.push(() => down.shutdown(0));
    const client = createRpcClient(EchoClient as never, `127.0.0.1:${down.port}`) as unknown as EchoRpc;
    cleanup.push(() => client.close());
    const err = await client.echo({ text: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).grpcCode).toBe(status.UNAVAILABLE);
  });

  it('classifies a terminated Postgres session and a refused connection as unavailable, a constraint error not', async () => {
    const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    const victim = new pg.Client({ connectionString: url });
    await victim.connect();
    victim.on('error', () => undefined);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    cleanup.push(() => admin.end(), () => victim.end().catch(() => undefined));
    const { rows } = await victim.query<{ pid: number }>('select pg_backend_pid() as pid');
    await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
    const terminated = await victim.query('select 1').catch((e: unknown) => e);
    expect(isDependencyUnavailable(terminated), String(terminated)).toBe(true);

    const refused = await new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${await freePort()}/x` })
      .connect()
      .catch((e: unknown) => e);
    expect(isDependencyUnavailable(refused), String(refused)).toBe(true);

    const constraint = await admin.query('select 1/0').catch((e: unknown) => e);
    expect(isDependencyUnavailable(constraint)).toBe(false);
    expect(isDependencyUnavailable(new Error('boom'))).toBe(false);
  });
});
