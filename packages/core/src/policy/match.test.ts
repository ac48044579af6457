import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compileGlob } from './glob.js';
import { compileMatch, type MatchableRequest } from './match.js';

const req = (r: Partial<MatchableRequest> = {}): MatchableRequest => ({ method: 'POST', host: 'shop.example.com', path: '/login', headers: {}, ...r });

describe('compileMatch', () => {
  it('matches everything without a match block', () => {
    expect(compileMatch(undefined)(req())).toBe(true);
  });

  it('requires every condition (AND) and any value of a list (OR)', () => {
    const m = compileMatch({ methods: ['POST', 'PUT'], pathPrefixes: ['/login'], countries: ['FR', 'DE'] });
    expect(m(req({ country: 'DE' }))).toBe(true);
    expect(m(req({ country: 'US' }))).toBe(false);
    expect(m(req({ country: 'FR', method: 'GET' }))).toBe(false);
    expect(m(req({ country: undefined }))).toBe(false);
  });

  it('matches exact hosts and sub-domain wildcards, not look-alikes', () => {
    const m = compileMatch({ hosts: ['example.com', '*.example.com'] });
    expect(m(req({ host: 'example.com' }))).toBe(true);
    expect(m(req({ host: 'api.eu.example.com' }))).toBe(true);
    expect(m(req({ host: 'badexample.com' }))).toBe(false);
  });

  it('matches path prefixes and globs', () => {
    const m = compileMatch({ pathPrefixes: ['/api/'], paths: ['/users/*/password', '/admin/**'] });
    expect(m(req({ path: '/api/v1/orders' }))).toBe(true);
    expect(m(req({ path: '/users/42/password' }))).toBe(true);
    expect(m(req({ path: '/users/42/x/password' }))).toBe(false);
    expect(m(req({ path: '/admin/a/b/c' }))).toBe(true);
    expect(m(req({ path: '/apix' }))).toBe(false);
  });

  it('compares a path without a star whole: not as a prefix, its dots and brackets literal', () => {
    const m = compileMatch({ paths: ['/login', '/a.b/(x)'] });
    expect(m(req({ path: '/login' }))).toBe(true);
    expect(m(req({ path: '/login/' }))).toBe(false);
    expect(m(req({ path: '/log' }))).toBe(false);
    expect(m(req({ path: '/a.b/(x)' }))).toBe(true);
    expect(m(req({ path: '/aXb/(x)' }))).toBe(false);
  });

  it('matches a listed path exactly when its glob would, stars or not', () => {
    const segment = fc.constantFrom('a', 'b', '.', '*', '**', 'x.y', '(z)');
    const pathOf = (parts: string[]) => `/${parts.join('/')}`;
    fc.assert(
      fc.property(fc.array(fc.array(segment, { maxLength: 3 }), { minLength: 1, maxLength: 3 }), fc.array(fc.constantFrom('a', 'b', '.', 'x.y', '(z)', 'q'), { maxLength: 4 }), (globs, parts) => {
        const paths = globs.map(pathOf);
        const path = pathOf(parts);
        expect(compileMatch({ paths })(req({ path }))).toBe(paths.some((g) => compileGlob(g)(path)));
      }),
    );
  });

  it('matches when a listed path or a prefix does, for any mix of whole paths, globs and prefixes', () => {
    const segment = fc.constantFrom('a', 'b', '*', 'x.y');
    const pathOf = (parts: string[]) => `/${parts.join('/')}`;
    const some = fc.array(fc.array(segment, { maxLength: 3 }), { maxLength: 3 }).map((lists) => lists.map(pathOf));
    fc.assert(
      fc.property(some, some, fc.array(fc.constantFrom('a', 'b', 'x.y', 'q'), { maxLength: 4 }), (paths, prefixes, parts) => {
        fc.pre(paths.length + prefixes.length > 0);
        const path = pathOf(parts);
        const spec = { ...(paths.length > 0 ? { paths } : {}), ...(prefixes.length > 0 ? { pathPrefixes: prefixes } : {}) };
        const expected = paths.some((g) => compileGlob(g)(path)) || prefixes.some((p) => path.startsWith(p));
        expect(compileMatch(spec)(req({ path }))).toBe(expected);
      }),
    );
  });

  it('counts only the listed responses, so brute-force rules count failures only', () => {
    const m = compileMatch({ statuses: [401, 403], statusClasses: ['5xx'] });
    expect(m(req({ status: 401 }))).toBe(true);
    expect(m(req({ status: 503 }))).toBe(true);
    expect(m(req({ status: 200 }))).toBe(false);
    expect(m(req({ status: undefined }))).toBe(false);
  });

  it('leaves the status conditions out at check time, and only them', () => {
    const spec = { pathPrefixes: ['/login'], statuses: [401], statusClasses: ['5xx' as const] };
    const atCheck = compileMatch(spec, { atCheck: true });
    for (const status of [undefined, 200, 401, 503]) expect(atCheck(req({ status }))).toBe(true);
    expect(atCheck(req({ path: '/home' }))).toBe(false);
    expect(compileMatch({ statuses: [401] }, { atCheck: true })(req())).toBe(true);
    // Without status conditions both predicates are the same.
    const plain = { methods: ['GET'], pathPrefixes: ['/a'] };
    fc.assert(
      fc.property(fc.constantFrom('GET', 'POST'), fc.constantFrom('/a', '/a/b', '/b'), fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }), (method, path, status) => {
        const r = req({ method, path, status });
        expect(compileMatch(plain, { atCheck: true })(r)).toBe(compileMatch(plain)(r));
      }),
    );
  });

  it('evaluates header predicates case-insensitively on the name', () => {
    const ua = compileMatch({ headers: [{ name: 'User-Agent', matches: '^(curl|python-requests)/' }] });
    expect(ua(req({ headers: { 'user-agent': 'curl/8.1' } }))).toBe(true);
    expect(ua(req({ headers: { 'user-agent': 'Mozilla/5.0' } }))).toBe(false);
    expect(ua(req())).toBe(false);
    expect(compileMatch({ headers: [{ name: 'x-api-key', present: false }] })(req())).toBe(true);
    expect(compileMatch({ headers: [{ name: 'x-tenant', equals: 'acme' }] })(req({ headers: { 'x-tenant': 'acme' } }))).toBe(true);
    expect(compileMatch({ headers: [{ name: 'referer', contains: 'evil' }] })(req({ headers: { referer: 'https://evil.test/' } }))).toBe(true);
  });

  it('runs header patterns with RE2 syntax, case-insensitive with (?i)', () => {
    const bots = compileMatch({ headers: [{ name: 'user-agent', matches: '(?i)(bot|crawler)/[0-9]+' }] });
    expect(bots(req({ headers: { 'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1)' } }))).toBe(true);
    expect(bots(req({ headers: { 'user-agent': 'SomeCRAWLER/7' } }))).toBe(true);
    expect(bots(req({ headers: { 'user-agent': 'Mozilla/5.0' } }))).toBe(false);
    expect(() => compileMatch({ headers: [{ name: 'user-agent', matches: '(a)\\1' }] })).toThrow(/backreferences cannot run in linear time/);
  });

  it('matches regions', () => {
    expect(compileMatch({ regions: ['FR-IDF'] })(req({ region: 'FR-IDF' }))).toBe(true);
    expect(compileMatch({ regions: ['FR-IDF'] })(req({ region: 'FR-ARA' }))).toBe(false);
  });
});
