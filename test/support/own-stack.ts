import { freePort } from './processes.js';

/**
 * The environment of a stack of the test's own (scripts/stack: its folder `dir`, free
 * ports, a small heap), so that stopping it harms no other test.
 */
export async function ownStackEnv(dir: string): Promise<Record<string, string>> {
  return {
    BANSTREAM_STACK_DIR: dir,
    BANSTREAM_KAFKA_PORT: String(await freePort()),
    BANSTREAM_KAFKA_CONTROLLER_PORT: String(await freePort()),
    BANSTREAM_REDIS_PORT: String(await freePort()),
    BANSTREAM_KAFKA_HEAP: '512m',
  };
}
