import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLuaScripts } from './lua-scripts.js';

describe('readLuaScripts', () => {
  it('takes the command and key count from the file name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lua-'));
    writeFileSync(join(dir, 'counterIncr-1.lua'), "return redis.call('INCRBY', KEYS[1], ARGV[1])");
    const counter = readLuaScripts(dir).find((s) => s.command === 'counterIncr');
    expect(counter?.numberOfKeys).toBe(1);
    expect(counter?.source).toContain('KEYS[1]');
  });

  it('rejects a file whose name does not say how many keys it takes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lua-'));
    writeFileSync(join(dir, 'slidingWindow.lua'), 'return 1');
    expect(() => readLuaScripts(dir)).toThrow(/must be <command>-<numberOfKeys>\.lua or <command>-n\.lua: .*slidingWindow\.lua/);
  });

  it('reads a batch script (`-n`) as taking its key count from the caller', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lua-'));
    writeFileSync(join(dir, 'limitBatch-n.lua'), 'return #KEYS');
    expect(readLuaScripts(dir)).toEqual([{ command: 'limitBatch', numberOfKeys: undefined, source: 'return #KEYS' }]);
  });
});
