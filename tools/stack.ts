/**
 * The whole system as separate processes, the way `npm start` runs it and the
 * end-to-end tests reuse it:
 *
 *   database ensured → streams ensured → every service's migrations
 *   (`main.ts migrate`, like the Kubernetes Jobs) → every app started as its own
 *   child process (logs prefixed `[identity] ...`) → each backend answers
 *   grpc.health.v1 SERVING and the gateway answers GET /healthz → platform
 *   credentials bootstrapped through identity EnsurePlatformCredential.
 *
 * A child that exits while the stack runs stops the others and fails the stack.
 * Except one killed on purpose by `stack.restart(app)` (crash-recovery tests), which is respawned.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Writable } from 'node:stream';
import { GATEWAY_DEFAULT_PORT, SERVICE_PORTS, defaultMetricsPort, type ServiceName } from '@sluice/config';
import { ensureDatabase } from '@sluice/store';
import { connectBus, ensureStreams } from '@sluice/events';
import { colorFor, forEachLine, linePrefix, LineRing, safeWrite } from './lib/process-output.js';
import { checkGrpcHealth, checkHttp } from './lib/health.js';
import {
  generateCredential,
  loadOrCreateLocalCredential,
  parseCredential,
  type Credential,
  type PlatformEnvironment,
} from './lib/credentials.js';
import {
  ensurePlatformCredential,
  type BootstrappedPlatform,
  type CredentialSource,
} from './lib/bootstrap.js';
import { safeUrl } from './lib/preflight.js';
import { isPortFree, listenerOf, pickFreePort } from './lib/ports.js';

/** The REST API version segment every public path starts with. */
export const API_VERSION = '2025-10-13';

/** Every app of the system, in start-up/log order (the gateway last to start, first to stop). */
export const APPS = [
  'identity',
  'wallet-auth',
  'accounts',
  'payments',
  'compliance',
  'agents',
  'webhook-dispatcher',
  'gateway',
] as const;
export type AppName = (typeof APPS)[number];
export type BackendName = Exclude<AppName, 'gateway'>;

export const DEFAULTS = {
  databaseUrl: 'postgres://postgres@127.0.0.1:5432/sluice',
  natsUrl: 'nats://127.0.0.1:4222',
  prefix: 'sluice',
  gatewayHost: '127.0.0.1',
  gatewayPort: GATEWAY_DEFAULT_PORT,
};

/**
 * Gateway rate limits of test and measuring stacks (e2e files, fuzz, benchmarks): far above what any of
 * them sends, so only the limiter's own tests see a 429, while every request is still counted (the
 * limiter's cost stays in the figures). `npm start` keeps the gateway's defaults.
 */
export const TEST_STACK_RATE_LIMITS: Readonly<Record<string, string>> = Object.freeze({
  RATE_LIMIT_PER_TOKEN: '100000000',
  RATE_LIMIT_PER_AGENT: '100000000',
  RATE_LIMIT_PER_ADDRESS: '100000000',
  RATE_LIMIT_AUTH_FAILURES: '100000000',
});

/** Local runs only: a fixed, publicly known wallet master key (base64 sha256 of 'sluice-local-dev-wallet-master-key'), so a local database's sealed wallets stay readable across restarts. Never use it in production. */
const LOCAL_DEV_WALLET_MASTER_KEY = 'W3k8wZn89FXtgLz2jPs+6NxfYiDYVIVhktt5/fJCP2g=';
const LOCAL_DEV_DOCUMENT_MASTER_KEY = 'q0Bz6m1iTt8cKOZr0xqLkQ4h0sE3w9mX7yQ5wP2aJvU=';
/**
 * Local runs only: fixed, publicly known master keys of every service that seals data at rest
 * (the new ones: base64 sha256 of 'sluice-local-dev-<variable>'), given to a local stack's service unless its
 * env names another. Production requires each to be set (the services never default them).
 */
export const LOCAL_DEV_MASTER_KEYS: Record<string, Record<string, string>> = {
  'wallet-auth': { WALLET_MASTER_KEY: LOCAL_DEV_WALLET_MASTER_KEY },
  compliance: { DOCUMENT_MASTER_KEY: LOCAL_DEV_DOCUMENT_MASTER_KEY },
  identity: { IDENTITY_DATA_MASTER_KEY: '152z9TNFgEhKfhUra8svQgSTc2I1y2y4+7t3rUzHBr4=' },
  accounts: { ACCOUNT_DATA_MASTER_KEY: 'xodnSI9BF0HPn6I8WbtGeHtwx5ZHTEIwUey0ybJ8+4M=' },
};

