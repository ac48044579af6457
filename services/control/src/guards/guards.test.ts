import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalAllowEntry, cidrContains, parseCidr } from '@banstream/core';
import { canonicalSubject } from '../routes/subjects.js';
import { banDurationProblem, broadSubjectReason, DEFAULT_MIN_PREFIX, describeWide, wideNetwork } from './index.js';

const limits = DEFAULT_MIN_PREFIX;
const v4Text = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
const v6Text = (groups: number[]) => groups.map((g) => g.toString(16)).join(':');

describe('wideNetwork: networks wider than the minimum prefix', () => {
  it.each([
    ['0.0.0.0/0', '0.0.0.0/0', 4, 0],
    ['10.0.0.0/7', '10.0.0.0/7', 4, 7],
    ['::/0', '::/0', 6, 0],
    ['2001:db8::/31', '2001:db8::/31', 6, 31],
    // IPv4-mapped networks are the IPv4 networks they hold: held to the IPv4 limit.
    ['::ffff:0:0/96', '0.0.0.0/0', 4, 0],
    ['::ffff:10.0.0.0/103', '10.0.0.0/7', 4, 7],
    ['::FFFF:0.0.0.0/100', '0.0.0.0/4', 4, 4],
  ])('%s is refused as %s (IPv%i /%i)', (typed, network, family, bits) => {
    for (const subject of [canonicalSubject(typed), canonicalAllowEntry(typed)]) {
      expect(wideNetwork(subject, limits)).toEqual({ network, family, bits, min: family === 4 ? 8 : 32 });
    }
  });

  it.each(['10.0.0.0/8', '203.0.113.0/24', '203.0.113.7', '2001:db8::/32', '2001:db8::1', '::ffff:10.0.0.0/104', '::/96', 'user:42', 'apikey:0123456789abcdef0123456789abcdef'])(
    '%s is not',
    (typed) => {
      expect(wideNetwork(canonicalAllowEntry(typed), limits)).toBeUndefined();
      expect(wideNetwork(canonicalSubject(typed), limits)).toBeUndefined();
    },
  );

  it('looks at the network part of a composite subject', () => {
    expect(wideNetwork(canonicalSubject('path:/login|cidr:0.0.0.0/0'), limits)).toMatchObject({ network: '0.0.0.0/0' });
    expect(wideNetwork(canonicalSubject('path:/login|cidr:::ffff:0:0/96'), limits)).toMatchObject({ network: '0.0.0.0/0' });
    expect(wideNetwork(canonicalSubject('path:/login|cidr:10.0.0.0/8'), limits)).toBeUndefined();
    expect(wideNetwork(canonicalSubject('path:/cidr:0.0.0.0/0'), limits)).toBeUndefined();
  });

  it('follows the configured limits, /0 allowing everything and /32 or /128 only hosts', () => {
    expect(wideNetwork('cidr:10.0.0.0/8', { v4: 16, v6: 48 })).toMatchObject({ min: 16 });
    expect(wideNetwork('cidr:2001:db8::/32', { v4: 16, v6: 48 })).toMatchObject({ min: 48 });
    expect(wideNetwork('cidr:0.0.0.0/0', { v4: 0, v6: 0 })).toBeUndefined();
    expect(wideNetwork('cidr:203.0.113.0/31', { v4: 32, v6: 128 })).toMatchObject({ bits: 31 });
  });

  it('names the network, the limit and the variable that sets it', () => {
    expect(describeWide(wideNetwork('cidr:0.0.0.0/0', limits)!, 'ban')).toBe('0.0.0.0/0 is wider than the /8 an IPv4 ban may cover without force (CONTROL_MIN_PREFIX_V4)');
    expect(describeWide(wideNetwork('cidr:::/0', limits)!, 'allowlist entry')).toBe('::/0 is wider than the /32 an IPv6 allowlist entry may cover without force (CONTROL_MIN_PREFIX_V6)');
  });

  // The invariant, over every IPv4, IPv6 and mapped network an operator can type:
  // refused exactly when the network it covers holds more addresses than the limit allows.
  it('refuses a typed network exactly when it covers more than a /min of its family', () => {
    const v4 = fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 32 })).map(([n, bits]) => ({ text: `${v4Text(n)}/${bits}`, family: 4, bits }));
    const mapped = fc.tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 96, max: 128 })).map(([n, bits]) => ({ text: `::ffff:${v4Text(n)}/${bits}`, family: 4, bits: bits - 96 }));
    const v6 = fc
      .tuple(fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }), fc.integer({ min: 0, max: 128 }))
      .filter(([g]) => !(g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff))
      .map(([g, bits]) => ({ text: `${v6Text(g)}/${bits}`, family: 6, bits }));
    const min = fc.record({ v4: fc.integer({ min: 0, max: 32 }), v6: fc.integer({ min: 0, max: 128 }) });
    fc.assert(
      fc.property(fc.oneof(v4, mapped, v6), min, (net, lim) => {
        const limit = net.family === 4 ? lim.v4 : lim.v6;
        for (const subject of [canonicalSubject(net.text), canonicalAllowEntry(net.text)]) {
          const wide = wideNetwork(subject, lim);
          expect(wide !== undefined).toBe(net.bits < limit);
          if (wide) expect(cidrContains(parseCidr(wide.network), parseCidr(net.text).text.split('/')[0]!)).toBe(true);
        }
      }),
      { seed: 25, numRuns: 2000 },
    );
  });
});

describe('banDurationProblem: the cap on manual bans', () => {
  const cap = { text: '30d', ms: 30 * 86_400_000 };
  it('accepts up to the cap and refuses above it, naming the cap and its variable', () => {
    expect(banDurationProblem('30d', cap)).toBeUndefined();
    expect(banDurationProblem('720h', cap)).toBeUndefined();
    expect(banDurationProblem('1ms', cap)).toBeUndefined();
    expect(banDurationProblem('31d', cap)).toBe('31d is longer than the 30d a manual ban may last (CONTROL_MAX_BAN_DURATION)');
    expect(banDurationProblem('2592000001ms', cap)).toMatch(/longer than the 30d/);
  });

  it('refuses durations too long to count in milliseconds rather than failing on them', () => {
    expect(banDurationProblem('99999999999999999999d', cap)).toMatch(/longer than the 30d/);
    expect(banDurationProblem(`${Number.MAX_SAFE_INTEGER}d`, { text: 'x', ms: Number.MAX_SAFE_INTEGER })).toMatch(/longer than/);
  });
});

describe('broadSubjectReason: manual bans that name no client', () => {
  it('calls a subject broad when none of its parts names a client', () => {
    for (const subject of ['method:GET', 'host:shop.example', 'country:FR', 'region:FR-IDF', 'asn:13335', 'path:/', 'route:/users/:id', 'country:FR|method:POST']) {
      expect(broadSubjectReason(subject), subject).toMatch(/names no client/);
    }
  });

  it('calls a subject narrow when any part names a client', () => {
    for (const subject of [
      'ip:203.0.113.7',
      'cidr:203.0.113.0/24',
      'user:42',
      'apikey:0123456789abcdef0123456789abcdef',
      'header.user-agent:curl',
      'path:/login|user:42',
      'country:FR|ip:203.0.113.7',
    ]) {
      expect(broadSubjectReason(subject), subject).toBeUndefined();
    }
  });
});
