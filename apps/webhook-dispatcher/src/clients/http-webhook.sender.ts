import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { blockedAddressReason, urlHost, webhookUrlProblem } from '../domain/address-policy.js';
import { signWebhook } from '../domain/signing.js';
import type { AttemptResult } from '../domain/delivery.js';
import type { WebhookSender } from '../app/ports.js';
import { endSpan, failSpan, SpanKind, startSpan, withSpan } from '@sluice/tracing';

export interface SenderOptions {
  /** Abort an attempt (connect + response) after this long. */
  timeoutMs: number;
  /** Allow private, loopback and other non-public targets (local runs only). */
  allowPrivateTargets: boolean;
  /** Bytes of the response body kept (the rest is not read). */
  maxResponseBytes: number;
  userAgent: string;
  /** DNS resolution (replaceable in tests). */
  resolve?: (host: string) => Promise<{ address: string; family: number }[]>;
  now?: () => Date;
}

/** A failure before any byte was sent (bad URL, refused target, DNS). */
class TargetError extends Error {}

const defaultResolve = async (host: string) => dnsLookup(host, { all: true, verbatim: true });

/**
 * Sends signed webhooks over HTTP(S). Resolves the target host itself, refuses
 * non-public addresses (unless allowed), then connects to exactly the address
 * it checked (no second DNS lookup an attacker could rebind). Redirects are
 * not followed: a 3xx is a failed attempt like any other non-2xx.
 */
export class HttpWebhookSender implements WebhookSender {
  private readonly resolve: NonNullable<SenderOptions['resolve']>;
  private readonly now: () => Date;

  constructor(private readonly o: SenderOptions) {
    this.resolve = o.resolve ?? defaultResolve;
    this.now = o.now ?? (() => new Date());
  }

  /**
   * POSTs `payload` (exact JSON text) to `url`, signed with `secrets` (current first). When tracing is
   * on, the attempt is an HTTP client span of the active trace (the URL without its query, which may
   * hold a platform's token); the trace context is not sent to the platform, whose systems are not ours.
   */
  async send(
    url: string,
    secrets: readonly string[],
    webhookId: string,
    payload: string,
  ): Promise<AttemptResult> {
    const span = startSpan('POST', {
      kind: SpanKind.CLIENT,
      attributes: { 'http.request.method': 'POST', 'sluice.webhook_id': webhookId, ...urlAttributes(url) },
    });
    const result = await withSpan(span, () => this.attempt(url, secrets, webhookId, payload));
    if (!result.ok)
      failSpan(span, result.status ? String(result.status) : result.timedOut ? 'timeout' : 'network');
    endSpan(span, undefined, result.status ? { 'http.response.status_code': result.status } : undefined);
    return result;
  }

