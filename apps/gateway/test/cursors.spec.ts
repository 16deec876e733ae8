import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { ConfigError } from '@sluice/config';
import { cursorCodec } from '../src/compose.js';
import type { RouteModule } from '../src/http/types.js';
import { PageQuery } from '../src/schemas/common.js';
import { basic, startIdentity, type IdentityHarness } from './support/identity.js';
import { API, startGateway, type Harness } from './support/harness.js';

/**
 * List cursors are bound to the platform, the list and its filters by a tag the
 * gateway signs (src/http/cursor.codec.ts): the service only ever sees its own
 * cursors, and a cursor from another list, platform or filter, or an edited
 * one, is 400 on `cursor` before the service is called.
 */
const KEY = 'k'.repeat(40);
const seen: { list: string; cursor: string | undefined }[] = [];

/** Two lists whose "service" pages forever: nextCursor is `svc:<n>` after the cursor it was given. */
const lists: RouteModule = (app) => {
  for (const list of ['/things', '/others']) {
    app.get(
      list,
      {
        schema: {
          querystring: Type.Object(
            { kind: Type.Optional(Type.Union([Type.Literal('SMALL'), Type.Literal('LARGE')])), ...PageQuery },
            { additionalProperties: false },
          ),
        },
      },
      async (request) => {
        const cursor = request.query.cursor;
        seen.push({ list, cursor });
        const n = cursor ? Number(cursor.slice(4)) + 1 : 1;
        return { data: [], hasMore: true, nextCursor: `svc:${n}`, totalCount: 99 };
      },
    );
  }
};

let idp: IdentityHarness;
let h: Harness;
let other: Harness;
let mine: { authorization: string };
let theirs: { authorization: string };

beforeAll(async () => {
  idp = await startIdentity('gwcursors');
  const a = await idp.token();
  const b = await idp.token();
  mine = { authorization: basic(a.tokenId, a.secret) };
  theirs = { authorization: basic(b.tokenId, b.secret) };
  h = await startGateway(idp.address, { lists }, { CURSOR_SIGNING_KEY: KEY });
  other = await startGateway(idp.address, { lists }, { CURSOR_SIGNING_KEY: KEY });
});

afterAll(async () => {
  await h?.close();
  await other?.close();
  await idp?.stop();
});

const get = (url: string, headers = mine, app = h.app) => app.inject({ url: `${API}${url}`, headers });

function expectRefused(res: { statusCode: number; json(): any }) {
  expect(res.statusCode).toBe(400);
  expect(res.json()).toMatchObject({
    code: 'INVALID_INPUT',
    details: { errors: [{ field: 'cursor', message: 'is not a cursor returned by this API for this list' }] },
  });
}

describe('list cursors', () => {
  it('wrap the service cursor for the client and hand the service its own back', async () => {
    const page1 = (await get('/things?kind=SMALL&limit=5')).json();
    expect(page1.nextCursor).not.toContain('svc:');
    expect(page1.nextCursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    seen.length = 0;
    const page2 = await get(`/things?limit=10&kind=SMALL&cursor=${page1.nextCursor}`);
    expect(page2.statusCode, page2.body).toBe(200);
    expect(seen).toEqual([{ list: '/things', cursor: 'svc:1' }]);
    // Any replica with the same key accepts it.
    expect((await get(`/things?kind=SMALL&cursor=${page1.nextCursor}`, mine, other.app)).statusCode).toBe(200);
  });

  it('refuse a cursor of another list, another filter, another platform, or an edited one, without calling the service', async () => {
    const cursor = (await get('/things?kind=SMALL')).json().nextCursor as string;
    seen.length = 0;
    expectRefused(await get(`/others?kind=SMALL&cursor=${cursor}`));
    expectRefused(await get(`/things?kind=LARGE&cursor=${cursor}`));
    expectRefused(await get(`/things?cursor=${cursor}`));
    expectRefused(await get(`/things?kind=SMALL&cursor=${cursor}`, theirs));
    const [payload, tag] = cursor.split('.') as [string, string];
    const edited = Buffer.from('svc:41').toString('base64url');
    expectRefused(await get(`/things?kind=SMALL&cursor=${edited}.${tag}`));
    expectRefused(await get(`/things?kind=SMALL&cursor=${payload}.${tag.slice(0, -2)}AA`));
    expectRefused(await get(`/things?kind=SMALL&cursor=${Buffer.from('svc:1').toString('base64url')}`));
    expectRefused(await get('/things?kind=SMALL&cursor=not-a-cursor!'));
    expect(seen).toEqual([]);
  });

  it('do not outlive their key', async () => {
    const cursor = (await get('/things')).json().nextCursor as string;
    const rotated = await startGateway(idp.address, { lists }, { CURSOR_SIGNING_KEY: 'r'.repeat(40) });
    try {
      expectRefused(await get(`/things?cursor=${cursor}`, mine, rotated.app));
    } finally {
      await rotated.close();
    }
  });
});

describe('CURSOR_SIGNING_KEY', () => {
  it('is required in production and must have at least 32 characters; elsewhere a key per process', () => {
    expect(() => cursorCodec({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => cursorCodec({ NODE_ENV: 'production' })).toThrow(/CURSOR_SIGNING_KEY: is required/);
    expect(() => cursorCodec({ NODE_ENV: 'development', CURSOR_SIGNING_KEY: 'short' })).toThrow(/at least 32/);
    const scope = { platformId: 'Platform:1', list: 'GET /x', filters: {} };
    const a = cursorCodec({ NODE_ENV: 'development' });
    const b = cursorCodec({ NODE_ENV: 'development' });
    expect(a.unwrap(a.wrap('svc:1', scope), scope)).toBe('svc:1');
    expect(() => b.unwrap(a.wrap('svc:1', scope), scope)).toThrow(/cursor/);
    const c = cursorCodec({ NODE_ENV: 'production', CURSOR_SIGNING_KEY: KEY });
    expect(cursorCodec({ NODE_ENV: 'production', CURSOR_SIGNING_KEY: KEY }).unwrap(c.wrap('svc:2', scope), scope)).toBe(
      'svc:2',
    );
  });
});
