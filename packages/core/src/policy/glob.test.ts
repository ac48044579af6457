import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { compileGlob } from './glob.js';

/**
 * The reference: the regular expression globs used to compile to (`**` → `.*`,
 * `*` → `[^/]*`, the rest escaped), with `s` so that `**` also spans a line break, as
 * "any characters" says. It backtracks, so it is only asked about short paths.
 */
function globReference(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      source += '.*';
      i++;
    } else if (c === '*') source += '[^/]*';
    else source += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

describe('compileGlob', () => {
  it('reads * as one segment and ** as any number of them', () => {
    const password = compileGlob('/users/*/password');
    expect(password('/users/42/password')).toBe(true);
    expect(password('/users//password')).toBe(true);
    expect(password('/users/42/x/password')).toBe(false);
    expect(password('/users/42/password/')).toBe(false);
    const admin = compileGlob('/admin/**');
    expect(admin('/admin/a/b/c')).toBe(true);
    expect(admin('/admin/')).toBe(true);
    expect(admin('/admin')).toBe(false);
    const anywhere = compileGlob('/**/admin');
    expect(anywhere('/x/y/admin')).toBe(true);
    expect(anywhere('/x/y/admin/z')).toBe(false);
    const images = compileGlob('/static/*.png');
    expect(images('/static/a.png')).toBe(true);
    expect(images('/static/a/b.png')).toBe(false);
    expect(images('/static/a.jpg')).toBe(false);
  });

  it('takes every other character literally', () => {
    expect(compileGlob('/a.b/(x)/*')('/a.b/(x)/1')).toBe(true);
    expect(compileGlob('/a.b/(x)/*')('/aXb/(x)/1')).toBe(false);
    expect(compileGlob('/[a]+/**')('/[a]+/z')).toBe(true);
    expect(compileGlob('/[a]+/**')('/aa/z')).toBe(false);
  });

  it('lets ** span a line break, which the regular expression it replaces did not', () => {
    expect(compileGlob('/admin/**')('/admin/\nx')).toBe(true);
    expect(compileGlob('/**/admin/*')('/a\u2028/admin/\r')).toBe(true);
  });

  it('agrees with the regular-expression reading on every short glob and path', () => {
    const globPart = fc.constantFrom('/', 'a', 'b', '.', '*', '**', '***', '/*/', '/**/', '(', '\n');
    const pathChar = fc.constantFrom('/', 'a', 'b', '.', '(', '*', '\n');
    fc.assert(
      fc.property(fc.array(globPart, { maxLength: 8 }), fc.array(pathChar, { maxLength: 12 }), (parts, chars) => {
        const glob = parts.join('');
        const path = chars.join('');
        expect(compileGlob(glob)(path)).toBe(globReference(glob).test(path));
      }),
      { numRuns: 5_000 },
    );
  });

  it('agrees with the reference on paths built from the glob itself, where most of them match', () => {
    // Random paths rarely match a glob; these are the glob with its stars filled in, then mutated.
    const globPart = fc.constantFrom('/', 'a', 'b', '*', '**', '/*/', '/**/');
    const fill = fc.constantFrom('', 'a', 'b', '/', 'a/b', '//');
    fc.assert(
      fc.property(fc.array(globPart, { minLength: 1, maxLength: 7 }), fc.array(fill, { minLength: 7, maxLength: 7 }), fc.nat(20), fc.constantFrom('', 'a', '/'), (parts, fills, at, extra) => {
        const glob = parts.join('');
        let filled = parts.map((p, i) => (p.includes('*') ? p.replace(/\*+/, fills[i]!) : p)).join('');
        if (at < filled.length) filled = filled.slice(0, at) + extra + filled.slice(at + 1);
        expect(compileGlob(glob)(filled)).toBe(globReference(glob).test(filled));
      }),
      { numRuns: 5_000 },
    );
  });

  it('answers the same when called again with a shorter path (the row it keeps between calls)', () => {
    const m = compileGlob('/*/x/**/y');
    expect(m(`/a/x/${'b/'.repeat(500)}y`)).toBe(true);
    expect(m('/a/x/y')).toBe(false);
    expect(m('/a/x//y')).toBe(true);
    expect(m(`/a/x/${'b/'.repeat(500)}z`)).toBe(false);
  });
});
