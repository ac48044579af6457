import { readFileSync } from 'node:fs';
import { CliError, EXIT, exitForStatus } from './exit-codes.js';
import { DEFAULT_CONTROL_URL } from './env.js';

export interface Connection {
  url: string;
  token?: string;
}

/**
 * Where the API is and the token to use: --url or BANSTREAM_URL (default the local
 * control service), the token from BANSTREAM_TOKEN or the file named by
 * --token-file / BANSTREAM_TOKEN_FILE. There is no --token flag: a token on the
 * command line ends up in shell history and process lists.
 */
export function connection(flags: { url?: string; tokenFile?: string }, env: NodeJS.ProcessEnv): Connection {
  const url = (flags.url ?? env.BANSTREAM_URL ?? DEFAULT_CONTROL_URL).replace(/\/+$/, '');
  const file = flags.tokenFile ?? env.BANSTREAM_TOKEN_FILE;
  let token = env.BANSTREAM_TOKEN;
  if (file !== undefined) {
    try {
      token = readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new CliError(`cannot read the token file ${file}: ${(error as Error).message}`, EXIT.usage);
    }
  }
  return token ? { url, token } : { url };
}

interface Problem {
  detail?: string;
  code?: string;
  errors?: { path: string; message: string }[];
}

/** A thin client of the control API: JSON in, JSON out, problems become CliErrors with their exit code. */
export class ApiClient {
  constructor(private readonly conn: Connection) {}

  get<T>(path: string, query: Record<string, string | number | boolean | undefined> = {}): Promise<T> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    return this.request<T>('GET', qs ? `${path}?${qs}` : path);
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  delete<T>(path: string): Promise<T> {
    return this.request<T>('DELETE', path);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    if (!this.conn.token) throw new CliError('no API token: set BANSTREAM_TOKEN, or BANSTREAM_TOKEN_FILE / --token-file to a file holding it', EXIT.unauthenticated);
    let res: Response;
    try {
      res = await fetch(`${this.conn.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.conn.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      const inner = (error as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } }).cause;
      const cause = inner?.code ?? inner?.errors?.[0]?.code ?? inner?.message ?? (error as Error).message;
      throw new CliError(`cannot reach the control API at ${this.conn.url} (${cause}); set BANSTREAM_URL or --url`, EXIT.unavailable);
    }
    const text = await res.text();
    const parsed = text === '' ? undefined : safeJson(text);
    if (res.ok) return parsed as T;
    const problem = (parsed ?? {}) as Problem;
    const details = (problem.errors ?? []).map((e) => `${e.path}: ${e.message}`);
    const detail = details.length > 0 && problem.code !== undefined ? `${problem.code}` : (problem.detail ?? `HTTP ${res.status}`);
    throw new CliError(`${method} ${path.split('?')[0]}: ${res.status} ${detail}`, exitForStatus(res.status), details, problem.code);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { detail: text.slice(0, 200) };
  }
}
