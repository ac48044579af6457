import { createHash, randomBytes } from 'node:crypto';
import type { Principal } from '../auth/tokens.js';

/** A signed-in console user: who the API token named, and the CSRF token their page sends with each write. */
export interface Session {
  readonly principal: Principal;
  /** Synchronizer token: given to the page (not in the cookie), required in `x-csrf-token` on every write. */
  readonly csrf: string;
  readonly createdAt: number;
  readonly expiresAt: number;
}

export interface SessionLimits {
  /** A session ends this long after sign-in, whatever it does. */
  ttlMs: number;
  /** Sessions held at most; signing in past it ends the oldest. */
  max: number;
}

/**
 * The console's sessions, in memory (a restart signs everyone out, which is the safe
 * direction). The cookie holds a random 256-bit id; the store keys sessions by the id's
 * SHA-256, so neither a heap dump nor a timing of the map lookup gives a usable id.
 * Bounded: expired sessions are dropped when met and on each sign-in; a token holds at
 * most MAX_SESSIONS_PER_TOKEN sessions (its oldest ends), and past `max` the oldest
 * session of the token holding the most ends. So signing in again and again with one
 * token, a viewer's say, ends only that token's sessions, never another user's.
 */
export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  /** Per token name, the keys of its sessions, oldest first (at most MAX_SESSIONS_PER_TOKEN). */
  private readonly byName = new Map<string, string[]>();

  constructor(
    private readonly limits: SessionLimits,
    private readonly clock: () => number,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /** A new session for `principal`: its id (for the cookie only) and the session. */
  create(principal: Principal): { id: string; session: Session } {
    const now = this.clock();
    this.sweep(now);
    const own = this.byName.get(principal.name) ?? [];
    if (own.length >= MAX_SESSIONS_PER_TOKEN) this.end(own[0]!);
    while (this.sessions.size >= this.limits.max) this.end(this.largestHolder()[0]!);
    const id = randomBytes(32).toString('base64url');
    const session: Session = { principal: { ...principal }, csrf: randomBytes(32).toString('base64url'), createdAt: now, expiresAt: now + this.limits.ttlMs };
    const key = keyOf(id);
    this.sessions.set(key, session);
    const keys = this.byName.get(principal.name);
    if (keys === undefined) this.byName.set(principal.name, [key]);
    else keys.push(key);
    return { id, session };
  }

  /** The live session an id names, or undefined (unknown, malformed or expired; an expired one is dropped). */
  get(id: string | undefined): Session | undefined {
    if (id === undefined || !SESSION_ID.test(id)) return undefined;
    const key = keyOf(id);
    const session = this.sessions.get(key);
    if (session === undefined) return undefined;
    if (session.expiresAt <= this.clock()) {
      this.end(key);
      return undefined;
    }
    return session;
  }

  /** Ends a session (sign-out); true if there was one. */
  delete(id: string | undefined): boolean {
    if (id === undefined || !SESSION_ID.test(id)) return false;
    return this.end(keyOf(id));
  }

  private sweep(now: number): void {
    for (const [key, session] of this.sessions) if (session.expiresAt <= now) this.end(key);
  }

  /** Ends the session stored under `key` (the id's hash); true if there was one. */
  private end(key: string): boolean {
    const session = this.sessions.get(key);
    if (session === undefined) return false;
    this.sessions.delete(key);
    const keys = this.byName.get(session.principal.name)!;
    keys.splice(keys.indexOf(key), 1);
    if (keys.length === 0) this.byName.delete(session.principal.name);
    return true;
  }

  /** The session keys of the token holding the most sessions (the first such token on a tie). */
  private largestHolder(): string[] {
    let largest: string[] = [];
    for (const keys of this.byName.values()) if (keys.length > largest.length) largest = keys;
    return largest;
  }
}

/**
 * Sessions one token holds at once: a sign-in past it ends that token's oldest. One per
 * browser signed in with the token; ten is room for a shared team token.
 */
export const MAX_SESSIONS_PER_TOKEN = 10;

/** 32 random bytes in base64url: exactly 43 characters. Anything else is refused before hashing. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

function keyOf(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}
