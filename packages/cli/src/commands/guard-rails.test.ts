import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../cli.js';
import type { Io } from '../command.js';
import { EXIT } from '../exit-codes.js';

/** An Io whose streams are strings; the API is never reached (no URL answers on port 9). */
function io() {
  const out = { stdout: '', stderr: '' };
  const stream = (name: 'stdout' | 'stderr') => ({ write: (text: string) => ((out[name] += text), true) }) as unknown as NodeJS.WriteStream;
  const value: Io = {
    stdout: stream('stdout'),
    stderr: stream('stderr'),
    now: () => 0,
    interrupted: new Promise(() => undefined),
    env: { BANSTREAM_URL: 'http://127.0.0.1:9', BANSTREAM_TOKEN: 'bst_test' },
  };
  return { io: value, out };
}

const policy = 'policies:\n  - id: login-rate\n    key: [ip]\n    threshold: { count: 30, interval: 1m }\n    action: { type: ban, banDuration: 10m }\n';

describe('guard rails in the CLI', () => {
  it('refuses a policy file whose allowlist covers the whole internet, naming each entry and the limit, before any request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'banstream-cli-'));
    const file = join(dir, 'policies.yaml');
    writeFileSync(file, `${policy}allowlist:\n  - entry: 10.0.0.0/8\n  - entry: 0.0.0.0/0\n  - entry: "::ffff:0:0/96"\n  - entry: "::/0"\n`);
    for (const command of [
      ['policies', 'apply', '-f', file],
      ['policies', 'apply', '--dry-run', '-f', file],
    ]) {
      const { io: terminal, out } = io();
      expect(await run(command, terminal)).toBe(EXIT.invalid);
      expect(out.stderr.split('\n')).toEqual([
        `banstream: ${file}: allowlist entries wider than the control API allows without force`,
        '  allowlist[1].entry: 0.0.0.0/0 is wider than the /8 an IPv4 allowlist entry may cover without force (CONTROL_MIN_PREFIX_V4); if you mean it, add it with banstream allow add 0.0.0.0/0 --force',
        '  allowlist[2].entry: 0.0.0.0/0 is wider than the /8 an IPv4 allowlist entry may cover without force (CONTROL_MIN_PREFIX_V4); if you mean it, add it with banstream allow add ::ffff:0:0/96 --force',
        '  allowlist[3].entry: ::/0 is wider than the /32 an IPv6 allowlist entry may cover without force (CONTROL_MIN_PREFIX_V6); if you mean it, add it with banstream allow add ::/0 --force',
        '',
      ]);
    }
  });

  it('lets a file with narrow entries through to the API, with the note that apply leaves the allowlist alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'banstream-cli-'));
    const file = join(dir, 'policies.yaml');
    writeFileSync(file, `${policy}allowlist:\n  - entry: 10.0.0.0/8\n`);
    const { io: terminal, out } = io();
    // Unavailable: the file passed, and the request went to the (absent) API.
    expect(await run(['policies', 'apply', '--dry-run', '-f', file], terminal)).toBe(EXIT.unavailable);
    expect(out.stderr).toContain('also lists 1 allowlist entry; apply does not change the allowlist');
  });

  it('documents --force in the help of bans add and allow add', async () => {
    for (const command of [
      ['bans', 'add', '--help'],
      ['allow', 'add', '--help'],
    ]) {
      const { io: terminal, out } = io();
      expect(await run(command, terminal)).toBe(EXIT.ok);
      expect(out.stdout).toContain('[--force]');
      expect(out.stdout).toContain('--force places it on a network wider than the server allows without it (default /8 IPv4, /32 IPv6)');
      expect(out.stdout).toContain('the audit records it as forced');
    }
  });
});