/** Start-up attempts when ports the stack chose are taken by other processes before the apps bind them. */
const START_ATTEMPTS = 5;
/** Tries of `restart(app)` whose port another process holds (it must come back on the same one). */
const RESTART_ATTEMPTS = 3;

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** `<SERVICE>_GRPC_URL`, the variable through which callers find a service. */
export function grpcUrlVariable(service: ServiceName): string {
  return `${service.toUpperCase().replace(/-/g, '_')}_GRPC_URL`;
}

/** The apps that exist in this checkout (those with an `apps/<app>/src/main.ts`). */
export function discoverApps(root = ROOT): AppName[] {
  const present = new Set(
    readdirSync(join(root, 'apps')).filter((a) => existsSync(join(root, 'apps', a, 'src', 'main.ts'))),
  );
  return APPS.filter((a) => present.has(a));
}

export interface StackOptions {
  /** Repository root (default: the parent of tools/). */
  root?: string;
  /** Default: DATABASE_URL or postgres://postgres@127.0.0.1:5432/sluice (created when missing). */
  databaseUrl?: string;
  /** Default: NATS_URL or nats://127.0.0.1:4222. */
  natsUrl?: string;
  /** EVENT_SUBJECT_PREFIX (and so stream names). Default: EVENT_SUBJECT_PREFIX or `sluice`. */
  prefix?: string;
  /** Default: GATEWAY_HOST or 127.0.0.1. */
  gatewayHost?: string;
  /** Default: GATEWAY_PORT or 8080; 0 picks a free port. */
  gatewayPort?: number;
  /** gRPC ports per service; default SERVICE_PORTS (0 picks a free port). */
  grpcPorts?: Partial<Record<BackendName, number>>;
  /** Pick free ports for every port not given explicitly (tests, or beside a running `npm start`). */
  freePorts?: boolean;
  /** A subset of the apps to run (default: every app with a main.ts). */
  apps?: AppName[];
  /** Extra environment for every child. */
  env?: Record<string, string>;
  /** Extra environment per app. */
  appEnv?: Partial<Record<AppName, Record<string, string>>>;
  /** SANDBOX_TIME_SCALE (default: env or 1). */
  sandboxTimeScale?: number;
  /** SANDBOX_UMA_DOMAIN (default: env or the services' default). */
  sandboxUmaDomain?: string;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS for local runs (default true: local webhook receivers are on loopback). */
  allowPrivateWebhookTargets?: boolean;
  /**
   * Platform credentials (`<tokenId>:<secret>` or a Credential) to ensure at start.
   * Default: SANDBOX_PLATFORM_CREDENTIALS / PRODUCTION_PLATFORM_CREDENTIALS.
   * With neither, a local sandbox credential is used (see localCredentialFile).
   * `false` skips the bootstrap.
   */
  credentials?: { sandbox?: string | Credential; production?: string | Credential } | false;
  /**
   * Where the local sandbox credential is kept (default `<root>/.sluice/sandbox-credentials.json`);
   * `false` generates a fresh one that is not persisted (tests).
   */
  localCredentialFile?: string | false;
  /** Name given to platforms created by the bootstrap. */
  platformName?: string;
  /**
   * Run every app's migrations first as one-shot `main.ts migrate` processes, as the
   * Kubernetes Jobs do (default true; the services then start with MIGRATE_ON_START=false).
   * `false`: each service applies its own at start (faster; fine for test suites).
   */
  migrate?: boolean;
  /** LOG_LEVEL of every child (default: env or info). */
  logLevel?: string;
  /** Do not print the children's output (it is still kept: `stack.logs(app)`). */
  silent?: boolean;
  /** Colored prefixes (default: when stdout is a TTY and NO_COLOR is unset). */
  color?: boolean;
  stdout?: Writable;
  stderr?: Writable;
  /** How long every app may take to become ready (default 120 s). */
  startTimeoutMs?: number;
  /** How long a child may take to exit after SIGTERM before SIGKILL (default 15 s). */
  stopGraceMs?: number;
  /** Aborting stops whatever was started; startStack then rejects. */
  signal?: AbortSignal;
}

export type { BootstrappedPlatform };

