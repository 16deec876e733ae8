import { describe, expect, it } from 'vitest';
import { Type } from '@sinclair/typebox';
import { SchemaRegistry } from './route-schema.normalizer.js';

const Money = Type.Object({ amount: Type.Integer(), currency: Type.String() }, { $id: 'Money' });

describe('SchemaRegistry', () => {
  it('removes $id (kept as title), registers the named schema and inlines refs to it', () => {
    const r = new SchemaRegistry();
    const out = r.normalizeRoute({ body: Type.Object({ from: Money, to: Money, ref: Type.Ref(Money) }) }) as {
      body: { properties: Record<string, Record<string, unknown>> };
    };
    for (const k of ['from', 'to', 'ref']) {
      expect(out.body.properties[k]).not.toHaveProperty('$id');
      expect(out.body.properties[k]).toMatchObject({ title: 'Money', type: 'object' });
    }
    expect(r.entries().map(([id]) => id)).toEqual(['Money']);
    expect(Money).toHaveProperty('$id', 'Money'); // the shared schema itself is untouched
  });

  it('refuses two different schemas under one $id', () => {
    const r = new SchemaRegistry();
    r.normalize(Money);
    expect(() => r.normalize(Type.Object({ other: Type.String() }, { $id: 'Money' }))).toThrow(/Money/);
  });

  it('turns inline copies back into component refs for the document', () => {
    const r = new SchemaRegistry();
    const body = r.normalize(Type.Object({ m: Money }));
    expect(r.toRefs(body)).toMatchObject({ properties: { m: { $ref: '#/components/schemas/Money' } } });
  });
});
