import { isIP, isIPv4 } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '../errors.js';
import { canonicalIpv4, canonicalIpv4At, formatIp, formatIpv4, parseIp, tryParseIp } from './ip.js';
import { eventPartitionKey, ipv4EventPartitionKey } from './cidr.js';

/** WHATWG URL serialises IPv6 the RFC 5952 way: an independent oracle for non-mapped addresses. */
function urlCanonical(bytes: Uint8Array): string {
  const groups = Array.from({ length: 8 }, (_, g) => ((bytes[2 * g]! << 8) | bytes[2 * g + 1]!).toString(16));
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

const isMapped = (b: Uint8Array) => b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/** Any valid spelling of the address: upper case, leading zeros, optionally `::` over some zero run. */
function spellings(bytes: Uint8Array): fc.Arbitrary<string> {
  const groups = Array.from({ length: 8 }, (_, g) => (bytes[2 * g]! << 8) | bytes[2 * g + 1]!);
  return fc.record({ upper: fc.boolean(), pad: fc.boolean(), compress: fc.nat() }).map(({ upper, pad, compress }) => {
    let parts = groups.map((g) => (pad ? g.toString(16).padStart(4, '0') : g.toString(16)));
    if (upper) parts = parts.map((p) => p.toUpperCase());
    const zeroRuns: [number, number][] = [];
    for (let i = 0; i < 8; i++) {
      if (groups[i] !== 0) continue;
      let j = i;
      while (j < 8 && groups[j] === 0) j++;
      zeroRuns.push([i, j]);
      i = j;
    }
    const run = zeroRuns.length > 0 ? zeroRuns[compress % zeroRuns.length] : undefined;
    if (!run) return parts.join(':');
    return `${parts.slice(0, run[0]).join(':')}::${parts.slice(run[1]).join(':')}`;
  });
}

const v6Bytes = fc.uint8Array({ minLength: 16, maxLength: 16 });
/** Addresses with zero runs, so compression is exercised often. */
const sparseV6Bytes = fc.array(fc.constantFrom(0, 0, 0, 1, 0xffff, 0xdb8, 0x2001), { minLength: 8, maxLength: 8 }).map((gs) => {
  const b = new Uint8Array(16);
  gs.forEach((g, i) => {
    b[2 * i] = g >> 8;
    b[2 * i + 1] = g & 0xff;
  });
  return b;
});

describe('parseIp: canonical text', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['0.0.0.0', '0.0.0.0'],
    ['255.255.255.255', '255.255.255.255'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:db8::0:1', '2001:db8::1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'], // one zero group is not compressed
    ['1:0:0:1:0:0:0:1', '1:0:0:1::1'], // the longest run
    ['1:0:0:1:1:0:0:1', '1::1:1:0:0:1'], // the first of equal runs
    ['::', '::'],
    ['::1', '::1'],
    ['1::', '1::'],
    ['1:2:3:4:5:6:7::', '1:2:3:4:5:6:7:0'],
    ['::2:3:4:5:6:7:8', '0:2:3:4:5:6:7:8'],
    ['64:ff9b::192.0.2.33', '64:ff9b::c000:221'],
    ['fe80::1%eth0', 'fe80::1'],
    ['fe80::1%25', 'fe80::1'],
  ])('%s → %s', (input, text) => {
    expect(parseIp(input).text).toBe(text);
  });

  it.each([['::ffff:192.0.2.1'], ['::FFFF:192.0.2.1'], ['::ffff:c000:0201'], ['::ffff:c000:201'], ['0:0:0:0:0:ffff:192.0.2.1']])('IPv4-mapped %s is the IPv4 address 192.0.2.1', (input) => {
    const ip = parseIp(input);
    expect(ip).toEqual({ family: 4, bytes: new Uint8Array([192, 0, 2, 1]), text: '192.0.2.1' });
  });

  it('gives 4 or 16 bytes in network order', () => {
    expect(parseIp('2001:db8::1').bytes).toEqual(new Uint8Array([0x20, 0x01, 0x0d, 0xb8, ...Array(11).fill(0), 1]));
    expect(parseIp('203.0.113.7')).toMatchObject({ family: 4, bytes: new Uint8Array([203, 0, 113, 7]) });
  });
});

