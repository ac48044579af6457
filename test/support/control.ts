import { createHash, randomBytes } from 'node:crypto';
import { SCHEMA_NAMES, type AuditRecord } from '@banstream/schemas';
import { waitUntil } from './infra.js';
import { catalog } from './aggregator.js';
import { describeProcess, exitWithin, freePort, spawnService, type RunningProcess } from './processes.js';

export type Role = 'viewer' | 'operator' | 'admin';

/** One token per role (and their hash entries), made for one test file. */
export function testTokens(): Record<Role, string> & { entries: string } {
  const make = () => `bst_${randomBytes(24).toString('base64url')}`;
  const tokens = { viewer: make(), operator: make(), admin: make() };
  const entries = Object.entries(tokens)
    .map(([role, t]) => `${role}-user:${role}:${createHash('sha256').update(t).digest('hex')}`)
    .join(',');
  return { ...tokens, entries };
}

export interface Control {
  proc: RunningProcess;
  url: string;
  /** A request to the admin API with a role's token (or none); the body parsed as JSON when there is one. */
  call(method: string, path: string, options?: { token?: string; body?: unknown }): Promise<{ status: number; body: any; headers: Headers }>;
  stop(): Promise<void>;
}

/** Starts the built control service as its own process, waits for /readyz. */
export async function startControl(env: Record<string, string>): Promise<Control> {
  const port = await freePort();
  const proc = spawnService('control', { LOG_LEVEL: 'info', ...env, HTTP_PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(
    async () => (await fetch(`${url}/readyz`)).status === 200,
    () => `control on ${port} to be ready (${describeProcess(proc)})`,
    60_000,
    100,
  );
  return {
    proc,
    url,
    async call(method, path, options = {}) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: {
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      });
      const text = await res.text();
      return { status: res.status, body: text === '' ? undefined : JSON.parse(text), headers: res.headers };
    },
    async stop() {
      proc.child.kill('SIGTERM');
      await exitWithin(proc, 15_000).catch(() => proc.child.kill('SIGKILL'));
    },
  };
}

export const decodeAudit = (b: Buffer): AuditRecord => catalog.codec(SCHEMA_NAMES.auditRecord).decode(b);