export interface AppExit {
  app: AppName;
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Stack {
  /** `http://host:port/2025-10-13` (or the gateway's API_BASE_PATH). */
  baseUrl: string;
  /** `http://host:port` of the gateway. */
  gatewayUrl: string;
  /** host:port of every backend's gRPC server. */
  grpc: Partial<Record<BackendName, string>>;
  /** `http://127.0.0.1:<METRICS_PORT>/metrics` of every app whose metrics endpoint is on. */
  metrics: Partial<Record<AppName, string>>;
  apps: AppName[];
  databaseUrl: string;
  natsUrl: string;
  prefix: string;
  /** The environment shared by every child (without the per-app ports). */
  env: Record<string, string>;
  platforms: { sandbox?: BootstrappedPlatform; production?: BootstrappedPlatform };
  /** The last lines an app wrote (stdout and stderr). */
  logs(app: AppName, lines?: number): string[];
  /** The process id of a running app. */
  pid(app: AppName): number | undefined;
  /** Resolves when a child exits on its own (the rest are stopped by then). Never rejects. */
  failed: Promise<AppExit>;
  /**
   * Kills one running app deliberately (SIGKILL by default: a crash, no drain) and
   * starts it again with the same environment and ports; resolves once it is
   * ready again. The deliberate exit does not fail the stack (crash-recovery tests).
   */
  restart(app: AppName, signal?: NodeJS.Signals): Promise<void>;
  /** SIGTERM to every child (the gateway first), SIGKILL after the grace period. Idempotent. */
  stop(): Promise<void>;
}

/** A running app process (`node --import tsx apps/<app>/src/main.ts ...`). */
export interface AppProcess {
  app: AppName;
  proc: ChildProcess;
  /** Its last output lines. */
  ring: LineRing;
  exited: Promise<AppExit>;
  exit?: AppExit;
}
type Child = AppProcess;

/**
 * Starts `apps/<app>/src/main.ts` (plus args) in its own process group, its output
 * lines prefixed with `[label]` (colored when asked) and kept in a ring buffer.
 */
export function spawnAppProcess(o: {
  root?: string;
  app: AppName;
  args?: string[];
  env: NodeJS.ProcessEnv;
  label?: string;
  width?: number;
  color?: boolean;
  silent?: boolean;
  stdout?: Writable;
  stderr?: Writable;
}): AppProcess {
  const out = o.stdout ?? process.stdout;
  const err = o.stderr ?? process.stderr;
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', join('apps', o.app, 'src', 'main.ts'), ...(o.args ?? [])],
    {
      cwd: o.root ?? ROOT,
      env: o.env,
      // Own process group: a terminal Ctrl-C reaches only the supervisor, which then stops
      // the children in order with one SIGTERM each (a second signal would cut their drain).
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const ring = new LineRing(300);
  const label = o.label ?? o.app;
  const prefix = linePrefix(
    label,
    o.width ?? label.length,
    o.color ? colorFor(APPS.indexOf(o.app)) : undefined,
  );
  forEachLine(proc.stdout!, (line) => {
    ring.push(line);
    if (!o.silent) safeWrite(out, prefix + line + '\n');
  });
  forEachLine(proc.stderr!, (line) => {
    ring.push(line);
    if (!o.silent) safeWrite(err, prefix + line + '\n');
  });
  const child: AppProcess = {
    app: o.app,
    proc,
    ring,
    exited: new Promise<AppExit>((r) => {
      proc.on('exit', (code, signal) => {
        child.exit = { app: o.app, code, signal };
        r(child.exit);
      });
      proc.on('error', (e) => {
        ring.push(`failed to spawn: ${e.message}`);
        child.exit = { app: o.app, code: null, signal: null };
        r(child.exit);
      });
    }),
  };
  return child;
}

class StackError extends Error {
  override name = 'StackError';
}

/** Starts the whole system; see the module comment. Rejects (with the failing app's last log lines) when it cannot. */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const env = process.env;
  const root = opts.root ?? ROOT;
  const apps = opts.apps ?? discoverApps(root);
  const backends = apps.filter((a): a is BackendName => a !== 'gateway');
  const databaseUrl = opts.databaseUrl ?? (env.DATABASE_URL || DEFAULTS.databaseUrl);
  const natsUrl = opts.natsUrl ?? (env.NATS_URL || DEFAULTS.natsUrl);
  const prefix = opts.prefix ?? (env.EVENT_SUBJECT_PREFIX || DEFAULTS.prefix);
  const gatewayHost = opts.gatewayHost ?? (env.GATEWAY_HOST || DEFAULTS.gatewayHost);
  const stdout = opts.stdout ?? process.stdout;
  const stderr = opts.stderr ?? process.stderr;
  const color = opts.color ?? (Boolean((stdout as NodeJS.WriteStream).isTTY) && !env.NO_COLOR);
  const startTimeoutMs = opts.startTimeoutMs ?? 120_000;
  const stopGraceMs = opts.stopGraceMs ?? 15_000;
  const width = Math.max(...apps.map((a) => a.length), 'stack'.length);

  const say = (line: string) => {
    if (!opts.silent) safeWrite(stdout, `${linePrefix('stack', width, color ? 1 : undefined)}${line}\n`);
  };

  // Ports: explicit option (or GATEWAY_PORT) > a free port chosen by the stack (freePorts, or 0) > default.
  const envGatewayPort = env.GATEWAY_PORT ? Number(env.GATEWAY_PORT) : undefined;
  if (
    envGatewayPort !== undefined &&
    !(Number.isInteger(envGatewayPort) && envGatewayPort >= 0 && envGatewayPort <= 65535)
  ) {
    throw new StackError(`GATEWAY_PORT must be a port number (got ${JSON.stringify(env.GATEWAY_PORT)})`);
  }
  const hostOf = (app: AppName) => (app === 'gateway' ? gatewayHost : '127.0.0.1');
  const portApps: AppName[] = [...backends, 'gateway'];
  const ports: Partial<Record<AppName, number>> = {};
  /**
   * Apps whose port the stack chooses. A port found free is free only at that moment: another
   * process can take it before the app binds it, so these are chosen right before the apps are
   * spawned, and an app whose chosen port was taken is started again on a fresh one (step 3).
   */
  const chosen = new Set<AppName>();
  for (const app of portApps) {
    const given = app === 'gateway' ? (opts.gatewayPort ?? envGatewayPort) : opts.grpcPorts?.[app];
    if (given !== undefined && given !== 0) ports[app] = given;
    else if (given === 0 || opts.freePorts) chosen.add(app);
    else ports[app] = app === 'gateway' ? DEFAULTS.gatewayPort : SERVICE_PORTS[app];
  }
  /** Each app's METRICS_PORT: given (0 = off), chosen with its serving port, or the default. */
  const metricsPorts: Partial<Record<AppName, number>> = {};
  for (const app of portApps) {
    const given = opts.appEnv?.[app]?.METRICS_PORT ?? opts.env?.METRICS_PORT;
    if (given !== undefined) metricsPorts[app] = Number(given);
    else if (!chosen.has(app)) metricsPorts[app] = defaultMetricsPort(app);
  }
  const metricsChosen = new Set(portApps.filter((a) => metricsPorts[a] === undefined));
  const choosePorts = async (which: readonly AppName[]) => {
    for (const app of which) {
      ports[app] = undefined;
      if (metricsChosen.has(app)) metricsPorts[app] = undefined;
    }
    const taken = () =>
      new Set([...Object.values(ports), ...Object.values(metricsPorts)].filter((p): p is number => p !== undefined && p !== 0));
    for (const app of which) ports[app] = await pickFreePort(hostOf(app), taken());
    for (const app of which) if (metricsChosen.has(app)) metricsPorts[app] = await pickFreePort('127.0.0.1', taken());
  };
  const probeHost = gatewayHost === '0.0.0.0' || gatewayHost === '::' ? '127.0.0.1' : gatewayHost;
  const basePath =
    opts.appEnv?.gateway?.API_BASE_PATH ??
    opts.env?.API_BASE_PATH ??
    (env.API_BASE_PATH || `/${API_VERSION}`);

  // Credentials are resolved before anything starts so a malformed variable fails fast.
  const wanted = resolveCredentials(opts, root);

  // Ports given or defaulted must be free (a chosen one is free when it is chosen).
  await assertPortsFree(
    apps.flatMap((app) => [
      ...(chosen.has(app) ? [] : [{ app, host: hostOf(app), port: ports[app]! }]),
      ...(metricsChosen.has(app) || !metricsPorts[app] ? [] : [{ app, host: '127.0.0.1', port: metricsPorts[app] }]),
    ]),
  );

  const base: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    NATS_URL: natsUrl,
    EVENT_SUBJECT_PREFIX: prefix,
    SANDBOX_TIME_SCALE: String(opts.sandboxTimeScale ?? (env.SANDBOX_TIME_SCALE || 1)),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: String(
      opts.allowPrivateWebhookTargets ??
        (env.WEBHOOK_ALLOW_PRIVATE_TARGETS ? env.WEBHOOK_ALLOW_PRIVATE_TARGETS === 'true' : true),
    ),
    LOG_LEVEL: opts.logLevel ?? (env.LOG_LEVEL || 'info'),
    // The stack runs the migrations itself (as the Kubernetes Jobs do), unless told not to.
    MIGRATE_ON_START: opts.migrate === false ? 'true' : 'false',
    GATEWAY_HOST: gatewayHost,
  };
  const umaDomain = opts.sandboxUmaDomain ?? env.SANDBOX_UMA_DOMAIN;
  if (umaDomain) base.SANDBOX_UMA_DOMAIN = umaDomain;

