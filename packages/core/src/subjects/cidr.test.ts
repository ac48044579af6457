import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '../errors.js';
import { cidrContains, eventPartitionKey, networkOf, networkPrefix, parseCidr, tryParseCidr } from './cidr.js';
import { formatIp, parseIp } from './ip.js';

describe('networkPrefix', () => {
  it.each([
    ['2001:db8:1:2:3:4:5:6', 48, '2001:db8:1::/48'],
    ['2001:db8:1:2:3:4:5:6', 64, '2001:db8:1:2::/64'],
    ['2001:db8:1:2:3:4:5:6', 0, '::/0'],
    ['2001:db8:1:2:3:4:5:6', 128, '2001:db8:1:2:3:4:5:6/128'],
    ['2001:db8:1:ffff::7', 57, '2001:db8:1:ff80::/57'],
    ['2001:db8:1:ff7f::7', 57, '2001:db8:1:ff00::/57'],
    ['2001:db8::ffff:1', 127, '2001:db8::ffff:0/127'],
    ['203.0.113.7', 24, '203.0.113.0/24'],
    ['203.0.113.7', 20, '203.0.112.0/20'],
    ['203.0.113.7', 0, '0.0.0.0/0'],
    ['203.0.113.7', 32, '203.0.113.7/32'],
    ['::ffff:203.0.113.7', 24, '203.0.113.0/24'],
  ])('%s /%i → %s', (ip, bits, text) => {
    expect(networkPrefix(ip, bits)).toBe(text);
  });

  it.each([
    ['203.0.113.7', 33, 'not a network: "203.0.113.7/33" (an IPv4 prefix length is an integer from 0 to 32, not 33)'],
    ['203.0.113.7', -1, 'not a network: "203.0.113.7/-1" (an IPv4 prefix length is an integer from 0 to 32, not -1)'],
    ['2001:db8::1', 129, 'not a network: "2001:db8::1/129" (an IPv6 prefix length is an integer from 0 to 128, not 129)'],
    ['2001:db8::1', 4.5, 'not a network: "2001:db8::1/4.5" (an IPv6 prefix length is an integer from 0 to 128, not 4.5)'],
  ])('refuses %s /%s', (ip, bits, message) => {
    expect(() => networkPrefix(ip, bits)).toThrow(message);
  });

  it('is the events topic key: IPv4 /24, IPv6 /48', () => {
    expect(eventPartitionKey('203.0.113.7')).toBe('203.0.113.0/24');
    expect(eventPartitionKey('2001:db8:1:2::7')).toBe('2001:db8:1::/48');
    expect(eventPartitionKey(parseIp('::ffff:198.51.100.9'))).toBe('198.51.100.0/24');
  });

  it('gives every IPv4 address the same key as its /24 network prefix', () => {
    fc.assert(fc.property(fc.ipV4(), (ip) => eventPartitionKey(ip) === networkPrefix(ip, 24)));
  });
});

describe('parseCidr', () => {
  it.each([
    ['10.1.2.3/8', '10.0.0.0/8', 8],
    ['10.0.0.0/8', '10.0.0.0/8', 8],
    ['192.0.2.77/32', '192.0.2.77/32', 32],
    ['192.0.2.77', '192.0.2.77/32', 32],
    ['0.0.0.0/0', '0.0.0.0/0', 0],
    ['2001:DB8:1:2::/48', '2001:db8:1::/48', 48],
    ['2001:db8::1', '2001:db8::1/128', 128],
    ['::/0', '::/0', 0],
    ['::ffff:192.0.2.0/120', '192.0.2.0/24', 24],
    ['::ffff:192.0.2.9/128', '192.0.2.9/32', 32],
  ])('%s → %s', (input, text, bits) => {
    expect(parseCidr(input)).toMatchObject({ text, bits });
  });

  it.each([
    ['', 'empty'],
    ['10.0.0.0/', 'missing prefix length after "/"'],
    ['10.0.0.0/33', 'an IPv4 prefix length is an integer from 0 to 32, not 33'],
    ['10.0.0.0/08', 'leading zero in prefix length'],
    ['10.0.0.0/x', 'prefix length must be a decimal number'],
    ['10.0.0.0/8/8', 'prefix length must be a decimal number'],
    ['10.0.0.0/1234', 'prefix length too long'],
    ['10.0.0/8', 'IPv4 needs 4 decimal octets'],
    ['2001:db8::/129', 'an IPv6 prefix length is an integer from 0 to 128, not 129'],
    ['fe80::%eth0/64', 'a zone id has no place in a network'],
    ['::ffff:192.0.2.0/80', 'an IPv4-mapped network needs a prefix of at least 96 bits'],
  ])('refuses %j: %s', (input, reason) => {
    const err = (() => {
      try {
        parseCidr(input);
      } catch (e) {
        return e;
      }
    })();
    expect(isBanstreamError(err, 'SUBJECT_INVALID_CIDR')).toBe(true);
    expect((err as Error).message).toBe(`not a network: ${JSON.stringify(input)} (${reason})`);
    expect(tryParseCidr(input)).toBeUndefined();
  });
});

describe('cidrContains', () => {
  it.each([
    ['10.0.0.0/8', '10.255.1.2', true],
    ['10.0.0.0/8', '11.0.0.1', false],
    ['2001:db8:1::/48', '2001:db8:1:ffff::1', true],
    ['2001:db8:1::/48', '2001:db8:2::1', false],
    ['2001:db8:1:ff80::/57', '2001:db8:1:ffff::1', true],
    ['2001:db8:1:ff80::/57', '2001:db8:1:ff7f::1', false],
    ['0.0.0.0/0', '198.51.100.1', true],
    ['0.0.0.0/0', '2001:db8::1', false], // families never match
    ['::/0', '2001:db8::1', true],
    ['::/0', '198.51.100.1', false],
    ['192.0.2.0/24', '::ffff:192.0.2.5', true], // mapped addresses are IPv4
  ])('%s ∋ %s: %s', (cidr, ip, expected) => {
    expect(cidrContains(cidr, ip)).toBe(expected);
  });

  const address = fc.oneof(fc.uint8Array({ minLength: 4, maxLength: 4 }), fc.uint8Array({ minLength: 16, maxLength: 16 })).map((b) => parseIp(formatIp(b)));
  const withBits = address.chain((ip) => fc.tuple(fc.constant(ip), fc.integer({ min: 0, max: ip.family === 4 ? 32 : 128 })));

  it('a prefix contains its own address, and its text parses back to itself', () => {
    fc.assert(
      fc.property(withBits, ([ip, bits]) => {
        const network = networkOf(ip, bits);
        expect(cidrContains(network, ip)).toBe(true);
        expect(parseCidr(network.text)).toEqual(network);
        expect(networkPrefix(network.text.split('/')[0]!, bits)).toBe(network.text);
      }),
      { numRuns: 2000 },
    );
  });

  it('a prefix does not contain an address differing in one of its bits, and does in any other', () => {
    fc.assert(
      fc.property(
        withBits.chain(([ip, bits]) => fc.tuple(fc.constant(ip), fc.constant(bits), fc.nat(ip.bytes.length * 8 - 1))),
        ([ip, bits, flip]) => {
          const other = ip.bytes.slice();
          other[flip >> 3]! ^= 0x80 >> (flip & 7);
          const otherIp = { family: ip.family, bytes: other, text: formatIp(other) };
          expect(cidrContains(networkOf(ip, bits), otherIp)).toBe(flip >= bits);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
