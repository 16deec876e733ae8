import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { forEachLine, LineRing, linePrefix } from './process-output.js';

describe('process output', () => {
  it('reassembles lines split across chunks and delivers a final partial line', async () => {
    const s = new PassThrough();
    const lines: string[] = [];
    forEachLine(s, (l) => lines.push(l));
    s.write('{"msg":"he');
    s.write('llo"}\r\nsecond\nthi');
    s.end('rd');
    await new Promise((r) => s.on('end', r));
    expect(lines).toEqual(['{"msg":"hello"}', 'second', 'third']);
  });

  it('pads prefixes to one width and colors them only when asked', () => {
    expect(linePrefix('identity', 18)).toBe('[identity]           ');
    expect(linePrefix('gateway', 7, 36)).toBe('\u001b[36m[gateway]\u001b[0m ');
  });

  it('keeps only the last lines', () => {
    const r = new LineRing(3);
    for (const l of ['a', 'b', 'c', 'd']) r.push(l);
    expect(r.tail()).toEqual(['b', 'c', 'd']);
    expect(r.tail(1)).toEqual(['d']);
    expect(r.tail(0)).toEqual([]);
  });
});
