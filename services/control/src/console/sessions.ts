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
 * Bounded: expired sessions are dropped when met and on each sign-in, and past `max`
 * the oldest is ended.
 */
export class SessionStore {
  private readonly sessions = new Map<string, Session>();

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
    // Map keeps insertion order, and sessions never move: the first key is the oldest.
    while (this.sessions.size >= this.limits.max) this.sessions.delete(this.sessions.keys().next().value!);
    const id = randomBytes(32).toString('base64url');
    const session: Session = { principal: { ...principal }, csrf: randomBytes(32).toString('base64url'), createdAt: now, expiresAt: now + this.limits.ttlMs };
    this.sessions.set(keyOf(id), session);
    return { id, session };
  }

  /** The live session an id names, or undefined (unknown, malformed or expired; an expired one is dropped). */
  get(id: string | undefined): Session | undefined {
    if (id === undefined || !SESSION_ID.test(id)) return undefined;
    const key = keyOf(id);
    const session = this.sessions.get(key);
    if (session === undefined) return undefined;
    if (session.expiresAt <= this.clock()) {
      this.sessions.delete(key);
      return undefined;
    }
    return session;
  }

  /** Ends a session (sign-out); true if there was one. */
  delete(id: string | undefined): boolean {
    if (id === undefined || !SESSION_ID.test(id)) return false;
    return this.sessions.delete(keyOf(id));
  }

  private sweep(now: number): void {
    for (const [key, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(key);
  }
}

/** 32 random bytes in base64url: exactly 43 characters. Anything else is refused before hashing. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

function keyOf(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}