describe('parseIp: invalid input', () => {
  it.each([
    ['', 'not an IP address: "" (empty)'],
    ['1.2.3', 'not an IP address: "1.2.3" (IPv4 needs 4 decimal octets)'],
    ['1.2.3.4.5', 'not an IP address: "1.2.3.4.5" (IPv4 needs exactly 4 octets)'],
    ['256.1.1.1', 'not an IP address: "256.1.1.1" (IPv4 octet above 255)'],
    ['1.2.3.1000', 'not an IP address: "1.2.3.1000" (IPv4 octet longer than 3 digits)'],
    ['01.2.3.4', 'not an IP address: "01.2.3.4" (leading zero in an IPv4 octet is ambiguous)'],
    ['1.2..4', 'not an IP address: "1.2..4" (unexpected "." at position 4)'],
    ['1.2.3.4%eth0', 'not an IP address: "1.2.3.4%eth0" (a zone id is only valid on IPv6)'],
    ['fe80::1%', 'not an IP address: "fe80::1%" (empty zone id)'],
    ['[::1]', 'not an IP address: "[::1]" (unexpected "[" at position 0)'],
    ['[::1]:443', 'not an IP address: "[::1]:443" (unexpected "[" at position 0)'],
    ['192.0.2.1:80', 'not an IP address: "192.0.2.1:80" (unexpected ":" at position 9)'],
    [' 192.0.2.1', 'not an IP address: " 192.0.2.1" (unexpected " " at position 0)'],
    ['10.0.0.0/8', 'not an IP address: "10.0.0.0/8" (unexpected "/" at position 8)'],
    ['1:2:3:4:5:6:7:8:9', 'not an IP address: "1:2:3:4:5:6:7:8:9" (IPv6 has more than 8 groups)'],
    ['1:2:3:4:5:6:7', 'not an IP address: "1:2:3:4:5:6:7" (IPv6 needs 8 groups or "::")'],
    ['1:2:3:4::5:6:7:8', 'not an IP address: "1:2:3:4::5:6:7:8" (IPv6 has "::" but already 8 groups)'],
    ['1::2::3', 'not an IP address: "1::2::3" (IPv6 has more than one "::")'],
    [':::', 'not an IP address: ":::" (unexpected ":" at position 2)'],
    [':1::', 'not an IP address: ":1::" (IPv6 cannot start with a single colon)'],
    ['1:', 'not an IP address: "1:" (IPv6 ends with a single colon)'],
    ['12345::', 'not an IP address: "12345::" (IPv6 group longer than 4 hex digits)'],
    ['g::1', 'not an IP address: "g::1" (unexpected "g" at position 0)'],
    ['::ffff:1.2.3', 'not an IP address: "::ffff:1.2.3" (IPv4 needs 4 decimal octets)'],
    ['::ffff:01.2.3.4', 'not an IP address: "::ffff:01.2.3.4" (leading zero in an IPv4 octet is ambiguous)'],
    ['1:2:3:4:5:6:7:1.2.3.4', 'not an IP address: "1:2:3:4:5:6:7:1.2.3.4" (IPv6 has more than 8 groups)'],
    ['1.2.3.4::', 'not an IP address: "1.2.3.4::" (unexpected ":" at position 7)'],
  ])('%j', (input, message) => {
    const err = (() => {
      try {
        parseIp(input);
      } catch (e) {
        return e;
      }
    })();
    expect(isBanstreamError(err, 'SUBJECT_INVALID_IP')).toBe(true);
    expect((err as Error).message).toBe(message);
    expect(tryParseIp(input)).toBeUndefined();
  });

  it('refuses over-long input before scanning it, and keeps the message short', () => {
    const long = `::${'0:'.repeat(1000)}1`;
    expect(() => parseIp(long)).toThrow(/^not an IP address: "::0:0:.{50,}…" \(longer than 64 characters\)$/);
  });

  it('refuses what node:net refuses (random short strings)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF:.%x '), maxLength: 20 }), (s) => {
        // node:net accepts zone ids too; both must agree on everything else.
        if (isIP(s) === 0) expect(tryParseIp(s)).toBeUndefined();
        else if (!s.includes('%') && !/(^|[.:])0\d/.test(s)) expect(tryParseIp(s)).toBeDefined();
      }),
      { numRuns: 3000 },
    );
  });
});

