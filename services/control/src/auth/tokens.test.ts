import { describe, expect, it } from 'vitest';
import { allows, hashToken, newToken, ROLES, tokenEntryLine, type Permission } from '@banstream/api';
import { TokenBook } from './tokens.js';

describe('TokenBook', () => {
  const alice = newToken();
  const bob = newToken();
  const book = new TokenBook(`# people\n${tokenEntryLine('alice', 'admin', alice)}\n${tokenEntryLine('bob', 'viewer', bob)} # read only\n`);

  it('identifies a token by its hash and knows nothing of others', () => {
    expect(book.size).toBe(2);
    expect(book.identify(alice)).toEqual({ name: 'alice', role: 'admin' });
    expect(book.identify(bob)).toEqual({ name: 'bob', role: 'viewer' });
    expect(book.identify(`${alice}x`)).toBeUndefined();
    expect(book.identify('')).toBeUndefined();
  });

  it('reads comma-separated entries as in CONTROL_TOKENS', () => {
    const inline = new TokenBook(`${tokenEntryLine('a', 'operator', alice)},${tokenEntryLine('b', 'admin', bob)}`);
    expect(inline.identify(bob)?.role).toBe('admin');
  });

  it('refuses clear tokens, unknown roles and repeated names, naming the entry', () => {
    expect(() => new TokenBook(`alice:admin:${alice}`)).toThrow(/entry 1 \(alice\): expected the token's SHA-256/);
    expect(() => new TokenBook(`alice:root:${hashToken(alice)}`)).toThrow(/role must be viewer, operator or admin/);
    expect(() => new TokenBook(`a:admin:${hashToken(alice)}\na:viewer:${hashToken(bob)}`)).toThrow(/entry 2: the name a is given twice/);
  });

  it('makes tokens that are long, random and URL-safe', () => {
    expect(newToken()).toMatch(/^bst_[A-Za-z0-9_-]{43}$/);
    expect(newToken()).not.toBe(newToken());
  });
});

describe('roles', () => {
  it('orders the roles: each may do what the one below may', () => {
    const matrix = Object.fromEntries(
      ROLES.map((r) => [r, (['read', 'bans:write', 'allowlist:write', 'backtests:run', 'feeds:write', 'feeds:force', 'policies:write'] as Permission[]).filter((p) => allows(r, p))]),
    );
    expect(matrix).toEqual({
      viewer: ['read'],
      operator: ['read', 'bans:write', 'allowlist:write', 'backtests:run', 'feeds:write'],
      admin: ['read', 'bans:write', 'allowlist:write', 'backtests:run', 'feeds:write', 'feeds:force', 'policies:write'],
    });
  });
});
