import { describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { status } from '@grpc/grpc-js';
import { DomainError } from '@sluice/core';
import type { Logger } from '@sluice/logging';
import { RpcError } from '@sluice/rpc';
import { installErrorHandling } from './error.handler.js';

/** The handler's log lines, by level. */
function capturingLogger() {
  const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => lines.push({ level, fields, msg });
  return { lines, logger: { warn: at('warn'), error: at('error') } as unknown as Logger };
}

async function answerTo(err: Error) {
  const { lines, logger } = capturingLogger();
  const app = Fastify();
  installErrorHandling(app, logger, 1024);
  app.get('/x', async () => {
    throw err;
  });
  const res = await app.inject({ url: '/x' });
  await app.close();
  return { res, lines };
}

describe('the error handler logs what a 5xx came from', () => {
  it('an expected 503 (a downstream UNAVAILABLE) is logged with its kind and message', async () => {
    const { res, lines } = await answerTo(
      new DomainError('UNAVAILABLE', 'SERVICE_UNAVAILABLE', 'A dependency of this service is unavailable'),
    );
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(lines).toEqual([
      {
        level: 'warn',
        msg: 'request failed',
        fields: {
          code: 'SERVICE_UNAVAILABLE',
          route: '/x',
          cause: 'UNAVAILABLE: A dependency of this service is unavailable',
        },
      },
    ]);
  });

  it('a transport failure (a deadline) answers the generic 503 and logs the error itself', async () => {
    const { res, lines } = await answerTo(new RpcError(status.DEADLINE_EXCEEDED, 'Deadline exceeded after 5.001s'));
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: 'The service is temporarily unavailable; retry later',
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.level).toBe('error');
    expect((lines[0]!.fields.err as Error).message).toBe('Deadline exceeded after 5.001s');
  });

  it('a 4xx is not logged', async () => {
    const { res, lines } = await answerTo(new DomainError('NOT_FOUND', 'CUSTOMER_NOT_FOUND', 'Customer not found'));
    expect(res.statusCode).toBe(404);
    expect(lines).toEqual([]);
  });
});
