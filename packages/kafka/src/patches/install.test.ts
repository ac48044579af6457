import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
// The whole port, as a service imports it: importing must leave kafkajs alone.
import { createKafka, installKafkaPatches, kafkajsGroupingFixed, kafkajsLoaded } from '../index.js';
import { captureLogger } from '../../../../test/support/infra.js';
import { GROUPING_MODULE, groupMessagesPerPartition } from './grouping-fix.js';
import { ENCODER_MODULE } from './encoder-fix.js';
import { PRODUCE_V3_MODULE } from './produce-request-fix.js';
import { BROKER_MODULE, CLUSTER_MODULE } from './coordinator-refusals-fix.js';
import { CONSUMER_GROUP_MODULE } from './member-rejoin-fix.js';
import { freshKafkajsModule } from '../../../../test/support/kafkajs-module.js';

const require = createRequire(import.meta.url);
const REQUEST_QUEUE_MODULE = 'kafkajs/src/network/requestQueue/index.js';
const CONNECTION_MODULE = 'kafkajs/src/network/connection.js';
const kafkajsModulesLoaded = () => Object.keys(require.cache).filter((path) => path.includes('/node_modules/kafkajs/'));
const ALL_PATCHED = {
  grouping: true,
  idleTimer: true,
  encoder: true,
  produceRequest: true,
  coordinatorRefusals: true,
  memberRejoin: true,
  coordinatorMove: true,
  heartbeatHold: true,
  fetcherRebalance: true,
  leaderMoveFetch: true,
  sendRetries: true,
  unreadableBatches: true,
  requestTimeout: true,
};
const prototypeOf = (module: unknown) => (module as { prototype: Record<string, unknown> }).prototype;

describe('installKafkaPatches', () => {
  // One test, in order: a test file runs in a process of its own, so kafkajs starts unloaded.
  it('is not done by importing the port (kafkajs not even loaded), and patches all thirteen when called before the first client', () => {
    expect(kafkajsLoaded()).toBe(false);
    expect(kafkajsModulesLoaded()).toEqual([]);
    expect(kafkajsGroupingFixed()).toBe(false);

    expect(installKafkaPatches()).toEqual(ALL_PATCHED);
    expect(kafkajsLoaded()).toBe(false); // the patches load kafkajs's parts they replace, not kafkajs
    const log = captureLogger();
    createKafka({ brokers: ['127.0.0.1:9'], clientId: 'unit', logger: log.logger }).consumer({ groupId: 'unit' });
    expect(kafkajsLoaded()).toBe(true);
    // Its readers are guarded: no word of unguarded batches (unguarded-readers.test.ts shows the word).
    expect(log.lines().filter((l) => String(l.msg).startsWith('kafkajs reads batches unguarded'))).toEqual([]);

    expect(kafkajsGroupingFixed()).toBe(true);
    expect(require(GROUPING_MODULE)).toBe(groupMessagesPerPartition);
    const queue = prototypeOf(require(REQUEST_QUEUE_MODULE));
    expect(queue.scheduleCheckPendingRequests).not.toBe(prototypeOf(freshKafkajsModule(REQUEST_QUEUE_MODULE)).scheduleCheckPendingRequests);
    const encoder = prototypeOf(require(ENCODER_MODULE));
    expect(encoder.writeUVarInt).not.toBe(prototypeOf(freshKafkajsModule(ENCODER_MODULE)).writeUVarInt);
    expect((require(PRODUCE_V3_MODULE) as () => unknown).name).toBe('produceRequest');
    expect(prototypeOf(require(BROKER_MODULE)).findGroupCoordinator).not.toBe(prototypeOf(freshKafkajsModule(BROKER_MODULE)).findGroupCoordinator);
    expect(prototypeOf(require(CLUSTER_MODULE)).findGroupCoordinatorMetadata).not.toBe(prototypeOf(freshKafkajsModule(CLUSTER_MODULE)).findGroupCoordinatorMetadata);
    expect(prototypeOf(require(CONSUMER_GROUP_MODULE)).joinAndSync).not.toBe(prototypeOf(freshKafkajsModule(CONSUMER_GROUP_MODULE)).joinAndSync);
    // The heartbeat patch wraps the coordinator-move patch's heartbeat, not kafkajs's.
    expect((prototypeOf(require(CONSUMER_GROUP_MODULE)).heartbeat as () => unknown).name).toBe('heartbeatWithinWait');
    expect(prototypeOf(require(CONNECTION_MODULE)).send).not.toBe(prototypeOf(freshKafkajsModule(CONNECTION_MODULE)).send);
    expect(installKafkaPatches()).toEqual(ALL_PATCHED);
  });
});