  // The addresses every child is given, from the ports known so far (a chosen port is
  // known once the apps are spawned; the migration processes listen on nothing).
  const grpc: Partial<Record<BackendName, string>> = {};
  let gatewayUrl = '';
  let shared: Record<string, string> = {};
  const applyPorts = () => {
    shared = { ...base };
    if (ports.gateway !== undefined) {
      shared.GATEWAY_PORT = String(ports.gateway);
      gatewayUrl = `http://${probeHost.includes(':') ? `[${probeHost}]` : probeHost}:${ports.gateway}`;
    }
    for (const b of backends) {
      if (ports[b] === undefined) continue;
      grpc[b] = `127.0.0.1:${ports[b]}`;
      shared[grpcUrlVariable(b)] = grpc[b];
    }
    Object.assign(shared, opts.env);
  };
  applyPorts();

  const childEnv = (app: AppName): NodeJS.ProcessEnv => {
    const e: NodeJS.ProcessEnv = {
      ...env,
      ...shared,
      ...(app === 'gateway' || ports[app] === undefined
        ? {}
        : { GRPC_HOST: '127.0.0.1', GRPC_PORT: String(ports[app]) }),
      ...(metricsPorts[app] === undefined ? {} : { METRICS_HOST: '127.0.0.1', METRICS_PORT: String(metricsPorts[app]) }),
      ...opts.appEnv?.[app],
    };
    // Services sealing data at rest require master keys; local stacks get stable, public dev keys unless given.
    for (const [variable, key] of Object.entries(LOCAL_DEV_MASTER_KEYS[app] ?? {})) if (!e[variable]) e[variable] = key;
    // Bootstrap secrets are the supervisor's business, not the services'.
    delete e.SANDBOX_PLATFORM_CREDENTIALS;
    delete e.PRODUCTION_PLATFORM_CREDENTIALS;
    return e;
  };

