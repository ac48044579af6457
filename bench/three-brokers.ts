import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controllerCount, stackSettings } from '../scripts/stack/index.mjs';
import { freePort, freePortBlock } from '../test/support/processes.js';

/**
 * Stack settings for a benchmark's own three-broker cluster: a temporary folder, free port
 * blocks and 512 MB heaps, unless BANSTREAM_KAFKA_PORT and the like in the environment place it.
 * Three dedicated controllers beside the brokers, as Kafka advises for production (a
 * broker's death is then a session timeout, never a quorum election as well);
 * BANSTREAM_KAFKA_CONTROLLERS=0 measures nodes that are both.
 */
export async function threeBrokerSettings(name: string): Promise<{ dir: string; settings: ReturnType<typeof stackSettings> }> {
  const dir = mkdtempSync(join(tmpdir(), `banstream-bench-${name}-`));
  const controllers = controllerCount(process.env.BANSTREAM_KAFKA_CONTROLLERS ?? '3');
  const settings = stackSettings({
    BANSTREAM_KAFKA_PORT: String(await freePortBlock(3)),
    BANSTREAM_KAFKA_CONTROLLER_PORT: String(await freePortBlock(controllers || 3)),
    BANSTREAM_REDIS_PORT: String(await freePort()),
    BANSTREAM_KAFKA_HEAP: '512m',
    ...process.env,
    BANSTREAM_KAFKA_CONTROLLERS: String(controllers),
    BANSTREAM_STACK_DIR: dir,
    BANSTREAM_KAFKA_BROKERS: '3',
  });
  return { dir, settings };
}