describe('parseIp: properties', () => {
  it('IPv4: format → parse → format is the identity, and the text is the input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 4, maxLength: 4 }), (bytes) => {
        const text = formatIp(bytes);
        const ip = parseIp(text);
        expect({ family: ip.family, bytes: ip.bytes, text: ip.text }).toEqual({ family: 4, bytes, text });
        expect(ip.int32).toBe(new DataView(bytes.buffer, bytes.byteOffset).getInt32(0));
        expect(isIP(text)).toBe(4);
      }),
    );
  });

  it('IPv6: every spelling parses to the same bytes and the RFC 5952 text (URL serialiser as oracle)', () => {
    fc.assert(
      fc.property(
        fc.oneof(v6Bytes, sparseV6Bytes).chain((b) => fc.tuple(fc.constant(b), spellings(b))),
        ([bytes, spelling]) => {
          const ip = parseIp(spelling);
          if (isMapped(bytes)) {
            expect(ip).toEqual({ family: 4, bytes: bytes.slice(12), text: formatIp(bytes.slice(12)) });
            return;
          }
          expect(ip.family).toBe(6);
          expect(ip.bytes).toEqual(bytes);
          expect(ip.text).toBe(urlCanonical(bytes));
          expect(parseIp(ip.text).text).toBe(ip.text);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('canonicalIpv4 and canonicalIpv4At: canonical dotted quads read from text and from bytes', () => {
  /**
   * What they must agree with: node:net, whose isIPv4 accepts exactly the canonical
   * dotted quads (no leading zeros). Not tryParseIp, which takes canonicalIpv4 as its
   * fast path; its agreement is checked separately below.
   */
  const oracle = (text: string): number => (isIPv4(text) ? text.split('.').reduce((a, o) => a * 256 + Number(o), 0) : -1);
  const octet = fc.oneof(fc.integer({ min: 0, max: 300 }).map(String), fc.constantFrom('00', '01', '010', '0', '255', '256', '1000', '', 'a', ' 1'));
  const texts = fc.oneof(
    fc.tuple(octet, octet, octet, octet).map((o) => o.join('.')),
    fc.array(octet, { minLength: 1, maxLength: 6 }).map((o) => o.join('.')),
    fc.constantFrom('1.2.3.4.', '.1.2.3.4', '1..2.3', '::ffff:1.2.3.4', '2001:db8::1', '1.2.3.4%eth0', '1.2.3.4/24'),
    fc.string({ maxLength: 20 }),
  );

  it('agree with node:net on every text, and canonicalIpv4At never reads outside its range', () => {
    fc.assert(
      fc.property(texts, (text) => {
        const bytes = Buffer.from(`9${text}9`, 'latin1');
        expect(canonicalIpv4At(bytes, 1, bytes.length - 1)).toBe(oracle(text));
        expect(canonicalIpv4(text)).toBe(oracle(text));
      }),
      { numRuns: 5_000 },
    );
    expect(canonicalIpv4('255.255.255.255')).toBe(0xffffffff);
    expect(canonicalIpv4At(Buffer.from('255.255.255.255'), 0, 15)).toBe(0xffffffff);
    expect(canonicalIpv4At(Buffer.from('0.0.0.0'), 0, 7)).toBe(0);
  });

  it('tryParseIp gives the same address through its IPv4 fast path as node:net reads', () => {
    fc.assert(
      fc.property(texts, (text) => {
        const ip = tryParseIp(text);
        const value = oracle(text);
        if (value >= 0) expect(ip && { family: ip.family, value: Buffer.from(ip.bytes).readUInt32BE(0), text: ip.text }).toEqual({ family: 4, value, text });
        // Anything else is the general scan's: canonical only if it is not a plain dotted quad.
        else expect(ip?.family === 4 && ip.text === text).toBe(false);
      }),
      { numRuns: 5_000 },
    );
  });

  it('formats back, and keys the /24 as eventPartitionKey does', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (address) => {
        const text = formatIpv4(address);
        expect(oracle(text)).toBe(address);
        expect(ipv4EventPartitionKey(address)).toBe(eventPartitionKey(text));
      }),
      { numRuns: 2_000 },
    );
  });
});
