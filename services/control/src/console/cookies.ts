/**
 * The console's one cookie. Its value is ours (43 base64url characters), so reading it
 * needs no general cookie parser; the `cookie` package's current major needs Node 22.
 */
export const SESSION_COOKIE = 'banstream-session';

/** The value of the session cookie in a Cookie header, or undefined. A repeated cookie is refused (a sign of injection). */
export function readSessionCookie(header: string | undefined): string | undefined {
  if (header === undefined || header.length > 8192) return undefined;
  let found: string | undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    if (found !== undefined) return undefined;
    found = part.slice(eq + 1).trim();
  }
  return found;
}

export interface CookieOptions {
  /** Set over TLS: the browser then never sends the cookie over plain HTTP. */
  secure: boolean;
  maxAgeSeconds: number;
}

/** HttpOnly (no script reads it), SameSite=Strict (no cross-site request carries it), Path=/ (the API under /v1 needs it too). */
export function sessionCookie(id: string, options: CookieOptions): string {
  return `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}${options.secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie('', { secure, maxAgeSeconds: 0 });
}
