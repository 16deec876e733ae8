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
 * The apps run as the image runs them: each bundled by tools/build-app.mjs (unminified, into
 * tmp/stack-builds/<run>/, about a second for all of them) and started as `node main.mjs`, so a
 * start or a restart does not transpile TypeScript (`fromSource`, or SLUICE_FROM_SOURCE=1, runs
 * `node --import tsx apps/<app>/src/main.ts` instead).
 *
 * A child that exits while the stack runs stops the others and fails the stack.
 * Except one killed on purpose by `stack.restart(app)` (crash-recovery tests), which is respawned.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Writable } from 'node:stream';
import { GATEWAY_DEFAULT_PORT, SERVICE_PORTS, defaultMetricsPort, type ServiceName } from '@sluice/config';
import { ensureDatabase } from '@sluice/store/database';
import { connectBus, ensureStreams } from '@sluice/events/nats';
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
import { startBalancer, type Balancer } from '@sluice/testing/balancer';
import { buildApp } from './build-app.mjs';

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
  // The concurrency tests open hundreds of connections from one address (fetch pools per request).
  MAX_CONNECTIONS_PER_CLIENT: '100000',
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
  payments: { PAYMENTS_DATA_MASTER_KEY: 'vUT4XWmDcY+zgPQjP7v7qglBCMFQuNk9qr/Vcv3pKNA=' },
};

/** Start-up attempts when ports the stack chose are taken by other processes before the apps bind them. */
const START_ATTEMPTS = 5;
/** Tries of `restart(app)` whose port another process holds (it must come back on the same one). */
const RESTART_ATTEMPTS = 3;

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The name of one process of an app: the app's for its first replica, then `identity#2`, `identity#3`... */
export function unitKey(app: AppName, replica: number): string {
  return replica === 1 ? app : `${app}#${replica}`;
}

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

/** Where `buildApps` puts each run's bundles (inside the repository: the bundles import its node_modules). */
export const STACK_BUILDS_DIR = join('tmp', 'stack-builds');

/**
 * Bundles `apps` for one run (tools/build-app.mjs, unminified) into a directory of their own under
 * tmp/stack-builds/, so runs side by side never read each other's half-written files; resolves to
 * that directory (remove it when the run ends). Directories of runs older than a day are removed.
 */
export async function buildApps(apps: readonly AppName[], root = ROOT): Promise<string> {
  const base = join(root, STACK_BUILDS_DIR);
  if (existsSync(base))
    for (const d of readdirSync(base)) {
      const dir = join(base, d);
      try {
        if (Date.now() - statSync(dir).mtimeMs > 86_400_000) rmSync(dir, { recursive: true, force: true });
      } catch {
        // another run removed it
      }
    }
  const dir = join(base, `${process.pid}-${randomBytes(4).toString('hex')}`);
  await Promise.all(apps.map((app) => buildApp(app, { root, outdir: join(dir, app), minify: false })));
  return dir;
}

/** True unless SLUICE_FROM_SOURCE asks for the TypeScript sources under tsx. */
export function runBundlesByDefault(env: NodeJS.ProcessEnv = process.env): boolean {
  return !['1', 'true'].includes((env.SLUICE_FROM_SOURCE ?? '').toLowerCase());
}

