import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import FindMyWay from 'find-my-way';
import { normalisePath } from '@banstream/core';

/**
 * The path banstream matches must name the resource the protected service serves, or
 * a client spells its way past a ban (`/%61dmin` is served by `/admin`). Fastify routes
 * with find-my-way (this is its copy): whatever request target it serves with a route,
 * normalisePath must turn into that route, so a ban or policy on the route sees it.
 * With `ignoreDuplicateSlashes` too, as banstream merges runs of `/`. (Dot segments
 * it does not resolve: banstream does, as nginx, Envoy and WHATWG URLs do; that side
 * is in packages/core/src/subjects/path.test.ts.)
 */

const DELIMITERS = '/?#%;:@&=+$,';
const decodable = (c: string) => c >= '!' && c <= '~' && !DELIMITERS.includes(c);

/** Route characters: find-my-way reads `:` and `*` as parameters, `%` is the escape; `/` separates. */
const routeChar = fc.constantFrom(...'abcxyzABZ019-._~!\'()"<>[\\]^`{|}@&=+$,;'.split(''));
const segment = fc
  .array(routeChar, { minLength: 1, maxLength: 6 })
  .map((cs) => cs.join(''))
  .filter((s) => s !== '.' && s !== '..');
const route = fc.array(segment, { minLength: 1, maxLength: 4 }).map((segments) => `/${segments.join('/')}`);

/** `r` as a client may write it for Fastify to serve it as `r`: escapes in either case, a query, a fragment, absolute form. */
function respelling(r: string): fc.Arbitrary<string> {
  const chars = [...r].map((c) =>
    decodable(c) ? fc.constantFrom(c, `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`, `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`) : fc.constant(c),
  );
  return (
    fc
      .tuple(fc.constantFrom('', 'http://shop.example', 'HTTPS://shop.example:8443'), fc.tuple(...chars), fc.constantFrom('', '?q=/admin', '?', '#x', '?a=1#b'))
      // find-my-way refuses an absolute-form target with a fragment (none is valid in a request target).
      .map(([scheme, spelled, tail]) => `${scheme}${spelled.join('')}${scheme !== '' && tail.includes('#') ? '' : tail}`)
  );
}

function router(routes: readonly string[], ignoreDuplicateSlashes: boolean) {
  const r = FindMyWay({ ignoreDuplicateSlashes });
  for (const path of new Set(routes)) r.on('GET', path, () => undefined, { route: path });
  return r;
}

const servedBy = (r: ReturnType<typeof router>, target: string): string | undefined => (r.find('GET', target) as { store?: { route: string } } | null)?.store?.route;

describe("normalisePath against Fastify's router", () => {
  it('turns every spelling Fastify serves with a route into that route', () => {
    fc.assert(
      fc.property(
        route.chain((r) => fc.tuple(fc.constant(r), respelling(r), fc.boolean())),
        ([r, target, doubled]) => {
          expect(normalisePath(r)).toBe(r);
          const slashes = doubled ? target.replace(/(^|[^/:])\/(?!\/)/g, '$1//') : target;
          const served = servedBy(router([r], doubled), slashes);
          expect(served, `find-my-way serves ${JSON.stringify(slashes)} with ${JSON.stringify(r)}`).toBe(r);
          expect(normalisePath(slashes)).toBe(r);
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('gives any target the router serves with a route the normal form of that route (hostile targets)', () => {
    const routes = ['/admin', '/login', '/a!b', "/x(y)'!", '/a/b', '/a%2Fb', '/%C3%BC', '/~user/.profile', '/a b', '/a;b', '/%7Cpipe', '/a..'];
    const piece = fc.oneof(
      fc.constantFrom('/', '//', '.', '..', '%2e', '%2E', '%2f', '%2F', '%', '%zz', '?', '#', 'admin', 'login', 'a', 'b', 'x', 'y', '(', ')', "'", '*', '!', ';', ' '),
      fc.integer({ min: 0, max: 255 }).map((code) => `%${code.toString(16).padStart(2, '0')}`),
      fc.constantFrom('http://h', 'HTTP://h', 'https://u@h:1', 'ü', '%c3%bc', '~user', '.profile', '%7c', 'pipe'),
    );
    // Node's parsers (HTTP/1.1 and HTTP/2) pass Fastify a target starting with `/`, an absolute-form one or `*`.
    const random = fc.array(piece, { maxLength: 12 }).map((parts) => parts.join(''));
    // A route respelled, with hostile pieces slipped in: near misses and hits.
    const nearRoute = fc
      .tuple(fc.constantFrom(...routes).chain(respelling), fc.array(fc.tuple(fc.nat(), piece), { maxLength: 2 }))
      .map(([t, inserts]) => inserts.reduce((acc, [at, p]) => acc.slice(0, at % (acc.length + 1)) + p + acc.slice(at % (acc.length + 1)), t));
    const target = fc.oneof(random, nearRoute).map((t) => (/^(\/|\*$|https?:\/\/)/i.test(t) ? t : `/${t}`));
    const strict = router(routes, false);
    const merging = router(routes, true);
    let served = 0;
    fc.assert(
      fc.property(target, (t) => {
        for (const r of [strict, merging]) {
          const route = servedBy(r, t);
          if (route === undefined) continue;
          served++;
          expect(normalisePath(t), `find-my-way serves ${JSON.stringify(t)} with ${JSON.stringify(route)}`).toBe(normalisePath(route));
        }
      }),
      { numRuns: 10_000 },
    );
    expect(served).toBeGreaterThan(2_000); // the comparison really ran
  });
});
