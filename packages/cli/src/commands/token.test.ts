import { describe, expect, it } from 'vitest';
import { run } from '../cli.js';
import type { Io } from '../command.js';
import { EXIT } from '../exit-codes.js';

function io() {
  const out = { stdout: '', stderr: '' };
  const stream = (name: 'stdout' | 'stderr') => ({ write: (text: string) => ((out[name] += text), true) }) as unknown as NodeJS.WriteStream;
  const value: Io = { stdout: stream('stdout'), stderr: stream('stderr'), now: () => 0, interrupted: new Promise(() => undefined), env: {} };
  return { io: value, out };
}

describe('banstream token new', () => {
  it('--json prints one JSON document and exits 0 (a printed line is never taken for an exit code)', async () => {
    const { io: terminal, out } = io();
    expect(await run(['token', 'new', '--name', 'alice', '--role', 'operator', '--json'], terminal)).toBe(EXIT.ok);
    const doc = JSON.parse(out.stdout) as { name: string; role: string; token: string; entry: string };
    expect(doc).toMatchObject({ name: 'alice', role: 'operator' });
    expect(doc.entry.startsWith('alice:operator:')).toBe(true);
    expect(out.stderr).toBe('');
  });
});
