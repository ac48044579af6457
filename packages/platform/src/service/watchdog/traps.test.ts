import { mkdtempSync, readdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TRAP_MAX_AGE_MS, TrapStore, type Trap } from './traps.js';

describe('TrapStore', () => {
  const dirs: string[] = [];
  const store = () => {
    const dir = mkdtempSync(join(tmpdir(), 'traps-'));
    dirs.push(dir);
    const s = new TrapStore(join(dir, 'state'));
    s.ensure();
    return s;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const trap = (offset: string, at = 1_000): Trap => ({ topic: 'p.events.v1', partition: 2, offset, heldMs: 5_100, budgetMs: 5_000, pid: 77, at });

  it('keeps traps across instances, marks them dead-lettered, and removes them', () => {
    const s = store();
    s.write(trap('10'));
    s.write(trap('11'));
    const again = new TrapStore(s.dir);
    expect(
      again
        .all(2_000)
        .map((t) => t.offset)
        .sort(),
    ).toEqual(['10', '11']);
    again.markDeadLettered(trap('10'), 3_000);
    expect(s.all(4_000).find((t) => t.offset === '10')?.deadLetteredAt).toBe(3_000);
    s.remove(trap('11'));
    expect(s.all(4_000).map((t) => t.offset)).toEqual(['10']);
    expect(readdirSync(s.dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('forgets traps past their age, and skips files that are not traps', () => {
    const s = store();
    s.write(trap('1', 0));
    s.write(trap('2', TRAP_MAX_AGE_MS));
    writeFileSync(join(s.dir, 'x~0~3.trap.json'), '{"topic":"x","partition":0,"offset":"3; rm -rf /"}');
    writeFileSync(join(s.dir, 'y~0~4.trap.json'), 'not json');
    writeFileSync(join(s.dir, 'z~0~5.trap.json'), JSON.stringify({ ...trap('5'), pad: 'x'.repeat(20_000) }));
    expect(s.all(TRAP_MAX_AGE_MS + 1).map((t) => t.offset)).toEqual(['2']);
    expect(readdirSync(s.dir)).not.toContain('p.events.v1~2~1.trap.json');
  });

  it('hands a stall note over once', () => {
    const s = store();
    s.writeNote({ pid: 42, kind: 'loop', at: 5, silentMs: 31_000 });
    expect(s.takeNote(42)).toEqual({ pid: 42, kind: 'loop', at: 5, silentMs: 31_000 });
    expect(s.takeNote(42)).toBeUndefined();
    expect(s.takeNote(43)).toBeUndefined();
  });

  it('refuses a directory other users can write to: a trap there would skip a record', () => {
    const s = store();
    chmodSync(s.dir, 0o777);
    expect(() => s.ensure()).toThrow(/writable by other users \(mode 777\)/);
  });
});