export interface StackOptions {
  /** Repository root (default: the parent of tools/). */
  root?: string;
  /** Run `apps/<app>/src/main.ts` under tsx instead of the bundles (default: SLUICE_FROM_SOURCE). */
  fromSource?: boolean;
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
  /**
   * Processes per app (default 1): a number for every app, or per app. Callers reach a
   * backend's replicas round robin (its `<SERVICE>_GRPC_URL` lists them all); gateway
   * replicas sit behind a TCP balancer on the gateway port, as behind a Kubernetes Service.
   * Replicas after the first always get free ports.
   */
  replicas?: number | Partial<Record<AppName, number>>;
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
  /** `http://127.0.0.1:<METRICS_PORT>/metrics` of every app whose metrics endpoint is on (its first replica). */
  metrics: Partial<Record<AppName, string>>;
  /** The same for every process: `identity`, `identity#2`, ... */
  metricsByProcess: Record<string, string>;
  apps: AppName[];
  databaseUrl: string;
  natsUrl: string;
  prefix: string;
  /** The environment shared by every child (without the per-app ports). */
  env: Record<string, string>;
  platforms: { sandbox?: BootstrappedPlatform; production?: BootstrappedPlatform };
  /** Processes per app. */
  replicas: Record<AppName, number>;
  /**
   * The last lines an app wrote (stdout and stderr): its first replica, or the one named (`identity#2`),
   * with those of the processes `restart` replaced before it.
   */
  logs(app: AppName | string, lines?: number): string[];
  /** The process id of a running app (its first replica, or the replica given, 1-based). */
  pid(app: AppName, replica?: number): number | undefined;
  /** Resolves when a child exits on its own (the rest are stopped by then). Never rejects. */
  failed: Promise<AppExit>;
  /**
   * Kills one running app deliberately (SIGKILL by default: a crash, no drain) and
   * starts it again with the same environment and ports; resolves once it is
   * ready again. The deliberate exit does not fail the stack (crash-recovery tests).
   * `replica` (1-based, default 1) names one process of a replicated app. A gateway
   * replica leaves the balancer's rotation before the signal and rejoins once ready
   * (a terminating pod's endpoint leaves its Service first).
   */
  restart(app: AppName, signal?: NodeJS.Signals, replica?: number): Promise<void>;
  /** SIGTERM to every child (the gateway first), SIGKILL after the grace period. Idempotent. */
  stop(): Promise<void>;
}

/** A running app process (`node <bundles>/<app>/main.mjs ...` or `node --import tsx apps/<app>/src/main.ts ...`). */
export interface AppProcess {
  app: AppName;
  /** The app and, from the second replica on, its number: `identity`, `identity#2`. */
  unit: string;
  proc: ChildProcess;
  /** Its last output lines. */
  ring: LineRing;
  exited: Promise<AppExit>;
  exit?: AppExit;
}
type Child = AppProcess;

/** Lines of output kept per app process (and, across its restarts, per unit: `Stack.logs`). */
const APP_LOG_LINES = 300;

/**
 * Starts `<bundles>/<app>/main.mjs` (built by `buildApps`), or without `bundles` the app's
 * TypeScript source under tsx, plus args, in its own process group, its output lines prefixed
 * with `[label]` (colored when asked) and kept in a ring buffer.
 */
