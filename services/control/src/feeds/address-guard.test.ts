import { describe, expect, it } from 'vitest';
import { cidrContains, formatIp, parseCidr, parseIp, type Cidr } from '@banstream/core';
import { addressRefusal, checkLiteral, FeedAddressError, nonPublicKind, parseAllowedNetworks, PUBLIC_ONLY, resolveChecked } from './address-guard.js';

/**
 * The boundary as the docs state it, written out here rather than taken from ipaddr.js
 * (which the guard uses): a range the library stopped refusing, or a public address it
 * started to, fails these.
 */
const REFUSED_V4: [string, string][] = [
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrierGradeNat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'linkLocal'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'reserved'],
  ['192.31.196.0/24', 'as112'],
  ['192.52.193.0/24', 'amt'],
  ['192.88.99.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['192.175.48.0/24', 'as112'],
  ['198.18.0.0/15', 'reserved'],
  ['198.51.100.0/24', 'reserved'],
  ['203.0.113.0/24', 'reserved'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['255.255.255.255/32', 'broadcast'],
];
/** Inside 2000::/3 (everything outside it is refused as well). */
const REFUSED_V6_GLOBAL: string[] = ['2001::/23', '2001:db8::/32', '2002::/16', '2620:4f:8000::/48', '3fff::/20'];
const GLOBAL_V6 = parseCidr('2000::/3');
const NAT64 = parseCidr('64:ff9b::/96');

// A seeded generator: a failure names an address that fails again.
let seed = 0x5eed;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) >>> 0;
  return seed;
};
const randomBytes = (n: number) => Uint8Array.from({ length: n }, () => random() & 255);

/** A random address of the network (host bits random). */
function inside(network: Cidr): string {
  const bytes = randomBytes(network.bytes.length);
  for (let bit = 0; bit < network.bits; bit++) {
    const byte = bit >>> 3;
    const mask = 0x80 >>> (bit & 7);
    bytes[byte] = (bytes[byte]! & ~mask) | (network.bytes[byte]! & mask);
  }
  return formatIp(bytes);
}

/** The addresses just below and just above a network. */
function around(network: Cidr): string[] {
  const first = BigInt(`0x${Buffer.from(network.bytes).toString('hex')}`);
  const width = network.bytes.length * 8;
  const last = first + (1n << BigInt(width - network.bits)) - 1n;
  const max = (1n << BigInt(width)) - 1n;
  const text = (n: bigint) => formatIp(Uint8Array.from(Buffer.from(n.toString(16).padStart(width / 4, '0'), 'hex')));
  return [first - 1n, last + 1n].filter((n) => n >= 0n && n <= max).map(text);
}

const v4Networks = REFUSED_V4.map(([c]) => parseCidr(c));
const v6Networks = REFUSED_V6_GLOBAL.map((c) => parseCidr(c));
/** What the spec above expects: refused or not. */
function specRefuses(text: string): boolean {
  const ip = parseIp(text);
  if (ip.family === 4) return v4Networks.some((n) => cidrContains(n, ip));
  if (cidrContains(NAT64, ip)) return specRefuses([...ip.bytes.subarray(12)].join('.'));
  return !cidrContains(GLOBAL_V6, ip) || v6Networks.some((n) => cidrContains(n, ip));
}
const refused = (text: string) => nonPublicKind(parseIp(text)) !== undefined;
/** `::ffff:a.b.c.d` and `::ffff:xxxx:xxxx`: the IPv4-mapped forms of an IPv4 address. */
const mapped = (v4: string) => {
  const b = parseIp(v4).bytes;
  return [`::ffff:${v4}`, `::ffff:${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`, `0:0:0:0:0:ffff:${v4}`];
};

