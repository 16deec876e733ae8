import type { Readable, Writable } from 'node:stream';

const COLORS = [36, 33, 35, 32, 34, 91, 96, 93, 95, 92];

/** ANSI color code for the n-th process (stable per name order). */
export function colorFor(index: number): number {
  return COLORS[index % COLORS.length]!;
}

/** `[name] ` in a color when `color` is set, plain otherwise. */
export function linePrefix(name: string, width: number, color?: number): string {
  const label = `[${name}]`.padEnd(width + 2);
  return color === undefined ? `${label} ` : `\u001b[${color}m${label}\u001b[0m `;
}

/**
 * Splits a byte stream into lines and hands each complete line to `onLine`;
 * a trailing partial line is delivered when the stream ends.
 */
export function forEachLine(stream: Readable, onLine: (line: string) => void): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    let nl = pending.indexOf('\n');
    while (nl !== -1) {
      onLine(pending.slice(0, nl).replace(/\r$/, ''));
      pending = pending.slice(nl + 1);
      nl = pending.indexOf('\n');
    }
  });
  stream.on('end', () => {
    if (pending) onLine(pending);
    pending = '';
  });
}

/** Keeps the last `size` lines written to it (for error reports of silenced processes). */
export class LineRing {
  private readonly lines: string[] = [];
  constructor(private readonly size = 200) {}

  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.size) this.lines.shift();
  }

  tail(n = this.size): string[] {
    return n <= 0 ? [] : this.lines.slice(-n);
  }
}

/** Writes a line to a stream unless the stream is gone (a closed pipe must not crash the supervisor). */
export function safeWrite(out: Writable, text: string): void {
  if (out.writable && !out.destroyed) out.write(text);
}
