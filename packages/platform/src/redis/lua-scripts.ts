import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';

/**
 * Lua scripts live in .lua files named `<command>-<numberOfKeys>.lua` (as in BullMQ)
 * and open with a header comment listing KEYS, ARGV and the return value. They are
 * read once and registered with ioredis defineCommand, which sends EVALSHA and falls
 * back to EVAL after a Redis restart has emptied the script cache.
 */
export interface LuaScript {
  command: string;
  numberOfKeys: number;
  source: string;
}

const FILE_NAME = /^([A-Za-z][A-Za-z0-9]*)-(\d+)\.lua$/;

export function readLuaScripts(dir: string): LuaScript[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.lua'))
    .map((file) => {
      const match = FILE_NAME.exec(file);
      if (!match) throw new Error(`Lua script file name must be <command>-<numberOfKeys>.lua: ${join(dir, file)}`);
      return { command: match[1]!, numberOfKeys: Number(match[2]), source: readFileSync(join(dir, file), 'utf8') };
    });
}

export function defineLuaScripts(redis: Redis, scripts: readonly LuaScript[]): void {
  for (const s of scripts) redis.defineCommand(s.command, { numberOfKeys: s.numberOfKeys, lua: s.source });
}

/** The scripts that ship with the platform package (src/redis/lua, copied beside dist). */
export const PLATFORM_LUA_DIR = new URL('../../lua/', import.meta.url);
