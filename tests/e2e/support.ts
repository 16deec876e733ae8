/**
 * Shared set-up of the end-to-end suites: each file gets its own database,
 * subject prefix and free ports, and starts every process exactly as
 * `npm start` does (tools/stack.ts).
 */
import { randomBytes } from 'node:crypto';
import { createTestDatabase, dropStreams, natsUrl, testPrefix } from '@sluice/testing';
import { newId } from '@sluice/core';
import { startStack, type Stack, type StackOptions } from '../../tools/stack.js';

export interface Credential {
  tokenId: string;
  secret: string;
}

export function newCredential(): Credential {
  return { tokenId: newId('Token'), secret: randomBytes(32).toString('base64url') };
}

export function basic(c: Credential): string {
  return 'Basic ' + Buffer.from(`${c.tokenId}:${c.secret}`).toString('base64');
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are asserted field by field
  json: any;
  text: string;
}

export interface ApiOptions {
  body?: unknown;
  /** A raw request body (sent as application/json), e.g. malformed JSON. */
  raw?: string;
  /** Authorization header value; `null` sends none. Default: an `authorization` in `headers`, else the client's credential. */
  auth?: string | null;
  headers?: Record<string, string>;
}

export type Api = (method: string, path: string, opts?: ApiOptions) => Promise<ApiResponse>;

/** An HTTP client of the stack's versioned API, authenticated with `credential` by default. */
export function apiClient(stack: Stack, credential: Credential): Api {
  return async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const explicit = Object.keys(headers).some((h) => h.toLowerCase() === 'authorization');
    if (opts.auth !== null && !explicit) headers.authorization = opts.auth ?? basic(credential);
    if (opts.body !== undefined || opts.raw !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(stack.baseUrl + path, {
      method,
      headers,
      body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, json, text };
  };
}

export interface E2eStack {
  stack: Stack;
  /** Tears down the processes, the database and the streams. */
  stop(): Promise<void>;
}

/**
 * Starts every process on a fresh database and prefix, with the given platform credentials.
 * `migrate: false` lets each service apply its own migrations at start instead of one
 * `main.ts migrate` process per app first (much quicker on a busy machine).
 */
export async function startE2eStack(
  label: string,
  credentials: { sandbox?: Credential; production?: Credential },
  opts: Pick<StackOptions, 'env' | 'appEnv' | 'migrate'> = {},
): Promise<E2eStack> {
  const db = await createTestDatabase(label);
  const nats = await natsUrl();
  const prefix = testPrefix(label);
  const asString = (c?: Credential) => (c ? `${c.tokenId}:${c.secret}` : undefined);
  let stack: Stack;
  try {
    stack = await startStack({
      databaseUrl: db.url,
      natsUrl: nats,
      prefix,
      freePorts: true,
      gatewayPort: 0,
      silent: true,
      localCredentialFile: false,
      credentials: {
        ...(credentials.sandbox ? { sandbox: asString(credentials.sandbox) } : {}),
        ...(credentials.production ? { production: asString(credentials.production) } : {}),
      },
      logLevel: 'warn',
      ...opts,
    });
  } catch (err) {
    await db.drop().catch(() => undefined);
    throw err;
  }
  return {
    stack,
    async stop() {
      await stack.stop();
      await db.drop();
      await dropStreams(nats, prefix);
    },
  };
}
