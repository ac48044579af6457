import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';

/**
 * Lua scripts live in .lua files named `<command>-<numberOfKeys>.lua` (as in BullMQ)
 * and open with a header comment listing KEYS, ARGV and the return value. They are
 * read once and registered with ioredis defineCommand, which sends EVALSHA and falls
 * back to EVAL after a Redis restart has emptied the script cache. A script that
 * takes a batch of keys is named `<command>-n.lua`: its caller passes the key count
 * as the first argument.
 */
export interface LuaScript {
  command: string;
  /** Undefined for `-n` scripts: the caller passes the key count first. */
  numberOfKeys: number | undefined;
  source: string;
}

const FILE_NAME = /^([A-Za-z][A-Za-z0-9]*)-(\d+|n)\.lua$/;

export function readLuaScripts(dir: string): LuaScript[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.lua'))
    .map((file) => {
      const match = FILE_NAME.exec(file);
      if (!match) throw new Error(`Lua script file name must be <command>-<numberOfKeys>.lua or <command>-n.lua: ${join(dir, file)}`);
      const numberOfKeys = match[2] === 'n' ? undefined : Number(match[2]);
      return { command: match[1]!, numberOfKeys, source: readFileSync(join(dir, file), 'utf8') };
    });
}

export function defineLuaScripts(redis: Redis, scripts: readonly LuaScript[]): void {
  for (const s of scripts) {
    redis.defineCommand(s.command, s.numberOfKeys === undefined ? { lua: s.source } : { numberOfKeys: s.numberOfKeys, lua: s.source });
  }
}