  const children: Child[] = [];
  let started = false;
  let stopping: Promise<void> | undefined;
  let resolveFailed!: (e: AppExit) => void;
  const failed = new Promise<AppExit>((r) => (resolveFailed = r));

  const spawnApp = (app: AppName, args: string[], role: 'run' | 'migrate'): Child =>
    spawnAppProcess({
      root,
      app,
      args,
      env: childEnv(app),
      label: role === 'migrate' ? `${app}:migrate` : app,
      width: role === 'migrate' ? width + ':migrate'.length : width,
      color,
      silent: opts.silent,
      stdout,
      stderr,
    });

  // Last resort when the supervisor itself dies: no orphaned services.
  const killAllSync = () => {
    for (const c of children) if (!c.exit && c.proc.pid) killGroup(c.proc.pid, 'SIGKILL');
  };
  process.on('exit', killAllSync);

  const stopChild = async (c: Child) => {
    if (c.exit || !c.proc.pid) return;
    killGroup(c.proc.pid, 'SIGTERM');
    const timer = setTimeout(() => {
      say(`${c.app} did not stop within ${stopGraceMs} ms; killing it`);
      killGroup(c.proc.pid!, 'SIGKILL');
    }, stopGraceMs);
    await c.exited;
    clearTimeout(timer);
  };

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const running = children.filter((c) => !c.exit);
      if (running.length) say(`stopping ${running.map((c) => c.app).join(', ')}`);
      const gateway = running.filter((c) => c.app === 'gateway');
      await Promise.all(gateway.map(stopChild));
      await Promise.all(running.filter((c) => c.app !== 'gateway').map(stopChild));
      process.off('exit', killAllSync);
      for (const c of running) {
        if (c.exit && c.exit.code !== 0 && c.exit.code !== null)
          say(`${c.app} exited with code ${c.exit.code} while stopping`);
      }
    })();
    return stopping;
  };

  const describeExit = (c: Child, e: AppExit) => {
    const how = e.signal ? `was killed by ${e.signal}` : `exited with code ${e.code}`;
    // Silenced output is shown here; printed output is repeated briefly so the cause sits next to the failure.
    const tail = c.ring.tail(opts.silent ? 40 : 5);
    return `${c.app} ${how}${tail.length ? `; its last output:\n${tail.map((l) => `  ${l}`).join('\n')}` : ''}`;
  };

  // Children killed on purpose (by `restart`, or because another process took their port): their
  // exit does not fail the stack.
  const deliberate = new WeakSet<Child>();
  /** From now on, `c` exiting on its own stops the other apps and resolves `failed`. */
  const watch = (c: Child) => {
    void c.exited.then(async (e) => {
      if (stopping || opts.signal?.aborted || deliberate.has(c)) return;
      // During start-up the rejection of startStack reports it.
      if (started) say(describeExit(c, e));
      await stop();
      resolveFailed(e);
    });
  };

  /** True when `c` exited because it could not bind its port: it said EADDRINUSE, or something else holds the port now. */
  const lostItsPort = async (c: Child): Promise<boolean> => {
    if (c.ring.tail(40).some((l) => l.includes('EADDRINUSE'))) return true;
    return !(await isPortFree(hostOf(c.app), ports[c.app]!).catch(() => true));
  };

  /**
   * Polls until `c` serves on its port: every backend answers grpc.health.v1 SERVING, the
   * gateway GET /healthz, and the listening socket is `c`'s own (where /proc tells: another
   * process that took the port would answer just as well). `taken` when another process holds
   * the port, so `c` cannot bind it; `cancelled` once `cancelled()` says so.
   */
  const untilReady = async (
    c: Child,
    cancelled: () => boolean,
  ): Promise<'ready' | 'taken' | 'cancelled'> => {
    const deadline = Date.now() + startTimeoutMs;
    for (;;) {
      if (cancelled()) return 'cancelled';
      if (c.exit) {
        if (await lostItsPort(c)) return 'taken';
        throw new StackError(describeExit(c, c.exit));
      }
      const answers =
        c.app === 'gateway'
          ? await checkHttp(`${gatewayUrl}/healthz`)
          : await checkGrpcHealth(grpc[c.app as BackendName]!).then(
              (h) => 'status' in h && h.status === 'SERVING',
            );
      if (answers) {
        const listener = listenerOf(ports[c.app]!, c.proc.pid);
        if (listener === 'ours' || listener === 'unknown') return 'ready';
        if (listener === 'other') return 'taken';
        // 'none': it answered and stopped listening since; look again.
      }
      if (Date.now() > deadline)
        throw new StackError(`${c.app} was not ready within ${startTimeoutMs} ms${tailText(c, opts.silent)}`);
      await sleep(250);
    }
  };

  /** "port 41234 (agents) was" / "ports 41234 (agents), 41236 (gateway) were" */
  const takenText = (taken: readonly AppName[]) =>
    `port${taken.length > 1 ? 's' : ''} ${taken.map((a) => `${ports[a]} (${a})`).join(', ')} ${taken.length > 1 ? 'were' : 'was'}`;

  /** Kills a child that lost its port and forgets it. */
  const discard = async (c: Child) => {
    deliberate.add(c);
    if (!c.exit && c.proc.pid) killGroup(c.proc.pid, 'SIGKILL');
    await c.exited;
    children.splice(children.indexOf(c), 1);
  };

  const restart = async (app: AppName, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
    const old = children.find((c) => c.app === app && !c.exit);
    if (!old?.proc.pid) throw new StackError(`${app} is not running`);
    if (stopping) throw new StackError('the stack is stopping');
    deliberate.add(old);
    killGroup(old.proc.pid, signal);
    await old.exited;
    children.splice(children.indexOf(old), 1);
    say(`${app} ${signal === 'SIGKILL' ? 'killed' : `stopped with ${signal}`} on purpose; starting it again`);
    // On the same port: the other apps know it by that address. Whoever took the port
    // meanwhile may give it back (a port probe does at once), so a few tries.
    for (let attempt = 1; ; attempt++) {
      const c = spawnApp(app, [], 'run');
      children.push(c);
      let outcome: 'ready' | 'taken' | 'cancelled';
      try {
        outcome = await untilReady(c, () => stopping !== undefined);
      } catch (err) {
        watch(c); // an exit (now or later) fails the stack, as any unexpected exit does
        throw err;
      }
      if (outcome === 'ready') {
        watch(c);
        return;
      }
      if (outcome === 'cancelled') {
        watch(c);
        throw new StackError('the stack is stopping');
      }
      await discard(c);
      if (attempt >= RESTART_ATTEMPTS)
        throw new StackError(
          `${takenText([app])} taken by another process while ${app} restarted, and it must come back on the same port`,
        );
      say(`${takenText([app])} taken by another process while ${app} restarted; starting it again on the same port`);
      await sleep(1000);
    }
  };

  const checkAborted = () => {
    if (opts.signal?.aborted) throw new StackError('start-up aborted');
  };
  const onAbort = () => void stop();
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    // 1. Database and streams.
    say(`database ${safeUrl(databaseUrl)}, NATS ${safeUrl(natsUrl)}, subject prefix "${prefix}"`);
    await ensureDatabase(databaseUrl);
    const bus = await connectBus(natsUrl, 'sluice-stack');
    try {
      await ensureStreams(bus.jsm, prefix);
    } finally {
      await bus.close();
    }

    checkAborted();
    // 2. Migrations, as separate one-shot processes (the same entry point the Kubernetes Jobs run).
    if (opts.migrate !== false) {
      const started = Date.now();
      await runLimited(apps, 4, async (app) => {
        const c = spawnApp(app, ['migrate'], 'migrate');
        children.push(c);
        const timer = setTimeout(() => killGroup(c.proc.pid!, 'SIGKILL'), startTimeoutMs);
        const e = await c.exited;
        clearTimeout(timer);
        children.splice(children.indexOf(c), 1);
        if (e.code !== 0) throw new StackError(`migrations of ${describeExit(c, e)}`);
      });
      say(`migrations applied for ${apps.length} apps in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }

    // 3. The processes, and 4. ready when each serves (untilReady). A port the stack chose can be
    // taken by another process between the choice and the app's bind (a chosen port is only known
    // to be free when chosen); then the attempt is abandoned and every app is started again, the
    // ones that lost their port on fresh ones (every app is told every backend's address).
    let choose = portApps.filter((a) => chosen.has(a));
    for (let attempt = 1; ; attempt++) {
      checkAborted();
      await choosePorts(choose);
      applyPorts();
      const batch = apps.map((app) => {
        const c = spawnApp(app, [], 'run');
        children.push(c);
        return c;
      });
      let abandoned = false;
      const outcomes = await Promise.all(
        batch.map(async (c) => {
          const outcome = await untilReady(c, () => {
            checkAborted();
            return abandoned;
          });
          if (outcome === 'taken') abandoned = true;
          // Abandoning the attempt: an app whose port another process listens on needs a fresh one too.
          if (outcome === 'cancelled' && listenerOf(ports[c.app]!, c.proc.pid) === 'other') return 'taken';
          return outcome;
        }),
      );
      const taken = apps.filter((_, i) => outcomes[i] === 'taken');
      if (taken.length === 0) {
        for (const c of batch) watch(c);
        break;
      }
      const fixed = taken.filter((a) => !chosen.has(a));
      if (fixed.length)
        throw new StackError(
          `${takenText(fixed)} taken by another process before the app could listen on it. ` +
            'Is another `npm start` running? Stop it, or choose other ports (GATEWAY_PORT=...).',
        );
      if (attempt >= START_ATTEMPTS)
        throw new StackError(`${takenText(taken)} taken by another process again, ${attempt} start-ups in a row`);
      say(`${takenText(taken)} taken by another process before the app could listen on it; starting again`);
      await Promise.all(batch.map(discard));
      choose = taken;
    }
    say(`${apps.length} apps ready`);

    checkAborted();
    // 5. Platform credentials.
    const platforms: Stack['platforms'] = {};
    if (wanted.length) {
      if (!grpc.identity)
        throw new StackError(
          'platform credentials need the identity service, which is not part of this stack',
        );
      for (const w of wanted) {
        const p = await ensurePlatformCredential(grpc.identity, w, { platformName: opts.platformName });
        platforms[w.environment === 'SANDBOX' ? 'sandbox' : 'production'] = p;
      }
    }

    checkAborted();
    opts.signal?.removeEventListener('abort', onAbort);
    started = true;
    return {
      baseUrl: `${gatewayUrl}${basePath}`,
      gatewayUrl,
      grpc,
      metrics: Object.fromEntries(
        apps.flatMap((a) => (metricsPorts[a] ? [[a, `http://127.0.0.1:${metricsPorts[a]}/metrics`]] : [])),
      ),
      apps,
      databaseUrl,
      natsUrl,
      prefix,
      env: shared,
      platforms,
      logs: (app, lines) => children.find((c) => c.app === app)?.ring.tail(lines) ?? [],
      pid: (app) => children.find((c) => c.app === app && !c.exit)?.proc.pid,
      failed,
      stop,
      restart,
    };
  } catch (err) {
    opts.signal?.removeEventListener('abort', onAbort);
    await stop();
    throw opts.signal?.aborted ? new StackError('start-up aborted') : err;
  }
}

