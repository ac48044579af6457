import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isNormalPathBytes, normalisePath } from './path.js';

/** Escapes the normal form decodes: printable ASCII but `/ ? # % ; : @ & = + $ ,`. */
const DELIMITERS = '/?#%;:@&=+$,';
const decoded = (code: number) => code >= 0x21 && code <= 0x7e && !DELIMITERS.includes(String.fromCharCode(code));

/** `%xx` for a byte, in either case of hex. */
const escape = fc.tuple(fc.integer({ min: 0, max: 255 }), fc.boolean()).map(([code, lower]) => {
  const hex = code.toString(16).padStart(2, '0');
  return `%${lower ? hex : hex.toUpperCase()}`;
});
/** Pieces a hostile path is made of: dot segments written every way, slashes, escapes, stray `%`, delimiters. */
const piece = fc.oneof(
  fc.constantFrom('/', '/', '//', '.', '..', '/./', '/../', '%2e', '%2E', '.%2e', '%2e%2E', 'a', 'admin', 'login', '%', '%4', '%zz', '?', '#', '~', '-', '_', "!'()*"),
  escape,
  fc.constantFrom(...'abcXYZ09!$&\'()*+,;=:@"<>[\\]^`{|}'.split('')),
  fc.constantFrom('é', 'ü', '\u2028', '\u{1F600}', '\uD800', '\uDC00', '\u0000', '\u007f', ' ', '\t', 'http://h', 'HTTPS://u@h:8', 'ftp://x'),
);
const hostilePath = fc.array(piece, { maxLength: 24 }).map((parts) => parts.join(''));
const originPath = hostilePath.map((p) => (p.startsWith('/') ? p : `/${p}`));

describe('normalisePath', () => {
  it.each([
    ['/admin', '/admin'],
    ['/%61dmin', '/admin'],
    ['/%61%64%6d%69%6e', '/admin'],
    ['/log%69n', '/login'],
    ['/a%21b', '/a!b'],
    ['/a%7e%5F%2d%2E', '/a~_-.'],
    ['/a%2fb', '/a%2Fb'],
    ['/a%3f%23%25%3b', '/a%3F%23%25%3B'],
    ['/a?b=1', '/a'],
    ['/a#x', '/a'],
    ['?x', ''],
    ['', ''],
    ['/', '/'],
    ['//admin', '/admin'],
    ['/a//b//', '/a/b/'],
    ['/a/../admin', '/admin'],
    ['/a//../admin', '/admin'],
    ['/%2e%2e/admin', '/admin'],
    ['/a/.%2E/admin', '/admin'],
    ['/a/./b/.', '/a/b/'],
    ['/a/b/..', '/a/'],
    ['/../../..', '/'],
    ['/a/b/../../../c?d', '/c'],
    ['/.well-known/x', '/.well-known/x'],
    ['/..a/b.', '/..a/b.'],
    ['http://shop.example/admin?x', '/admin'],
    ['HTTPS://u@h:8443', '/'],
    ['admin', '/admin'],
    ['./admin', '/admin'],
    ['*', '/*'],
    ['/a%zz', '/a%25zz'],
    ['/a%4%31', '/a%2541'],
    ['/a%', '/a%25'],
    ['/ü/%c3%bc', '/ü/%C3%BC'],
    ['/a b\u0000\uD800', '/a b\u0000\uD800'],
  ])('%j → %j', (path, expected) => {
    expect(normalisePath(path)).toBe(expected);
    expect(normalisePath(expected)).toBe(expected);
  });

  it('returns a path already in normal form itself, not a copy', () => {
    const path = `/shop/${'x'.repeat(40)}/cart%2Fitems`;
    expect(normalisePath(path)).toBe(path);
  });

  it('is idempotent, starts with / and keeps no dot segment, no //, no query and no escape it would decode', () => {
    fc.assert(
      fc.property(hostilePath, (path) => {
        const once = normalisePath(path);
        expect(normalisePath(once)).toBe(once);
        if (once === '') return;
        expect(once.startsWith('/')).toBe(true);
        expect(once).not.toMatch(/\/\/|[?#]|(^|\/)\.\.?(\/|$)/);
        for (const m of once.matchAll(/%(..)/g)) {
          expect(m[1]).toMatch(/^[0-9A-F]{2}$/);
          expect(decoded(parseInt(m[1]!, 16))).toBe(false);
        }
      }),
      { numRuns: 5_000 },
    );
  });

  it('agrees with a WHATWG URL after its escapes are put in the same form (runs of / merged first, as nginx does)', () => {
    // The reference: WHATWG resolves dot segments (%2e too) and cuts the query; what it
    // leaves escaped or not is then written as the normal form writes it.
    const escapes = (p: string) =>
      p.replace(/%(?![0-9A-Fa-f]{2})|%([0-9A-Fa-f]{2})/g, (_, hex: string | undefined) => {
        if (hex === undefined) return '%25';
        const code = parseInt(hex, 16);
        return decoded(code) ? String.fromCharCode(code) : `%${hex.toUpperCase()}`;
      });
    const reference = (p: string) => escapes(new URL(p.replace(/\/{2,}/g, '/'), 'http://x').pathname);
    // WHATWG reads `\` as `/` (Node and nginx do not) and encodes raw controls, spaces and non-ASCII (kept raw here).
    const comparable = originPath.filter((p) => !/[\\\u0000-\u0020\u007f-\uffff]/.test(p));
    fc.assert(
      fc.property(comparable, (path) => {
        expect(normalisePath(path)).toBe(reference(path));
      }),
      { numRuns: 5_000 },
    );
  });

  it('isNormalPathBytes says, off the bytes, whether normalisePath would leave a path as it is', () => {
    const bytes = fc.oneof(
      hostilePath.map((p) => Buffer.from(p, 'latin1')),
      fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)),
      originPath.map((p) => Buffer.from(normalisePath(p), 'latin1')),
    );
    let normal = 0;
    fc.assert(
      fc.property(bytes, fc.nat(3), (b, pad) => {
        const text = b.toString('latin1');
        const framed = Buffer.concat([Buffer.alloc(pad, 0x2e), b, Buffer.alloc(pad, 0x2f)]);
        const expected = normalisePath(text) === text;
        if (expected) normal++;
        expect(isNormalPathBytes(framed, pad, pad + b.length)).toBe(expected);
      }),
      { numRuns: 5_000 },
    );
    expect(normal).toBeGreaterThan(500);
  });

  it('runs in time linear in the path: each hostile 8 KB path within 20 ms', () => {
    const length = 8192;
    const cycle = (unit: string) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
    const paths = [
      cycle('/..'),
      cycle('/a/..'),
      cycle('/%2e%2e'),
      cycle('/'),
      cycle('%'),
      cycle('%41'),
      cycle('%2f'),
      `${cycle('/a').slice(0, -3)}%41`,
      cycle('/.%2E/a'),
      `/${cycle('a/')}${cycle('../')}`,
      cycle('/%zz'),
      `http://${cycle('h')}`,
      cycle('a'),
      `/${cycle('a')}`,
    ];
    for (const path of paths) {
      normalisePath(path);
      const started = performance.now();
      for (let i = 0; i < 5; i++) normalisePath(path);
      const ms = (performance.now() - started) / 5;
      expect(ms, `${path.slice(0, 20)}… took ${ms.toFixed(2)} ms`).toBeLessThan(20);
    }
  });
});
