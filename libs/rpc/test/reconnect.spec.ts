/**
 * A kit client recovers promptly after its server is killed and started again on
 * the same port, however long the outage lasted.
 *
 * Why it is a test: grpc-js backs off between connection attempts exponentially
 * (1 s × 1.6 per failure, up to 120 s by default) and fails calls at once while
 * it waits, so a client whose server was down for a while kept failing long after
 * the server was back (the gateway answered 503 for a minute after a slow restart
 * of payments). The kit bounds that backoff (RECONNECT_BACKOFF).
 *
 * How: a real server process is SIGKILLed (no drain; the kernel resets its
 * connections); the client keeps calling during an outage long enough for the
 * default backoff to have grown past 5 s; then a probe listener on the port
 * observes the client's next connection attempt (and refuses it), and the server
 * is started again on that port right after it. The next attempt comes one
 * backoff interval later: at most RECONNECT_BACKOFF.maxMs (+20 % jitter) with the
 * kit's options, at least ~5 s with grpc-js' defaults. The assertion is a bound
 * on the number of failed calls after the restart, which the defaults exceed by
 * a wide margin; the timings are printed, not asserted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server, type Socket } from 'node:net';
import { status } from '@grpc/grpc-js';
import { createLogger } from '@sluice/logging';
import {
  createRpcClient,
  implement,
  RECONNECT_BACKOFF,
  RpcError,
  startRpcServer,
  type RpcServer,
} from '../src/index.js';
import { EchoClient, EchoService } from './fixtures/echo-service.js';
import { freePort, spawnEchoServer } from './fixtures/echo-process.js';

const logger = createLogger('rpc-reconnect-test', 'silent');
/** Long enough for grpc-js' default backoff to reach ~4–6 s (attempts at ~0, 1, 2.6, 5.2, 9.3 s …). */
const OUTAGE_MS = 8_000;
/** Calls after the restart are this far apart; each fails at once while the channel backs off. */
const CALL_INTERVAL_MS = 100;
/**
 * Failed calls tolerated after the restart. With the kit's backoff (≤ 1.2 s) a
 * handful fail; with grpc-js' defaults (≥ ~5 s after this outage) dozens would.
 */
const MAX_FAILED_CALLS_AFTER_RESTART = 15;

type Echo = { text?: string; pid?: number };
type EchoRpc = { echo(req: Echo, opts?: { deadlineMs?: number }): Promise<Echo>; close(): void };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('rpc client reconnect', () => {
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it('uses a server restarted on the same port within a bounded number of calls, whatever the outage lasted', async () => {
    const port = await freePort();
    const first = await spawnEchoServer(port);
    cleanup.push(() => first.exitCode === null && first.signalCode === null && first.kill('SIGKILL'));
    const client = createRpcClient(EchoClient as never, `127.0.0.1:${port}`, {
      defaultDeadlineMs: 2_000,
    }) as unknown as EchoRpc;
    cleanup.push(() => client.close());
    expect(await client.echo({ text: 'before' })).toEqual({ text: 'before', pid: first.pid });

    // The crash: no drain, the kernel resets the client's connection.
    const exited = new Promise((r) => first.once('exit', r));
    first.kill('SIGKILL');
    await exited;

    // The outage: calls keep coming (as requests do at a gateway) and fail UNAVAILABLE.
    const outageStarted = Date.now();
    let outageCalls = 0;
    while (Date.now() - outageStarted < OUTAGE_MS) {
      const err = await client.echo({ text: 'down' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, 'a call while the server is down').toBeInstanceOf(RpcError);
      // Wait-for-ready: a call finding no connection waits for one until its deadline.
      expect([status.UNAVAILABLE, status.DEADLINE_EXCEEDED]).toContain((err as RpcError).grpcCode);
      outageCalls++;
      await sleep(250);
    }

    // The probe takes the port and refuses the client's next connection attempt, so the
    // restart below happens right after one: the client's next try is a full backoff away.
    let probe: Server | undefined;
    const attemptSeenAt = await new Promise<number>((resolve, reject) => {
      probe = createServer((socket: Socket) => {
        socket.destroy();
        resolve(Date.now());
      });
      probe.once('error', reject);
      probe.listen(port, '127.0.0.1');
    });
    await new Promise<void>((r) => probe!.close(() => r()));
    const second: RpcServer = await startRpcServer({
      host: '127.0.0.1',
      port,
      logger,
      services: [
        implement(
          EchoService,
          { echo: async (req: Echo) => ({ text: req.text, pid: process.pid }) } as never,
          logger,
        ),
      ],
    });
    cleanup.push(() => second.shutdown(0));
    const restartedAt = Date.now();

    let failed = 0;
    let answer: Echo | undefined;
    const errors = new Map<string, number>();
    while (failed <= MAX_FAILED_CALLS_AFTER_RESTART) {
      try {
        // A short deadline: a call waits for a connection (wait-for-ready) only this long, so the
        // number of failed calls still measures how long the channel took to reconnect.
        answer = await client.echo({ text: 'after' }, { deadlineMs: 100 });
        break;
      } catch (e) {
        failed++;
        const key = e instanceof RpcError ? `${status[e.grpcCode]}: ${e.message}` : String(e);
        errors.set(key, (errors.get(key) ?? 0) + 1);
        await sleep(CALL_INTERVAL_MS);
      }
    }
    console.info(
      `rpc reconnect: server down ${((attemptSeenAt - outageStarted) / 1000).toFixed(1)} s (${outageCalls} calls failed); ` +
        `first call answered ${Date.now() - restartedAt} ms after the restart, after ${failed} failed call(s); ` +
        `reconnect backoff ${RECONNECT_BACKOFF.initialMs}–${RECONNECT_BACKOFF.maxMs} ms`,
    );
    expect(
      answer,
      `no answer after ${failed} calls over ${Date.now() - restartedAt} ms since the restart: ${JSON.stringify([...errors])}`,
    ).toEqual({ text: 'after', pid: process.pid });
  }, 60_000);
});