export function spawnAppProcess(o: {
  root?: string;
  /** The directory `buildApps` returned; without it the source runs under tsx. */
  bundles?: string;
  app: AppName;
  args?: string[];
  env: NodeJS.ProcessEnv;
  /** Which process of the app (`identity#2`); default the app. */
  unit?: string;
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
    o.bundles
      ? ['--enable-source-maps', join(o.bundles, o.app, 'main.mjs'), ...(o.args ?? [])]
      : ['--import', 'tsx', join('apps', o.app, 'src', 'main.ts'), ...(o.args ?? [])],
    {
      cwd: o.root ?? ROOT,
      env: o.env,
      // Own process group: a terminal Ctrl-C reaches only the supervisor, which then stops
      // the children in order with one SIGTERM each (a second signal would cut their drain).
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const ring = new LineRing(APP_LOG_LINES);
  const label = o.label ?? o.unit ?? o.app;
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
    unit: o.unit ?? o.app,
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
  const replicas = Object.fromEntries(
    APPS.map((a) => [a, typeof opts.replicas === 'number' ? opts.replicas : (opts.replicas?.[a] ?? 1)]),
  ) as Record<AppName, number>;
  for (const [a, n] of Object.entries(replicas))
    if (!(Number.isInteger(n) && n >= 1 && n <= 16)) throw new StackError(`replicas of ${a} must be 1 to 16 (got ${n})`);
  /** Every process the stack runs: `identity`, `identity#2`, ... (the app's first replica is the app's name). */
  const units = apps.flatMap((app) =>
    Array.from({ length: replicas[app] }, (_, i) => ({ app, replica: i + 1, key: unitKey(app, i + 1) })),
  );
  type Unit = (typeof units)[number];
  const unitOf = (key: string): Unit => units.find((u) => u.key === key)!;
  /** Gateway replicas are reached through a TCP balancer on the gateway port (libs/testing/src/balancer.ts). */
  const balanced = apps.includes('gateway') && replicas.gateway > 1;
  let balancer: Balancer | undefined;
  /** The list-cursor key the gateway replicas of this stack share. */
  const stackCursorKey = randomBytes(32).toString('base64');
  const width = Math.max(...units.map((u) => u.key.length), 'stack'.length);

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
  const hostOf = (key: string) => (key === 'gateway' && !balanced ? gatewayHost : '127.0.0.1');
  const portUnits: string[] = [...units.filter((u) => u.app !== 'gateway'), ...units.filter((u) => u.app === 'gateway')].map(
    (u) => u.key,
  );
  /** The serving port of each process (gRPC, or the gateway's HTTP port). */
  const ports: Partial<Record<string, number>> = {};
  /**
   * Apps whose port the stack chooses. A port found free is free only at that moment: another
   * process can take it before the app binds it, so these are chosen right before the apps are
   * spawned, and an app whose chosen port was taken is started again on a fresh one (step 3).
   */
  const chosen = new Set<string>();
  /** The gateway's public port when its replicas are balanced (the balancer's; 0: a free one). */
  let publicPort: number | undefined;
  for (const key of portUnits) {
    const { app, replica } = unitOf(key);
    const given = app === 'gateway' ? (opts.gatewayPort ?? envGatewayPort) : opts.grpcPorts?.[app];
    if (app === 'gateway' && balanced) {
      publicPort ??= given ?? (opts.freePorts ? 0 : DEFAULTS.gatewayPort);
      chosen.add(key);
    } else if (replica > 1) chosen.add(key);
    else if (given !== undefined && given !== 0) ports[key] = given;
    else if (given === 0 || opts.freePorts) chosen.add(key);
    else ports[key] = app === 'gateway' ? DEFAULTS.gatewayPort : SERVICE_PORTS[app];
  }
  /** Each process's METRICS_PORT: given (0 = off), chosen with its serving port, or the default. */
  const metricsPorts: Partial<Record<string, number>> = {};
  for (const key of portUnits) {
    const { app } = unitOf(key);
    const given = opts.appEnv?.[app]?.METRICS_PORT ?? opts.env?.METRICS_PORT;
    if (given !== undefined && (given === '0' || !chosen.has(key) || unitOf(key).replica === 1)) metricsPorts[key] = Number(given);
    else if (!chosen.has(key)) metricsPorts[key] = defaultMetricsPort(app);
  }
  const metricsChosen = new Set(portUnits.filter((k) => metricsPorts[k] === undefined));
  const choosePorts = async (which: readonly string[]) => {
    for (const key of which) {
      ports[key] = undefined;
      if (metricsChosen.has(key)) metricsPorts[key] = undefined;
    }
    const taken = () =>
      new Set(
        [...Object.values(ports), ...Object.values(metricsPorts), balancer?.port].filter(
          (p): p is number => p !== undefined && p !== 0,
        ),
      );
    for (const key of which) ports[key] = await pickFreePort(hostOf(key), taken());
    for (const key of which) if (metricsChosen.has(key)) metricsPorts[key] = await pickFreePort('127.0.0.1', taken());
  };
  const probeHost = gatewayHost === '0.0.0.0' || gatewayHost === '::' ? '127.0.0.1' : gatewayHost;
  const basePath =
    opts.appEnv?.gateway?.API_BASE_PATH ??
    opts.env?.API_BASE_PATH ??
    (env.API_BASE_PATH || `/${API_VERSION}`);

  // Credentials are resolved before anything starts so a malformed variable fails fast.
  const wanted = resolveCredentials(opts, root);

  // Ports given or defaulted must be free (a chosen one is free when it is chosen).
  await assertPortsFree([
    ...portUnits.flatMap((key) => [
      ...(chosen.has(key) ? [] : [{ app: key, host: hostOf(key), port: ports[key]! }]),
      ...(metricsChosen.has(key) || !metricsPorts[key] ? [] : [{ app: key, host: '127.0.0.1', port: metricsPorts[key] }]),
    ]),
    ...(publicPort ? [{ app: 'gateway', host: gatewayHost, port: publicPort }] : []),
  ]);

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
  const hostUrl = (host: string, port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const applyPorts = () => {
    shared = { ...base };
    const gatewayPort = balanced ? balancer?.port : ports.gateway;
    if (gatewayPort !== undefined) {
      shared.GATEWAY_PORT = String(gatewayPort);
      gatewayUrl = hostUrl(probeHost, gatewayPort);
    }
    for (const b of backends) {
      const addresses = units.filter((u) => u.app === b && ports[u.key] !== undefined).map((u) => `127.0.0.1:${ports[u.key]}`);
      if (addresses.length === 0) continue;
      grpc[b] = addresses.join(',');
      shared[grpcUrlVariable(b)] = grpc[b];
    }
    Object.assign(shared, opts.env);
  };
  applyPorts();

  const childEnv = (key: string): NodeJS.ProcessEnv => {
    const { app } = unitOf(key);
    const port = ports[key];
    const e: NodeJS.ProcessEnv = {
      ...env,
      ...shared,
      ...(port === undefined
        ? {}
        : app === 'gateway'
          ? { GATEWAY_PORT: String(port), ...(balanced ? { GATEWAY_HOST: '127.0.0.1' } : {}) }
          : { GRPC_HOST: '127.0.0.1', GRPC_PORT: String(port) }),
      ...(metricsPorts[key] === undefined ? {} : { METRICS_HOST: '127.0.0.1', METRICS_PORT: String(metricsPorts[key]) }),
      ...opts.appEnv?.[app],
    };
    // N replicas of an app share the connections one process would use (10 by default), so a stack of
    // replicas fits the same Postgres (max_connections 100 here) as a stack of one; payments' job
    // concurrency follows its pool (JOB_CONCURRENCY ≤ DATABASE_POOL_MAX / 2). A cluster sizes Postgres
    // for pods × DATABASE_POOL_MAX instead (docs/operations.md).
    if (replicas[app] > 1 && !e.DATABASE_POOL_MAX) {
      const pool = Math.max(4, Math.ceil(10 / replicas[app]));
      e.DATABASE_POOL_MAX = String(pool);
      if (app === 'payments' && !e.JOB_CONCURRENCY) e.JOB_CONCURRENCY = String(Math.max(1, Math.floor(pool / 2)));
    }
    // Services sealing data at rest require master keys; local stacks get stable, public dev keys unless given.
    for (const [variable, key] of Object.entries(LOCAL_DEV_MASTER_KEYS[app] ?? {})) if (!e[variable]) e[variable] = key;
    // Gateway replicas must accept each other's list cursors: one key for all of them (in production
    // CURSOR_SIGNING_KEY is required; a lone local gateway makes a random one).
    if (app === 'gateway' && balanced && !e.CURSOR_SIGNING_KEY) e.CURSOR_SIGNING_KEY = stackCursorKey;
    // Bootstrap secrets are the supervisor's business, not the services'.
    delete e.SANDBOX_PLATFORM_CREDENTIALS;
    delete e.PRODUCTION_PLATFORM_CREDENTIALS;
    return e;
  };

  const children: Child[] = [];
  /** The last lines of a unit's processes replaced by `restart`, so `logs` reaches before the restart. */
  const earlierLines = new Map<string, LineRing>();
  let started = false;
  let stopping: Promise<void> | undefined;
  let resolveFailed!: (e: AppExit) => void;
  const failed = new Promise<AppExit>((r) => (resolveFailed = r));

  const fromSource = opts.fromSource ?? !runBundlesByDefault(env);
  let bundles: string | undefined;
  const spawnApp = (key: string, args: string[], role: 'run' | 'migrate'): Child =>
    spawnAppProcess({
      root,
      ...(bundles ? { bundles } : {}),
      app: unitOf(key).app,
      unit: key,
      args,
      env: childEnv(key),
      label: role === 'migrate' ? `${key}:migrate` : key,
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
      say(`${c.unit} did not stop within ${stopGraceMs} ms; killing it`);
      killGroup(c.proc.pid!, 'SIGKILL');
    }, stopGraceMs);
    await c.exited;
    clearTimeout(timer);
  };

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const running = children.filter((c) => !c.exit);
      if (running.length) say(`stopping ${running.map((c) => c.unit).join(', ')}`);
      const gateway = running.filter((c) => c.app === 'gateway');
      await Promise.all(gateway.map(stopChild));
      await Promise.all(running.filter((c) => c.app !== 'gateway').map(stopChild));
      await balancer?.close();
      process.off('exit', killAllSync);
      if (bundles) rmSync(bundles, { recursive: true, force: true });
      for (const c of running) {
        if (c.exit && c.exit.code !== 0 && c.exit.code !== null)
          say(`${c.unit} exited with code ${c.exit.code} while stopping`);
      }
    })();
    return stopping;
  };

  const describeExit = (c: Child, e: AppExit) => {
    const how = e.signal ? `was killed by ${e.signal}` : `exited with code ${e.code}`;
    // Silenced output is shown here; printed output is repeated briefly so the cause sits next to the failure.
    const tail = c.ring.tail(opts.silent ? 40 : 5);
    return `${c.unit} ${how}${tail.length ? `; its last output:\n${tail.map((l) => `  ${l}`).join('\n')}` : ''}`;
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
    return !(await isPortFree(hostOf(c.unit), ports[c.unit]!).catch(() => true));
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
          ? await checkHttp(`${hostUrl(balanced ? '127.0.0.1' : probeHost, ports[c.unit]!)}/healthz`)
          : await checkGrpcHealth(`127.0.0.1:${ports[c.unit]!}`).then(
              (h) => 'status' in h && h.status === 'SERVING',
            );
      if (answers) {
        const listener = listenerOf(ports[c.unit]!, c.proc.pid);
        if (listener === 'ours' || listener === 'unknown') return 'ready';
        if (listener === 'other') return 'taken';
        // 'none': it answered and stopped listening since; look again.
      }
      if (Date.now() > deadline)
        throw new StackError(`${c.unit} was not ready within ${startTimeoutMs} ms${tailText(c, opts.silent)}`);
      await sleep(250);
    }
  };

  /** "port 41234 (agents) was" / "ports 41234 (agents), 41236 (gateway) were" */
  const takenText = (taken: readonly string[]) =>
    `port${taken.length > 1 ? 's' : ''} ${taken.map((a) => `${ports[a]} (${a})`).join(', ')} ${taken.length > 1 ? 'were' : 'was'}`;

  /** Kills a child that lost its port and forgets it. */
  const discard = async (c: Child) => {
    deliberate.add(c);
    if (!c.exit && c.proc.pid) killGroup(c.proc.pid, 'SIGKILL');
    await c.exited;
    children.splice(children.indexOf(c), 1);
  };

  /** Whether `app`'s processes sit in the balancer's rotation (gateway replicas behind the balancer). */
  const inRotation = (app: AppName) => balanced && app === 'gateway';
  const restart = async (app: AppName, signal: NodeJS.Signals = 'SIGKILL', replica = 1): Promise<void> => {
    const key = unitKey(app, replica);
    const old = children.find((c) => c.unit === key && !c.exit);
    if (!old?.proc.pid) throw new StackError(`${key} is not running`);
    if (stopping) throw new StackError('the stack is stopping');
    deliberate.add(old);
    if (inRotation(app)) balancer?.remove(ports[key]!);
    const signalledAt = Date.now();
    killGroup(old.proc.pid, signal);
    await old.exited;
    const stoppedAt = Date.now();
    children.splice(children.indexOf(old), 1);
    const earlier = earlierLines.get(key) ?? new LineRing(APP_LOG_LINES);
    for (const line of old.ring.tail()) earlier.push(line);
    earlierLines.set(key, earlier);
    say(
      `${key} ${signal === 'SIGKILL' ? 'killed' : `stopped with ${signal} in ${((stoppedAt - signalledAt) / 1000).toFixed(1)} s`} on purpose; starting it again`,
    );
    // On the same port: the other apps know it by that address. Whoever took the port
    // meanwhile may give it back (a port probe does at once), so a few tries.
    for (let attempt = 1; ; attempt++) {
      const c = spawnApp(key, [], 'run');
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
        if (inRotation(app)) balancer?.add(ports[key]!);
        say(`${key} ready again ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s after it stopped`);
        return;
      }
      if (outcome === 'cancelled') {
        watch(c);
        throw new StackError('the stack is stopping');
      }
      await discard(c);
      if (attempt >= RESTART_ATTEMPTS)
        throw new StackError(
          `${takenText([key])} taken by another process while ${key} restarted, and it must come back on the same port`,
        );
      say(`${takenText([key])} taken by another process while ${key} restarted; starting it again on the same port`);
      await sleep(1000);
    }
  };

  const checkAborted = () => {
    if (opts.signal?.aborted) throw new StackError('start-up aborted');
  };
  const onAbort = () => void stop();
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    // 0. The bundles (beside the database and streams: esbuild works in its own process).
    const built = fromSource
      ? Promise.resolve(undefined)
      : (async () => {
          const t = Date.now();
          const dir = await buildApps(apps, root);
          say(`${apps.length} apps bundled in ${((Date.now() - t) / 1000).toFixed(1)} s`);
          return dir;
        })();
    built.catch(() => {}); // awaited below; a failure there is the start-up's
    // 1. Database and streams.
    say(`database ${safeUrl(databaseUrl)}, NATS ${safeUrl(natsUrl)}, subject prefix "${prefix}"`);
    await ensureDatabase(databaseUrl);
    const bus = await connectBus(natsUrl, 'sluice-stack');
    try {
      await ensureStreams(bus.jsm, prefix);
    } finally {
      await bus.close();
    }
    bundles = await built;

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
    if (balanced) {
      // The gateway port belongs to the balancer; the replicas join its rotation once all are ready.
      balancer = await startBalancer({ host: gatewayHost, port: publicPort!, targets: [] });
    }
    let choose = portUnits.filter((k) => chosen.has(k));
    for (let attempt = 1; ; attempt++) {
      checkAborted();
      await choosePorts(choose);
      applyPorts();
      const batch = units.map((u) => {
        const c = spawnApp(u.key, [], 'run');
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
          if (outcome === 'cancelled' && listenerOf(ports[c.unit]!, c.proc.pid) === 'other') return 'taken';
          return outcome;
        }),
      );
      const taken = units.filter((_, i) => outcomes[i] === 'taken').map((u) => u.key);
      if (taken.length === 0) {
        for (const c of batch) watch(c);
        if (balancer) for (const u of units) if (u.app === 'gateway') balancer.add(ports[u.key]!);
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
    say(units.length > apps.length ? `${apps.length} apps ready (${units.length} processes)` : `${apps.length} apps ready`);

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
    const metricsByProcess: Record<string, string> = Object.fromEntries(
      units.flatMap((u) => (metricsPorts[u.key] ? [[u.key, `http://127.0.0.1:${metricsPorts[u.key]}/metrics`]] : [])),
    );
    return {
      baseUrl: `${gatewayUrl}${basePath}`,
      gatewayUrl,
      grpc,
      metrics: Object.fromEntries(Object.entries(metricsByProcess).filter(([key]) => apps.includes(key as AppName))),
      metricsByProcess,
      replicas,
      apps,
      databaseUrl,
      natsUrl,
      prefix,
      env: shared,
      platforms,
      logs: (unit, lines) => {
        const all = [...(earlierLines.get(unit)?.tail() ?? []), ...(children.find((c) => c.unit === unit)?.ring.tail() ?? [])];
        return lines === undefined ? all : all.slice(-lines);
      },
      pid: (app, replica = 1) => children.find((c) => c.unit === unitKey(app, replica) && !c.exit)?.proc.pid,
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

async function assertPortsFree(ports: { app: string; host: string; port: number }[]): Promise<void> {
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
