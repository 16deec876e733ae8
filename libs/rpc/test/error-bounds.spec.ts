import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeGenericClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { DomainError, invalidInput, isDomainError } from '@sluice/core';
import { createLogger } from '@sluice/logging';
import {
  boundedErrorBody,
  createRpcClient,
  implement,
  MAX_ERROR_MESSAGE_LENGTH,
  MAX_ERROR_METADATA_BYTES,
  startRpcServer,
  type RpcServer,
} from '../src/index.js';
import { jsonMethod } from './fixtures/echo-service.js';

// A service that refuses by echoing what it was sent, as a careless domain error does.
const method = (name: string) => jsonMethod('test.v1.Echoing', name);
const Echoing = { refuse: method('Refuse'), echo: method('Echo') } as unknown as ServiceDefinition;
const EchoingClient = makeGenericClientConstructor(Echoing, 'test.v1.Echoing');

type Req = { currencyCode: string };

describe('error transport bounds', () => {
  let server: RpcServer;
  let client: Record<string, (req: unknown) => Promise<Record<string, unknown>>> & { close(): void };

  beforeAll(async () => {
    const logger = createLogger('rpc-test', 'silent');
    const handlers = {
      refuse: async (req: Req) => {
        throw invalidInput([{ field: 'currencyCode', message: `${req.currencyCode} is not a currency` }], `Currency ${req.currencyCode} is not supported`);
      },
      echo: async (req: Req) => ({ currencyCode: req.currencyCode }),
    };
    server = await startRpcServer({
      host: '127.0.0.1',
      port: 0,
      services: [implement(Echoing, handlers as never, logger)],
      logger,
    });
    client = createRpcClient(EchoingClient as never, `127.0.0.1:${server.port}`, {
      defaultDeadlineMs: 3000,
    }) as never;
  });

  afterAll(async () => {
    client?.close();
    await server?.shutdown(0);
  });

  it('a refusal echoing a 60 kB value answers at once, bounded, and the channel keeps serving other calls', async () => {
    const huge = 'X'.repeat(60_000);
    const other = client.echo({ currencyCode: 'USD' });
    const started = Date.now();
    const err = await client.refuse({ currencyCode: huge }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeLessThan(1500);
    expect(isDomainError(err)).toBe(true);
    const e = err as DomainError;
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_LENGTH);
    expect((e.details?.errors as { field: string }[])[0]!.field).toBe('currencyCode');
    expect(JSON.stringify(e.details).length).toBeLessThan(MAX_ERROR_METADATA_BYTES);
    // A call in flight at the same time, and one made after, on the same channel.
    await expect(other).resolves.toEqual({ currencyCode: 'USD' });
    await expect(client.echo({ currencyCode: 'EUR' })).resolves.toEqual({ currencyCode: 'EUR' });
  });

  it('keeps field names when the details are too large even once bounded', () => {
    const errors = Array.from({ length: 50 }, (_, i) => ({ field: `f${i}`, message: 'x'.repeat(1000) }));
    const body = boundedErrorBody('INVALID_INPUT', 'y'.repeat(10_000), { errors, field: 'f0' });
    expect(Buffer.byteLength(JSON.stringify(body))).toBeLessThanOrEqual(MAX_ERROR_METADATA_BYTES);
    expect(body.details.field).toBe('f0');
    expect((body.details.errors as { field: string }[]).map((x) => x.field)).toEqual(
      errors.slice(0, 20).map((x) => x.field),
    );
    // Small errors travel as they are.
    expect(boundedErrorBody('NOT_FOUND', 'No such thing', { id: 'Thing:1' })).toEqual({
      code: 'NOT_FOUND',
      message: 'No such thing',
      details: { id: 'Thing:1' },
    });
  });
});
