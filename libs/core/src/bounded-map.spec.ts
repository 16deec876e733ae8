import { describe, expect, it } from 'vitest';
import { BoundedMap } from './bounded-map.js';

describe('BoundedMap', () => {
  it('keeps at most its size, forgetting the least recently used', () => {
    const m = new BoundedMap<string, number>(2);
    m.set('a', 1);
    m.set('b', 2);
    expect(m.get('a')).toBe(1); // a is now the most recent
    m.set('c', 3);
    expect(m.get('b')).toBeUndefined();
    expect([m.get('a'), m.get('c'), m.size]).toEqual([1, 3, 2]);
    m.set('a', 4);
    expect(m.get('a')).toBe(4);
    m.delete('a');
    expect(m.size).toBe(1);
    m.clear();
    expect(m.size).toBe(0);
    expect(() => new BoundedMap(0)).toThrow(RangeError);
  });
});
