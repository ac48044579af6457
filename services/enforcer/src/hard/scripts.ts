import { fileURLToPath } from 'node:url';
import { defineLuaScripts, readLuaScripts, type Cluster, type LuaScript, type RedisClient } from '@banstream/platform';

/** services/enforcer/lua, from src/hard or dist/hard alike. */
export const HARD_LIMIT_LUA_DIR = new URL('../../lua/', import.meta.url);

const COMMAND = 'hardLimit';

let loaded: LuaScript | undefined;

/** The batch script (lua/hardLimit-n.lua), read from disk once per process. */
export function hardLimitScript(): LuaScript {
  loaded ??= readLuaScripts(fileURLToPath(HARD_LIMIT_LUA_DIR)).find((s) => s.command === COMMAND);
  if (loaded === undefined) throw new Error(`${COMMAND}-n.lua is missing from ${fileURLToPath(HARD_LIMIT_LUA_DIR)}`);
  return loaded;
}

/** Flat, three values per check: allowed (1, 0, or -1 with an error text next), remaining, retry after ms. */
export type ScriptReply = readonly (number | string)[];

/** Runs one batch: a key per check, and four arguments per check (algorithm tag, its two numbers, the cost). */
export type RunLimitScript = (keys: readonly string[], args: readonly (string | number)[]) => Promise<ScriptReply>;

type ScriptCommand = (...args: (string | number)[]) => Promise<ScriptReply>;

/**
 * Registers the script on the client (EVALSHA, EVAL after a restart emptied the
 * script cache) and returns how to run one batch: ARGV[1] is 0, so the script
 * reads its Redis server's clock.
 */
export function defineHardLimitScript(redis: RedisClient): RunLimitScript {
  defineLuaScripts(redis, [hardLimitScript()]);
  const command = (redis as unknown as Record<string, ScriptCommand>)[COMMAND]!;
  return (keys, args) => command.call(redis, keys.length, ...keys, 0, ...args);
}

/**
 * SCRIPT LOAD on every node of a Cluster the client knows when it is called (every
 * master; replicas as far as the client has found them), so no first check on a
 * master pays for sending the script. Not needed for correctness: a node without it
 * (a promoted replica, a restarted node) gets EVAL on its connection's first call,
 * and EVAL again after NOSCRIPT.
 */
export async function loadOnEveryNode(redis: RedisClient): Promise<void> {
  if (!redis.isCluster) return;
  const nodes = (redis as Cluster).nodes('all');
  if (nodes.length === 0) throw new Error('no Redis Cluster node connected');
  await Promise.all(nodes.map((node) => node.script('LOAD', hardLimitScript().source)));
}
