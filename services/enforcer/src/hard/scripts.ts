import { fileURLToPath } from 'node:url';
import { defineLuaScripts, readLuaScripts, type LuaScript, type Redis } from '@banstream/platform';
import type { HardAlgorithm } from '@banstream/core';

/** services/enforcer/lua, from src/hard or dist/hard alike. */
export const HARD_LIMIT_LUA_DIR = new URL('../../lua/', import.meta.url);

const COMMAND: Record<HardAlgorithm, string> = {
  'sliding-window': 'slidingWindowLimit',
  'sliding-log': 'slidingLogLimit',
  'token-bucket': 'tokenBucketLimit',
};

let loaded: readonly LuaScript[] | undefined;

/** The three batch scripts, read from disk once per process. */
export function hardLimitScripts(): readonly LuaScript[] {
  loaded ??= readLuaScripts(fileURLToPath(HARD_LIMIT_LUA_DIR)).filter((s) => Object.values(COMMAND).includes(s.command));
  if (loaded.length !== 3) throw new Error(`expected the three hard-limit scripts in ${fileURLToPath(HARD_LIMIT_LUA_DIR)}`);
  return loaded;
}

export function hardLimitScript(algorithm: HardAlgorithm): LuaScript {
  return hardLimitScripts().find((s) => s.command === COMMAND[algorithm])!;
}

/** Flat, three values per check: allowed (1, 0, or -1 with an error text next), remaining, retry after ms. */
export type ScriptReply = readonly (number | string)[];

export type RunLimitScript = (algorithm: HardAlgorithm, keys: readonly string[], args: readonly number[]) => Promise<ScriptReply>;

type ScriptCommand = (...args: (string | number)[]) => Promise<ScriptReply>;

/**
 * Registers the scripts on the client (EVALSHA, EVAL after a restart emptied the
 * script cache) and returns how to run one batch: ARGV[1] is 0, so each script
 * reads its Redis server's clock.
 */
export function defineHardLimitScripts(redis: Redis): RunLimitScript {
  defineLuaScripts(redis, hardLimitScripts());
  const commands = redis as unknown as Record<string, ScriptCommand>;
  return (algorithm, keys, args) => commands[COMMAND[algorithm]]!.call(redis, keys.length, ...keys, 0, ...args);
}