interface WantedCredential extends Credential {
  environment: PlatformEnvironment;
  source: CredentialSource;
}

function resolveCredentials(opts: StackOptions, root: string): WantedCredential[] {
  const out: WantedCredential[] = [];
  if (opts.credentials === false) return out;
  const from = (
    value: string | Credential | undefined,
    variable: string,
    environment: PlatformEnvironment,
    source: WantedCredential['source'],
  ) => {
    if (value === undefined || value === '') return;
    const c = typeof value === 'string' ? parseCredential(value, variable) : value;
    out.push({ ...c, environment, source });
  };
  if (opts.credentials) {
    from(opts.credentials.sandbox, 'credentials.sandbox', 'SANDBOX', 'option');
    from(opts.credentials.production, 'credentials.production', 'PRODUCTION', 'option');
  } else {
    from(process.env.SANDBOX_PLATFORM_CREDENTIALS, 'SANDBOX_PLATFORM_CREDENTIALS', 'SANDBOX', 'env');
    from(process.env.PRODUCTION_PLATFORM_CREDENTIALS, 'PRODUCTION_PLATFORM_CREDENTIALS', 'PRODUCTION', 'env');
  }
  if (out.length === 0) {
    if (opts.localCredentialFile === false) {
      out.push({ ...generateCredential(), environment: 'SANDBOX', source: 'generated' });
    } else {
      const file = opts.localCredentialFile ?? join(root, '.sluice', 'sandbox-credentials.json');
      const { credential } = loadOrCreateLocalCredential(file);
      out.push({ ...credential, environment: 'SANDBOX', source: 'local-file' });
    }
  }
  return out;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

function tailText(c: Child, silent?: boolean): string {
  if (!silent) return '';
  const t = c.ring.tail(40);
  return t.length ? `; its last output:\n${t.map((l) => `  ${l}`).join('\n')}` : '';
}

async function assertPortsFree(ports: { app: AppName; host: string; port: number }[]): Promise<void> {
  const busy: string[] = [];
  await Promise.all(
    ports.map(
      ({ app, host, port }) =>
        new Promise<void>((done) => {
          const srv = createServer();
          srv.once('error', (e: NodeJS.ErrnoException) => {
            if (e.code === 'EADDRINUSE') busy.push(`${port} (${app})`);
            done();
          });
          srv.listen(port, host, () => srv.close(() => done()));
        }),
    ),
  );
  if (busy.length) {
    throw new StackError(
      `port${busy.length > 1 ? 's' : ''} ${busy.join(', ')} already in use. Is another \`npm start\` running? ` +
        'Stop it, or choose other ports (GATEWAY_PORT=...).',
    );
  }
}

/** Runs `fn` over `items`, at most `limit` at a time; the first failure stops taking new items and is rethrown. */
export async function runLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  const queue = [...items];
  const errors: unknown[] = [];
  await Promise.all(
    Array.from({ length: Math.min(limit, queue.length) }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
        try {
          await fn(item);
        } catch (e) {
          errors.push(e);
          queue.length = 0;
        }
      }
    }),
  );
  if (errors.length) throw errors[0];
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
