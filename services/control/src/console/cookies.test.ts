import { describe, expect, it } from 'vitest';
import { clearedSessionCookie, readSessionCookie, sessionCookie } from './cookies.js';

describe('session cookie', () => {
  const id = 'A'.repeat(43);

  it('is HttpOnly, SameSite=Strict, Path=/, and Secure only over TLS', () => {
    expect(sessionCookie(id, { secure: false, maxAgeSeconds: 3600 })).toBe(`banstream-session=${id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600`);
    expect(sessionCookie(id, { secure: true, maxAgeSeconds: 3600 })).toBe(`banstream-session=${id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600; Secure`);
    expect(clearedSessionCookie(false)).toBe('banstream-session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0');
  });

  it('is read from a Cookie header among others; twice is refused', () => {
    expect(readSessionCookie(`theme=dark; banstream-session=${id}; other=1`)).toBe(id);
    expect(readSessionCookie(`banstream-session=${id}`)).toBe(id);
    expect(readSessionCookie('theme=dark')).toBeUndefined();
    expect(readSessionCookie(undefined)).toBeUndefined();
    expect(readSessionCookie(`banstream-session=${id}; banstream-session=${id}`)).toBeUndefined();
    expect(readSessionCookie(`xbanstream-session=${id}`)).toBeUndefined();
    expect(readSessionCookie('x'.repeat(10_000))).toBeUndefined();
  });
});
