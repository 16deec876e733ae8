import { Type } from '@sinclair/typebox';
import { DomainError, invalidInput } from '@sluice/core';
import { currentContext } from '@sluice/logging';
import type { RouteModule } from '../../src/http/types.js';
import { requireSandbox } from '../../src/http/types.js';
import { Currency, Id, Page, Timestamp } from '@sluice/api';
import { ErrorBody, PageQuery } from '../../src/schemas/common.js';

/** Test-only route module exercising the gateway core (no real resource behind it). */
export interface TestRouteState {
  widgetCalls: number;
  flakyCalls: number;
  /** Resolves the in-flight /slow request. */
  releaseSlow?: () => void;
  slowStarted?: () => void;
}

const Address = Type.Object(
  { line1: Type.String({ minLength: 1 }), postalCode: Type.String({ minLength: 1, maxLength: 10 }) },
  { additionalProperties: false },
);

const WidgetInput = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    kind: Type.Union([Type.Literal('SMALL'), Type.Literal('LARGE')]),
    amount: Type.Integer({ minimum: 0 }),
    address: Type.Optional(Address),
    tags: Type.Optional(Type.Array(Type.String({ maxLength: 5 }))),
  },
  { additionalProperties: false },
);

const Widget = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    kind: Type.String(),
    amount: Type.Integer(),
    call: Type.Integer(),
    createdAt: Timestamp,
  },
  { $id: 'Widget' },
);

const Exchange = Type.Object(
  { from: Currency, to: Currency, rate: Type.Number() },
  { additionalProperties: false },
);

export function testRoutes(state: TestRouteState): RouteModule {
  return async (app, deps) => {
    app.post(
      '/widgets',
      {
        schema: {
          summary: 'Create a widget',
          tags: ['Test'],
          body: WidgetInput,
          response: { 201: Widget, 400: ErrorBody },
        },
      },
      async (request, reply) => {
        state.widgetCalls++;
        // A field the response schema does not declare: it must not be sent.
        const widget = {
          id: `Widget:${state.widgetCalls}`,
          ...request.body,
          call: state.widgetCalls,
          createdAt: new Date().toISOString(),
          secretInternal: 'x',
        };
        return reply.code(201).send(widget);
      },
    );
    app.get(
      '/widgets',
      {
        schema: {
          tags: ['Test'],
          querystring: Type.Object(
            { ...PageQuery, kind: Type.Optional(Type.Union([Type.Literal('SMALL'), Type.Literal('LARGE')])) },
            { additionalProperties: false },
          ),
          response: { 200: Page(Widget, 'WidgetList') },
        },
      },
      async (request) => {
        const q = request.query;
        const res = await deps.clients.identity.listCustomers({
          platformId: request.platform.id,
          customerType: 'CUSTOMER_TYPE_UNSPECIFIED' as never,
          isIncludingDeleted: false,
          page: { limit: q.limit ?? 0, ...(q.cursor ? { cursor: q.cursor } : {}) },
        });
        return { data: [], hasMore: res.page!.hasMore, totalCount: res.page!.totalCount, limitSeen: q.limit };
      },
    );
    app.get(
      '/widgets/:widgetId',
      { schema: { params: Type.Object({ widgetId: Id('Widget') }, { additionalProperties: false }) } },
      async (request) => {
        await deps.clients.identity.getPlatform({ platformId: request.params.widgetId });
        return {};
      },
    );
    app.post(
      '/exchange',
      { schema: { body: Exchange, response: { 200: Exchange } } },
      async (request) => request.body,
    );
    app.get('/boom', async () => {
      throw new Error('pg: password authentication failed for user "sluice" at 10.0.0.7');
    });
    app.get('/upstream-crash', async () => {
      await deps.clients.identity.getPlatform({ platformId: 'explode' });
      return {};
    });
    app.get('/bigint', async () => ({ amount: 9_000_000_000_000_000n, nested: [{ fee: 12n }] }));
    app.get('/whoami', async (request) => ({ platform: request.platform, context: currentContext() }));
    app.post('/slow', async (request, reply) => {
      state.slowStarted?.();
      await new Promise<void>((resolve) => (state.releaseSlow = resolve));
      return reply.code(201).send({ ok: true, requestId: request.id });
    });
    app.post('/flaky', async (_request, reply) => {
      state.flakyCalls++;
      if (state.flakyCalls === 1)
        throw new DomainError('UNAVAILABLE', 'LEDGER_UNAVAILABLE', 'Ledger is unavailable');
      return reply.code(201).send({ call: state.flakyCalls });
    });
    app.post('/conflict', async () => {
      throw new DomainError('ALREADY_EXISTS', 'WIDGET_EXISTS', 'A widget with this name exists');
    });
    // Invalid input only the handler sees (as a service's own check of an id would answer).
    app.post('/refused', async () => {
      throw invalidInput([{ field: 'widgetId', message: 'names no widget' }]);
    });
    app.post('/empty', async (request) => ({ body: request.body ?? null }));
    app.post('/transfers', { config: { permission: 'TRANSACT' } }, async (_request, reply) =>
      reply.code(201).send({ ok: true }),
    );
    app.post('/sandbox/thing', async (request) => {
      requireSandbox(request);
      return { ok: true };
    });
  };
}
