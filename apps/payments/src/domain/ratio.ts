/**
 * Exact non-negative rationals over bigint. Every amount computation in payments
 * uses these; floats appear only when a rate is rendered for display.
 */
export interface Ratio {
  readonly num: bigint;
  readonly den: bigint;
}

function gcd(a: bigint, b: bigint): bigint {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b) [a, b] = [b, a % b];
  return a;
}

/** A reduced ratio; the denominator must be positive. */
export function ratio(num: bigint, den: bigint = 1n): Ratio {
  if (den <= 0n) throw new Error('ratio denominator must be positive');
  const g = gcd(num, den) || 1n;
  return { num: num / g, den: den / g };
}

/** Parses a plain decimal string ("1.08", "0.058", "65000") exactly. */
export function parseDecimal(s: string): Ratio {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(s);
  if (!m) throw new Error(`not a decimal: ${s}`);
  const frac = m[2] ?? '';
  return ratio(BigInt(m[1]! + frac), 10n ** BigInt(frac.length));
}

export const mul = (a: Ratio, b: Ratio): Ratio => ratio(a.num * b.num, a.den * b.den);
export const div = (a: Ratio, b: Ratio): Ratio => {
  if (b.num === 0n) throw new Error('division by zero');
  return ratio(a.num * b.den, a.den * b.num);
};
export const sub = (a: Ratio, b: Ratio): Ratio => ratio(a.num * b.den - b.num * a.den, a.den * b.den);
export const pow10 = (n: number): Ratio => (n >= 0 ? ratio(10n ** BigInt(n)) : ratio(1n, 10n ** BigInt(-n)));

/** Largest integer <= r (r >= 0 in this module's use, but correct for negatives too). */
export function floor(r: Ratio): bigint {
  const q = r.num / r.den;
  return r.num < 0n && q * r.den !== r.num ? q - 1n : q;
}

/** Smallest integer >= r. */
export function ceil(r: Ratio): bigint {
  const f = floor(r);
  return f * r.den === r.num ? f : f + 1n;
}

/** Integer times ratio, rounded down. */
export const floorMul = (n: bigint, r: Ratio): bigint => floor(ratio(n * r.num, r.den));
/** Integer times ratio, rounded up. */
export const ceilMul = (n: bigint, r: Ratio): bigint => ceil(ratio(n * r.num, r.den));

/**
 * A decimal string of `r` with at most `significant` significant digits
 * (rounded half up), trailing zeros removed: the display form of a rate.
 */
export function toDecimalString(r: Ratio, significant = 12): string {
  if (r.num === 0n) return '0';
  // Scale so the integer part carries `significant` digits.
  const intDigits = (r.num / r.den).toString().length;
  const leading = r.num >= r.den ? intDigits : -leadingZeros(r);
  const scale = Math.max(0, significant - leading);
  const scaled = (r.num * 10n ** BigInt(scale) * 2n + r.den) / (2n * r.den); // half up
  let s = scaled.toString();
  if (scale > 0) {
    s = s.padStart(scale + 1, '0');
    s = `${s.slice(0, s.length - scale)}.${s.slice(s.length - scale)}`.replace(/\.?0+$/, '');
  }
  return s;
}

/** Number of zeros right after the decimal point of r < 1. */
function leadingZeros(r: Ratio): number {
  let n = 0;
  let v = r.num * 10n;
  while (v < r.den) {
    v *= 10n;
    n++;
  }
  return n;
}