  private async attempt(
    url: string,
    secrets: readonly string[],
    webhookId: string,
    payload: string,
  ): Promise<AttemptResult> {
    const attemptedAt = this.now();
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const { target, address } = await this.checkTarget(url);
      const headers = {
        ...signWebhook(secrets, webhookId, this.now(), payload),
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(payload)),
        'user-agent': this.o.userAgent,
        accept: '*/*',
      };
      const res = await this.post(target, address, headers, payload, started);
      const ok = res.status >= 200 && res.status < 300;
      return {
        url,
        attemptedAt,
        durationMs: elapsed(),
        status: res.status,
        body: res.body,
        ...(res.retryAfter !== undefined ? { retryAfter: res.retryAfter } : {}),
        ok,
        ...(ok ? {} : { error: `endpoint answered HTTP ${res.status}` }),
      };
    } catch (err) {
      const timedOut = (err as { name?: string }).name === 'TimeoutError';
      return {
        url,
        attemptedAt,
        durationMs: elapsed(),
        error: describe(err),
        ok: false,
        ...(timedOut ? { timedOut } : {}),
      };
    }
  }

  /** Validates the URL and resolves its host to one allowed address. */
  async checkTarget(url: string): Promise<{ target: URL; address: { address: string; family: number } }> {
    const problem = webhookUrlProblem(url);
    if (problem) throw new TargetError(`webhook URL ${problem}`);
    const target = new URL(url);
    const host = urlHost(target);
    let addresses: { address: string; family: number }[];
    if (isIP(host)) {
      addresses = [{ address: host, family: isIP(host) }];
    } else {
      try {
        addresses = await this.resolve(host);
      } catch (err) {
        throw new TargetError(
          `could not resolve ${host}: ${(err as { code?: string }).code ?? (err as Error).message}`,
        );
      }
      if (addresses.length === 0) throw new TargetError(`could not resolve ${host}: no addresses`);
    }
    if (!this.o.allowPrivateTargets) {
      for (const a of addresses) {
        const reason = blockedAddressReason(a.address);
        if (reason) {
          throw new TargetError(
            `target refused: ${host} resolves to ${a.address} (${reason}); webhooks are only sent to public addresses`,
          );
        }
      }
    }
    return { target, address: addresses[0]! };
  }

  private post(
    target: URL,
    address: { address: string; family: number },
    headers: Record<string, string>,
    payload: string,
    started: number,
  ): Promise<{ status: number; body: string; retryAfter?: string }> {
    const pinned: LookupFunction = (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all)
        (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [address]);
      else callback(null, address.address, address.family);
    };
    const host = urlHost(target);
    const isHttps = target.protocol === 'https:';
    const options: https.RequestOptions = {
      method: 'POST',
      protocol: target.protocol,
      host,
      port: target.port || (isHttps ? 443 : 80),
      path: `${target.pathname}${target.search}`,
      headers,
      agent: false,
      lookup: pinned,
      ...(isHttps && !isIP(host) ? { servername: host } : {}),
    };
    const limit = this.o.maxResponseBytes;
    const timeoutMs = this.o.timeoutMs;
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (err: Error | null, value?: { status: number; body: string; retryAfter?: string }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(value!);
      };
      const req = (isHttps ? https : http).request(options, (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = () =>
          finish(null, {
            status: res.statusCode ?? 0,
            body: decodeTruncated(Buffer.concat(chunks), limit),
            ...(typeof res.headers['retry-after'] === 'string'
              ? { retryAfter: res.headers['retry-after'] }
              : {}),
          });
        res.on('data', (chunk: Buffer) => {
          if (kept < limit) {
            chunks.push(chunk);
            kept += chunk.length;
          }
          if (kept >= limit) {
            // Enough kept: stop reading the rest of a large body.
            done();
            res.destroy();
          }
        });
        // The status is known: a body cut short still yields the answer.
        res.on('end', done);
        res.on('error', done);
        res.on('close', done);
      });
      const remaining = Math.max(1, timeoutMs - (performance.now() - started));
      const timer = setTimeout(() => {
        const e = new Error(`timed out after ${timeoutMs} ms`);
        e.name = 'TimeoutError';
        finish(e);
        req.destroy(e);
      }, remaining);
      req.on('error', (e) => finish(e));
      req.end(payload);
    });
  }
}

/** The span attributes of a webhook URL: no query string, no credentials. */
function urlAttributes(url: string): Record<string, string | number> {
  try {
    const u = new URL(url);
    return {
      'url.full': `${u.protocol}//${u.host}${u.pathname}`,
      'server.address': urlHost(u),
      ...(u.port ? { 'server.port': Number(u.port) } : {}),
    };
  } catch {
    return {};
  }
}

function decodeTruncated(buf: Buffer, limit: number): string {
  const text = buf.subarray(0, limit).toString('utf8');
  // A cut in the middle of a multi-byte character decodes to U+FFFD; drop it.
  return buf.length > limit ? text.replace(/\uFFFD$/, '') : text;
}

function describe(err: unknown): string {
  if (err instanceof TargetError) return err.message;
  const e = err as { code?: string; message?: string; name?: string };
  if (e.name === 'TimeoutError') return e.message ?? 'timed out';
  const code = e.code ? `${e.code}: ` : '';
  return `network error: ${code}${e.message ?? String(err)}`.slice(0, 500);
}
