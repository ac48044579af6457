import { createRequire } from 'node:module';
import type * as Kafkajs from 'kafkajs';

/**
 * The one module that loads kafkajs, and only when a client is first made: importing
 * @banstream/kafka loads nothing, so installKafkaPatches() (patches/install.ts) can
 * still reach the modules kafkajs binds at load time (patches/grouping-fix.ts). Every
 * other file of the port takes kafkajs's types only (`import type`).
 */
const require = createRequire(import.meta.url);
let loaded: typeof Kafkajs | undefined;

export function kafkajs(): typeof Kafkajs {
  return (loaded ??= require('kafkajs') as typeof Kafkajs);
}

/** Whether kafkajs is in this process's module cache, loaded by the port or by anyone else. */
export function kafkajsLoaded(): boolean {
  return require.cache[require.resolve('kafkajs')] !== undefined;
}

// kafkajs's objects under the port's names: the client's own objects pass through
// unwrapped (hot paths), only where they are imported from is the port's.
export type {
  Admin,
  Consumer,
  EachBatchPayload,
  Kafka,
  KafkaMessage,
  Message,
  PartitionMetadata,
  Producer,
  ICustomPartitioner as PartitionerFactory,
} from 'kafkajs';

/** kafkajs's codes for a send's `compression`, without loading kafkajs (a unit test checks they agree). */
export const CompressionTypes = { None: 0, GZIP: 1, Snappy: 2, LZ4: 3, ZSTD: 4 } as const satisfies Record<keyof typeof Kafkajs.CompressionTypes, Kafkajs.CompressionTypes>;

/** kafkajs's resource types for describeConfigs and alterConfigs, likewise. */
export const ConfigResourceTypes = { UNKNOWN: 0, TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8 } as const satisfies Record<keyof typeof Kafkajs.ConfigResourceTypes, Kafkajs.ConfigResourceTypes>;
