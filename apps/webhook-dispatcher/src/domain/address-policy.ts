/**
 * SSRF policy for webhook targets: which IP addresses a webhook may be sent to.
 * Only public unicast addresses are allowed; everything a server could use to
 * reach itself, its network or its cloud metadata endpoint is refused
 * (private, loopback, link-local, unique-local, unspecified, multicast,
 * reserved, documentation, shared/CGNAT), including IPv4 addresses written
 * inside IPv6 (IPv4-mapped, NAT64 and 6to4).
 */

type Range4 = { base: number; bits: number; reason: string };

const V4_BLOCKED: Range4[] = [
  r4('0.0.0.0', 8, 'unspecified address'),
  r4('10.0.0.0', 8, 'private address'),
  r4('100.64.0.0', 10, 'shared (carrier-grade NAT) address'),
  r4('127.0.0.0', 8, 'loopback address'),
  r4('169.254.0.0', 16, 'link-local address'),
  r4('172.16.0.0', 12, 'private address'),
  r4('192.0.0.0', 24, 'reserved address'),
  r4('192.0.2.0', 24, 'documentation address'),
  r4('192.88.99.0', 24, 'reserved address'),
  r4('192.168.0.0', 16, 'private address'),
  r4('198.18.0.0', 15, 'benchmarking address'),
  r4('198.51.100.0', 24, 'documentation address'),
  r4('203.0.113.0', 24, 'documentation address'),
  r4('224.0.0.0', 4, 'multicast address'),
  r4('240.0.0.0', 4, 'reserved address'),
];

function r4(base: string, bits: number, reason: string): Range4 {
  return { base: parseIPv4(base)!, bits, reason };
}

/** Parses a dotted-quad IPv4 address into an unsigned 32-bit number. */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return undefined;
    const v = Number(p);
    if (v > 255) return undefined;
    n = n * 256 + v;
  }
  return n;
}

/** Parses an IPv6 address (with `::`, an embedded dotted quad or a zone id) into 16 bytes. */
export function parseIPv6(text: string): Uint8Array | undefined {
  let s = text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  if (!/^[0-9a-fA-F:.]+$/.test(s) || !s.includes(':')) return undefined;
  if (s.includes('.')) {
    // A trailing dotted quad stands for the last two groups.
    const lastColon = s.lastIndexOf(':');
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    s = `${s.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const parse = (h: string): number[] | undefined => {
    if (h === '') return [];
    const out: number[] = [];
    for (const g of h.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  if (!head || !rest) return undefined;
  let groups: number[];
  if (halves.length === 2) {
    if (head.length + rest.length > 7) return undefined;
    groups = [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
  } else {
    if (head.length !== 8) return undefined;
    groups = head;
  }
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return bytes;
}

function v4Blocked(n: number): string | undefined {
  for (const r of V4_BLOCKED) {
    const mask = r.bits === 0 ? 0 : (0xffffffff << (32 - r.bits)) >>> 0;
    if ((n & mask) >>> 0 === (r.base & mask) >>> 0) return r.reason;
  }
  return undefined;
}

function prefixMatches(b: Uint8Array, prefix: number[], bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const byte = i >> 3;
    const bit = 7 - (i & 7);
    const want = ((prefix[byte] ?? 0) >> bit) & 1;
    if (((b[byte]! >> bit) & 1) !== want) return false;
  }
  return true;
}

function v4At(b: Uint8Array, offset: number): number {
  return ((b[offset]! << 24) >>> 0) + (b[offset + 1]! << 16) + (b[offset + 2]! << 8) + b[offset + 3]!;
}

function v6Blocked(b: Uint8Array): string | undefined {
  const zeroUpTo = (n: number) => b.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(16)) return 'unspecified address';
  if (zeroUpTo(15) && b[15] === 1) return 'loopback address';
  // ::ffff:a.b.c.d (IPv4-mapped): judged as the IPv4 address it carries.
  if (zeroUpTo(10) && b[10] === 0xff && b[11] === 0xff) {
    const inner = v4Blocked(v4At(b, 12));
    return inner ? `IPv4-mapped ${inner}` : undefined;
  }
  if (zeroUpTo(12)) return 'reserved address (IPv4-compatible IPv6)';
  // 64:ff9b::/96 (NAT64 well-known prefix): judged as the embedded IPv4 address.
  if (prefixMatches(b, [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0], 96)) {
    const inner = v4Blocked(v4At(b, 12));
    return inner ? `NAT64 ${inner}` : undefined;
  }
  if (prefixMatches(b, [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48)) return 'reserved address (local-use NAT64)';
  if (prefixMatches(b, [0xfc], 7)) return 'unique-local address';
  if (prefixMatches(b, [0xfe, 0x80], 10)) return 'link-local address';
  if (prefixMatches(b, [0xfe, 0xc0], 10)) return 'site-local address';
  if (prefixMatches(b, [0xff], 8)) return 'multicast address';
  // Outside 2000::/3 (global unicast) nothing else is routable on the Internet.
  if (!prefixMatches(b, [0x20], 3)) return 'reserved address';
  if (prefixMatches(b, [0x20, 0x01, 0x0d, 0xb8], 32)) return 'documentation address';
  if (prefixMatches(b, [0x20, 0x01, 0x00, 0x00], 23)) return 'reserved address (IETF protocol assignments)';
  // 2002::/16 (6to4): judged as the embedded IPv4 address.
  if (prefixMatches(b, [0x20, 0x02], 16)) {
    const inner = v4Blocked(v4At(b, 2));
    return inner ? `6to4 ${inner}` : undefined;
  }
  return undefined;
}

/**
 * Why `address` (an IPv4 or IPv6 literal) may not receive webhooks, or
 * undefined when it is a public unicast address.
 */
export function blockedAddressReason(address: string): string | undefined {
  const v4 = parseIPv4(address);
  if (v4 !== undefined) return v4Blocked(v4);
  const v6 = parseIPv6(address);
  if (v6 !== undefined) return v6Blocked(v6);
  return 'not an IP address';
}

/** The problem with a webhook URL's form (scheme, host), or undefined when it may be tried. */
export function webhookUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'is not a valid URL';
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:')
    return `scheme ${u.protocol.replace(':', '')} is not allowed (use https or http)`;
  if (!u.hostname) return 'has no host';
  return undefined;
}

/** The host of a URL as DNS or an IP literal expects it (IPv6 without brackets). */
export function urlHost(u: URL): string {
  const h = u.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}
