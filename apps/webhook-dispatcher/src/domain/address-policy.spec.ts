import { describe, expect, it } from 'vitest';
import { blockedAddressReason, parseIPv6, webhookUrlProblem } from './address-policy.js';

describe('blockedAddressReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.10', 'private'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['192.0.2.5', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['224.0.0.251', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback'],
    ['::ffff:10.1.2.3', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
    ['0:0:0:0:0:ffff:192.168.0.1', 'IPv4-mapped private'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['64:ff9b::127.0.0.1', 'NAT64 loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 link-local'],
    ['2002:7f00:1::', '6to4 loopback'],
    ['2001:db8::1', 'documentation'],
    ['2001::1', 'IETF'],
    ['100::1', 'reserved'],
    ['not-an-ip', 'not an IP address'],
    ['1.2.3', 'not an IP address'],
    ['1:2:3:4:5:6:7:8:9', 'not an IP address'],
  ])('refuses %s (%s)', (address, reason) => {
    const r = blockedAddressReason(address);
    expect(r).toBeDefined();
    expect(r).toContain(reason);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('allows public %s', (address) => {
    expect(blockedAddressReason(address)).toBeUndefined();
  });
});

describe('every refused range, at both ends, and IPv4 ones also written inside IPv6', () => {
  // [first, last] address of each range of the policy (address-policy.ts), with what it is.
  const V4: [string, string, string][] = [
    ['0.0.0.0', '0.255.255.255', 'unspecified'],
    ['10.0.0.0', '10.255.255.255', 'private'],
    ['100.64.0.0', '100.127.255.255', 'carrier-grade NAT'],
    ['127.0.0.0', '127.255.255.255', 'loopback'],
    ['169.254.0.0', '169.254.255.255', 'link-local'],
    ['172.16.0.0', '172.31.255.255', 'private'],
    ['192.0.0.0', '192.0.0.255', 'reserved'],
    ['192.0.2.0', '192.0.2.255', 'documentation'],
    ['192.88.99.0', '192.88.99.255', 'reserved'],
    ['192.168.0.0', '192.168.255.255', 'private'],
    ['198.18.0.0', '198.19.255.255', 'benchmarking'],
    ['198.51.100.0', '198.51.100.255', 'documentation'],
    ['203.0.113.0', '203.0.113.255', 'documentation'],
    ['224.0.0.0', '239.255.255.255', 'multicast'],
    ['240.0.0.0', '255.255.255.255', 'reserved'],
  ];
  const V6: [string, string, string][] = [
    ['::', '::', 'unspecified'],
    ['::1', '::1', 'loopback'],
    ['::2', '::ffff:ffff', 'IPv4-compatible'],
    ['64:ff9b:1::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'local-use NAT64'],
    ['fc00::', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique-local'],
    ['fe80::', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'link-local'],
    ['fec0::', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'site-local'],
    ['ff00::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'multicast'],
    ['2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation'],
    ['2001::', '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff', 'IETF'],
    ['4000::', 'fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'reserved'],
  ];
  const hex = (v4: string) => {
    const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
    return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  };

  it.each(V4)('IPv4 %s – %s (%s), as is and IPv4-mapped, NAT64 and 6to4', (first, last, what) => {
    for (const a of [first, last]) {
      expect(blockedAddressReason(a), a).toContain(what);
      expect(blockedAddressReason(`::ffff:${a}`), `::ffff:${a}`).toBe(
        `IPv4-mapped ${blockedAddressReason(a)}`,
      );
      expect(blockedAddressReason(`::ffff:${hex(a)}`), `::ffff:${hex(a)}`).toContain(what);
      expect(blockedAddressReason(`64:ff9b::${a}`), `64:ff9b::${a}`).toContain(what);
      expect(blockedAddressReason(`2002:${hex(a)}::1`), `2002:${hex(a)}::1`).toContain(what);
    }
  });

  it.each(V6)('IPv6 %s – %s (%s)', (first, last, what) => {
    for (const a of [first, last]) expect(blockedAddressReason(a), a).toContain(what);
  });

  it('allows the public neighbours of the private ranges', () => {
    for (const a of [
      '9.255.255.255',
      '11.0.0.0',
      '126.255.255.255',
      '128.0.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '192.167.255.255',
      '223.255.255.255',
    ])
      expect(blockedAddressReason(a), a).toBeUndefined();
  });
});

describe('parseIPv6', () => {
  it('expands compressed forms and embedded IPv4', () => {
    expect(Array.from(parseIPv6('::ffff:1.2.3.4')!)).toEqual([
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4,
    ]);
    expect(Array.from(parseIPv6('2001:db8::8:800:200c:417a')!.slice(10))).toEqual([
      0x08, 0x00, 0x20, 0x0c, 0x41, 0x7a,
    ]);
    expect(parseIPv6('[::1]')![15]).toBe(1);
  });
  it('rejects malformed addresses', () => {
    for (const bad of ['1::2::3', '12345::', ':::', '1.2.3.4', 'g::1', '::1.2.3.256'])
      expect(parseIPv6(bad)).toBeUndefined();
  });
});

describe('webhookUrlProblem', () => {
  it('accepts http and https URLs', () => {
    expect(webhookUrlProblem('https://example.com/hooks')).toBeUndefined();
    expect(webhookUrlProblem('http://example.com:8080/x?y=1')).toBeUndefined();
  });
  it('rejects other schemes and garbage', () => {
    expect(webhookUrlProblem('ftp://example.com/')).toMatch(/scheme ftp/);
    expect(webhookUrlProblem('file:///etc/passwd')).toMatch(/scheme file/);
    expect(webhookUrlProblem('not a url')).toMatch(/not a valid URL/);
  });
});
