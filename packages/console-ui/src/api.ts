/** Who is signed in, as POST/GET /console/session answer. */
export interface SessionInfo {
  name: string;
  role: 'viewer' | 'operator' | 'admin';
  /** Sent in x-csrf-token with every write: the cookie alone does not let a page change anything. */
  csrf: string;
  expiresAt: number;
}

export interface FieldError {
  path: string;
  message: string;
  line?: number;
  column?: number;
}

/** An API refusal, from its problem+json body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: FieldError[] = [],
  ) {
    super(message);
  }
}

let csrf: string | undefined;
/** Told when the API says the session is gone (401), so the page shows the sign-in form. */
let onSignedOut: () => void = () => {};

export function useSession(session: SessionInfo | undefined, signedOut: () => void): void {
  csrf = session?.csrf;
  onSignedOut = signedOut;
}

/** GETs started before the first render, by path, for the page that asks for them once rendered. */
const early = new Map<string, { at: number; answer: Promise<unknown>; settled?: { value: unknown } }>();
/** Older than this, an early answer is not used: the page asks again. */
const EARLY_MS = 5_000;

/**
 * Starts a GET now, as the page is being loaded: the session check and the opened page's
 * first request then travel together instead of one after the other. The first api()
 * call for the same path takes the answer (once).
 */
export function prefetch(path: string): void {
  const answer = request('GET', path);
  const entry: { at: number; answer: Promise<unknown>; settled?: { value: unknown } } = { at: performance.now(), answer };
  // Whoever takes it handles a refusal; until then it must not count as unhandled.
  answer.then(
    (value) => {
      entry.settled = { value };
    },
    () => undefined,
  );
  early.set(path, entry);
}

/** The early answer for `path` if it has already arrived (taken once): a page can render with it at once. */
export function takePrefetched<T>(path: string): T | undefined {
  const entry = early.get(path);
  if (entry?.settled === undefined || performance.now() - entry.at >= EARLY_MS) return undefined;
  early.delete(path);
  return entry.settled.value as T;
}

/** Forgets the early answers (signed out: they were refused, or belong to another user). */
export function dropPrefetched(): void {
  early.clear();
}

/**
 * A call to the control API (or /console) with the session cookie; writes carry the
 * CSRF token. Answers are JSON; a refusal becomes an ApiError with the problem's detail.
 */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const started = method === 'GET' ? early.get(path) : undefined;
  if (started !== undefined) {
    early.delete(path);
    if (performance.now() - started.at < EARLY_MS) return started.answer as Promise<T>;
  }
  return request<T>(method, path, body);
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrf !== undefined) headers['x-csrf-token'] = csrf;
  const res = await fetch(path, { method, headers, credentials: 'same-origin', ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const p = (parsed ?? {}) as { code?: string; detail?: string; errors?: FieldError[] };
    if (res.status === 401 && !path.startsWith('/console/session')) onSignedOut();
    throw new ApiError(res.status, p.code ?? `HTTP_${res.status}`, p.detail ?? `${method} ${path} answered ${res.status}`, p.errors ?? []);
  }
  return parsed as T;
}

export const enc = encodeURIComponent;

/** A query string from the defined, non-empty values. */
export function query(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
