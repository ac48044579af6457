import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A record a process stalled on: its watchdog wrote this before killing the process,
 * so whoever meets the record next (the replacement, another worker given the
 * partition, the same process after a restart) dead-letters or skips it instead of
 * handling it and stalling again.
 */
export interface Trap {
  topic: string;
  partition: number;
  offset: string;
  /** How long the record had been in hand, and the budget it passed. */
  heldMs: number;
  budgetMs: number;
  /** The process that stalled, and when. */
  pid: number;
  at: number;
  /** Set once a process dead-lettered the record: later meetings skip it quietly. */
  deadLetteredAt?: number;
}

/** What a watchdog leaves for the supervisor about the process it killed. */
export interface StallNote {
  pid: number;
  kind: 'record' | 'loop';
  at: number;
  /** The record's trap, for a record stall. */
  trap?: Trap;
  silentMs?: number;
}

/**
 * Traps older than this are forgotten: by then the record has left every replay
 * horizon and the events topic's retention (a day, or twice the longest window).
 */
export const TRAP_MAX_AGE_MS = 14 * 24 * 3_600_000;
/** A trap file is a few hundred bytes; anything larger is not ours. */
const MAX_FILE_BYTES = 16 * 1024;
const TRAP_SUFFIX = '.trap.json';

/**
 * Traps and stall notes as small files in one directory, shared by the processes of a
 * host (a supervisor's workers, a restarted service). Synchronous on purpose: the
 * watchdog thread writes while the main thread is stuck, and a worker reads them
 * between two records. Files are written whole (a temporary file, then a rename).
 */
export class TrapStore {
  constructor(readonly dir: string) {}

  /**
   * Creates the directory (this user's only) or checks the one there: a trap makes
   * its record skipped, so nobody else may be able to write one.
   */
  ensure(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const stat = statSync(this.dir);
    if (!stat.isDirectory()) throw new Error('not a directory');
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) throw new Error(`owned by uid ${stat.uid}, not by this user (uid ${uid})`);
    if ((stat.mode & 0o022) !== 0) throw new Error(`writable by other users (mode ${(stat.mode & 0o777).toString(8)})`);
  }

  write(trap: Trap): void {
    this.put(trapFile(trap), trap);
  }

  remove(trap: Pick<Trap, 'topic' | 'partition' | 'offset'>): void {
    rmSync(join(this.dir, trapFile(trap)), { force: true });
  }

  markDeadLettered(trap: Trap, nowMs: number): Trap {
    const marked = { ...trap, deadLetteredAt: nowMs };
    this.put(trapFile(trap), marked);
    return marked;
  }

  /** Every trap younger than TRAP_MAX_AGE_MS; older ones are deleted. Unreadable files are skipped. */
  all(nowMs: number): Trap[] {
    const out: Trap[] = [];
    for (const name of this.names()) {
      if (!name.endsWith(TRAP_SUFFIX)) continue;
      const trap = this.read(name, isTrap);
      if (!trap) continue;
      if (nowMs - trap.at > TRAP_MAX_AGE_MS) rmSync(join(this.dir, name), { force: true });
      else out.push(trap);
    }
    return out;
  }

  writeNote(note: StallNote): void {
    this.put(noteFile(note.pid), note);
  }

  /** The note left about process `pid`, removed as it is read. */
  takeNote(pid: number): StallNote | undefined {
    const name = noteFile(pid);
    const note = this.read(name, isNote);
    rmSync(join(this.dir, name), { force: true });
    return note;
  }

  private put(name: string, value: unknown): void {
    const temporary = join(this.dir, `.${name}.${process.pid}.tmp`);
    writeFileSync(temporary, JSON.stringify(value));
    renameSync(temporary, join(this.dir, name));
  }

  private names(): string[] {
    try {
      return readdirSync(this.dir);
    } catch {
      return [];
    }
  }

  private read<T>(name: string, valid: (value: unknown) => value is T): T | undefined {
    try {
      const path = join(this.dir, name);
      if (statSync(path).size > MAX_FILE_BYTES) return undefined;
      const value: unknown = JSON.parse(readFileSync(path, 'utf8'));
      return valid(value) ? value : undefined;
    } catch {
      return undefined;
    }
  }
}

/** Topic names are letters, digits, `.`, `_` and `-`: safe in a file name as they are. */
function trapFile(trap: Pick<Trap, 'topic' | 'partition' | 'offset'>): string {
  return `${trap.topic}~${trap.partition}~${trap.offset}${TRAP_SUFFIX}`;
}

function noteFile(pid: number): string {
  return `stalled-${pid}.note.json`;
}

function isTrap(v: unknown): v is Trap {
  const t = v as Partial<Trap> | null;
  return (
    typeof t === 'object' &&
    t !== null &&
    typeof t.topic === 'string' &&
    Number.isInteger(t.partition) &&
    typeof t.offset === 'string' &&
    /^[0-9]{1,19}$/.test(t.offset) &&
    typeof t.at === 'number' &&
    typeof t.pid === 'number' &&
    typeof t.heldMs === 'number' &&
    typeof t.budgetMs === 'number'
  );
}

function isNote(v: unknown): v is StallNote {
  const n = v as Partial<StallNote> | null;
  return typeof n === 'object' && n !== null && typeof n.pid === 'number' && (n.kind === 'record' || n.kind === 'loop') && typeof n.at === 'number';
}