describe('the address classification of feed connections', () => {
  it.each(REFUSED_V4)('refuses every address of %s (%s), in its IPv4-mapped and NAT64 forms too', (cidr, kind) => {
    const network = parseCidr(cidr);
    for (let i = 0; i < 200; i++) {
      const address = inside(network);
      expect(nonPublicKind(parseIp(address)), address).toBe(kind);
      for (const form of mapped(address)) expect(nonPublicKind(parseIp(form)), form).toBe(kind);
      expect(nonPublicKind(parseIp(`64:ff9b::${address}`)), `64:ff9b::${address}`).toBe(`${kind} (in NAT64)`);
    }
  });

  it.each(REFUSED_V6_GLOBAL)('refuses every address of %s, though inside 2000::/3', (cidr) => {
    const network = parseCidr(cidr);
    for (let i = 0; i < 200; i++) expect(refused(inside(network)), cidr).toBe(true);
  });

  it.each(['::/128', '::1/128', '::/96', '::ffff:0:0:0/96', '64:ff9b:1::/48', '100::/64', 'fc00::/7', 'fe80::/10', 'fec0::/10', 'ff00::/8', '5f00::/16', '4000::/2', '8000::/1'])(
    'refuses every IPv6 address of %s, outside global unicast',
    (cidr) => {
      const network = parseCidr(cidr);
      for (let i = 0; i < 200; i++) {
        const address = inside(network);
        // ::ffff:a.b.c.d is read as the IPv4 address: its own range decides.
        if (parseIp(address).family === 4) continue;
        expect(refused(address), address).toBe(true);
      }
    },
  );

  it('decides the addresses just around each range as the spec does', () => {
    for (const network of [...v4Networks, ...v6Networks, GLOBAL_V6, NAT64, parseCidr('fc00::/7'), parseCidr('fe80::/10')]) {
      for (const address of around(network)) expect([address, refused(address)]).toEqual([address, specRefuses(address)]);
    }
    expect(refused('9.255.255.255')).toBe(false);
    expect(refused('11.0.0.0')).toBe(false);
    expect(refused('100.63.255.255')).toBe(false);
    expect(refused('100.128.0.0')).toBe(false);
    expect(refused('172.15.255.255')).toBe(false);
    expect(refused('172.32.0.0')).toBe(false);
    expect(refused('223.255.255.255')).toBe(false);
  });

  it('lets random public addresses through, IPv4, IPv4-mapped, NAT64 and global IPv6', () => {
    let v4 = 0;
    let v6 = 0;
    while (v4 < 5_000) {
      const address = formatIp(randomBytes(4));
      if (specRefuses(address)) continue;
      v4++;
      expect([address, refused(address)]).toEqual([address, false]);
      for (const form of [...mapped(address), `64:ff9b::${address}`]) expect([form, refused(form)]).toEqual([form, false]);
    }
    while (v6 < 5_000) {
      const address = inside(GLOBAL_V6);
      if (specRefuses(address)) continue;
      v6++;
      expect([address, refused(address)]).toEqual([address, false]);
    }
  });

  it('refuses random IPv6 addresses outside 2000::/3 (IPv4-mapped ones by their IPv4 range)', () => {
    for (let i = 0; i < 5_000; i++) {
      const address = formatIp(randomBytes(16));
      expect([address, refused(address)]).toEqual([address, specRefuses(address)]);
    }
  });

  it('opens CONTROL_FEED_ALLOWED_NETWORKS only, mapped forms included', () => {
    const policy = { allowed: parseAllowedNetworks(' 127.0.0.2 , 10.20.0.0/16,fd00:1::/48') };
    expect(policy.allowed.map((c) => c.text)).toEqual(['127.0.0.2/32', '10.20.0.0/16', 'fd00:1::/48']);
    expect(addressRefusal(parseIp('127.0.0.2'), policy)).toBeUndefined();
    expect(addressRefusal(parseIp('::ffff:127.0.0.2'), policy)).toBeUndefined();
    expect(addressRefusal(parseIp('10.20.255.1'), policy)).toBeUndefined();
    expect(addressRefusal(parseIp('fd00:1::5'), policy)).toBeUndefined();
    expect(addressRefusal(parseIp('127.0.0.1'), policy)).toBe('127.0.0.1 is a loopback address');
    expect(addressRefusal(parseIp('10.21.0.1'), policy)).toBe('10.21.0.1 is a private address');
    expect(addressRefusal(parseIp('fd00:2::5'), policy)).toBe('fd00:2::5 is a uniqueLocal address');
    expect(addressRefusal(parseIp('127.0.0.2'), PUBLIC_ONLY)).toBe('127.0.0.2 is a loopback address');
    expect(parseAllowedNetworks('')).toEqual([]);
    expect(() => parseAllowedNetworks('10.0.0.0/33')).toThrow(/not a network: "10.0.0.0\/33"/);
    expect(() => parseAllowedNetworks('10.0.0.0/8,,::1/200')).toThrow(/::1\/200/);
  });

  it('refuses literal hosts in every spelling the URL parser accepts', () => {
    const refusedUrl = (url: string) => {
      try {
        checkLiteral(new URL(url), PUBLIC_ONLY);
        return undefined;
      } catch (error) {
        expect(error).toBeInstanceOf(FeedAddressError);
        return (error as Error).message;
      }
    };
    for (const url of [
      'http://127.0.0.1/',
      'http://127.1:8080/',
      'http://0x7f000001/',
      'http://2130706433/',
      'http://0177.0.0.1/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:7f00:1]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/',
      'http://0.0.0.0:6379/',
      'http://[::]:9092/',
      'http://100.100.100.200/',
      'http://[::7f00:1]/',
    ])
      expect(refusedUrl(url), url).toMatch(/refused: .* address; feeds may reach public addresses only; CONTROL_FEED_ALLOWED_NETWORKS opens others$/);
    expect(refusedUrl('http://169.254.169.254/')).toContain('169.254.169.254 is a linkLocal address');
    expect(refusedUrl('https://93.184.215.14/list.txt')).toBeUndefined();
    expect(refusedUrl('https://[2606:4700::6810:84e5]/')).toBeUndefined();
    // A name is left to the resolution.
    expect(refusedUrl('https://lists.example/')).toBeUndefined();
  });

  it('refuses a name when any of its addresses is refused, without saying which address', async () => {
    const resolver = (answers: string[]) => async () => answers;
    await expect(resolveChecked('feed.example', PUBLIC_ONLY, resolver(['93.184.215.14', '2606:4700::6810:84e5']))).resolves.toHaveLength(2);
    for (const answers of [['127.0.0.1'], ['93.184.215.14', '10.0.0.7'], ['::ffff:169.254.169.254'], ['fe80::1'], []]) {
      const error = await resolveChecked('feed.example', PUBLIC_ONLY, resolver(answers)).catch((e: unknown) => e);
      expect(error, answers.join()).toBeInstanceOf(FeedAddressError);
      for (const a of answers) expect((error as Error).message).not.toContain(a);
    }
    expect(((await resolveChecked('feed.example', PUBLIC_ONLY, resolver(['10.0.0.7'])).catch((e: unknown) => e)) as Error).message).toBe(
      'feed.example refused: it resolves to a private address; feeds may reach public addresses only; CONTROL_FEED_ALLOWED_NETWORKS opens others',
    );
    await expect(resolveChecked('feed.example', { allowed: parseAllowedNetworks('10.0.0.0/8') }, resolver(['10.0.0.7']))).resolves.toHaveLength(1);
  });
});
