import { describe, expect, it } from 'vitest';
import { SessionStore } from './sessions.js';

describe('SessionStore', () => {
  const alice = { name: 'alice', role: 'operator' as const };
  const bob = { name: 'bob', role: 'viewer' as const };

  it('gives an opaque random id and a separate CSRF token, and finds the session by the id only', () => {
    let now = 1_000;
    const store = new SessionStore({ ttlMs: 60_000, max: 10 }, () => now);
    const { id, session } = store.create(alice);
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(session.csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(session.csrf).not.toBe(id);
    expect(store.create(alice).id).not.toBe(id);
    expect(store.get(id)?.principal).toEqual(alice);
    expect(store.get(session.csrf)).toBeUndefined();
    expect(store.get(`${id.slice(0, -1)}${id.endsWith('A') ? 'B' : 'A'}`)).toBeUndefined();
    expect(store.get(undefined)).toBeUndefined();
    expect(store.get('')).toBeUndefined();
    expect(store.get(`${id}x`)).toBeUndefined();
    now += 1;
    expect(store.get(id)?.expiresAt).toBe(61_000);
  });

  it('ends a session at its expiry and drops it', () => {
    let now = 0;
    const store = new SessionStore({ ttlMs: 1_000, max: 10 }, () => now);
    const { id } = store.create(alice);
    now = 999;
    expect(store.get(id)).toBeDefined();
    now = 1_000;
    expect(store.get(id)).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('ends the oldest session past the cap, and sweeps expired ones at sign-in', () => {
    let now = 0;
    const store = new SessionStore({ ttlMs: 10_000, max: 3 }, () => now);
    const ids = [alice, bob, alice].map((p) => store.create(p).id);
    const fourth = store.create(bob).id;
    expect(store.size).toBe(3);
    expect(store.get(ids[0])).toBeUndefined();
    expect(store.get(ids[1])).toBeDefined();
    expect(store.get(fourth)?.principal).toEqual(bob);
    now = 20_000;
    store.create(alice);
    expect(store.size).toBe(1);
  });

  it('does not let one token sign everyone else out by signing in past the cap', () => {
    let now = 0;
    const store = new SessionStore({ ttlMs: 10_000, max: 20 }, () => now);
    const admins = [0, 1, 2].map(() => store.create({ name: 'root', role: 'admin' }).id);
    // A viewer's token (a dashboard's, a leaked one) signs in again and again: only its own sessions end.
    for (let i = 0; i < 1_000; i++) {
      now++;
      store.create(bob);
    }
    for (const id of admins) expect(store.get(id)?.principal.name).toBe('root');
    expect(store.size).toBeLessThanOrEqual(20);
  });

  it('signs out: the id no longer opens anything', () => {
    const store = new SessionStore({ ttlMs: 10_000, max: 3 }, () => 0);
    const { id } = store.create(alice);
    expect(store.delete(id)).toBe(true);
    expect(store.get(id)).toBeUndefined();
    expect(store.delete(id)).toBe(false);
    expect(store.delete('not an id')).toBe(false);
  });

  it('keeps its own copy of the principal', () => {
    const store = new SessionStore({ ttlMs: 10_000, max: 3 }, () => 0);
    const principal = { name: 'carol', role: 'admin' as const };
    const { id } = store.create(principal);
    principal.role = 'viewer' as never;
    expect(store.get(id)?.principal.role).toBe('admin');
  });
});
