import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RedisClient } from './client.js';

/**
 * Lua scripts live in .lua files named `<command>-<numberOfKeys>.lua` (as in BullMQ)
 * and open with a header comment listing KEYS, ARGV and the return value. They are
 * read once and registered with ioredis defineCommand, which sends EVAL on each new
 * connection, EVALSHA after, and EVAL again on NOSCRIPT (a restart emptied the script
 * cache). In a Cluster that holds per node: every node's connection loads the script
 * itself, a promoted replica included. A script that
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

export function defineLuaScripts(redis: RedisClient, scripts: readonly LuaScript[]): void {
  for (const s of scripts) {
    redis.defineCommand(s.command, s.numberOfKeys === undefined ? { lua: s.source } : { numberOfKeys: s.numberOfKeys, lua: s.source });
  }
}
