import { createRequire } from 'node:module';
import { KafkaJSProtocolError } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { accessRefusal } from '../access.js';
import { BROKER_MODULE, CLUSTER_MODULE, keepKafkajsCoordinatorRefusals } from './coordinator-refusals-fix.js';
import { freshKafkajsModule } from '../../../../test/support/kafkajs-module.js';

const require = createRequire(import.meta.url);
type Find = (this: unknown, args: { groupId: string }) => Promise<unknown>;
const groupRefused = () =>
  new KafkaJSProtocolError({ type: 'GROUP_AUTHORIZATION_FAILED', code: 30, retriable: false, message: 'Not authorized to access group: Group authorization failed' } as unknown as Error);

/**
 * kafkajs's own coordinator search over two brokers that both refuse the group: a
 * broker built on kafkajs's prototype whose request fails as a refusing broker's does,
 * and a cluster whose pool and retrier behave as kafkajs's (errors of each broker dropped, bail).
 */
function searchOn(cluster: { prototype: { findGroupCoordinatorMetadata: Find } }, broker: { prototype: object }): Promise<unknown> {
  const refusing = Object.assign(Object.create(broker.prototype) as object, {
    lookupRequest: () => {
      throw groupRefused();
    },
  });
  const self = {
    logger: { debug: () => undefined },
    brokerPool: {
      async withBroker(callback: (b: { nodeId: number; broker: object }) => Promise<unknown>) {
        for (const nodeId of [1, 2]) {
          try {
            return await callback({ nodeId, broker: refusing });
          } catch {}
        }
        return null;
      },
    },
    retrier: (fn: (bail: (e: Error) => never) => Promise<unknown>) =>
      fn((e) => {
        throw e;
      }),
  };
  return cluster.prototype.findGroupCoordinatorMetadata.call(self, { groupId: 'someone-elses-group' }).catch((e: unknown) => e);
}

describe('keepKafkajsCoordinatorRefusals', () => {
  it('hands a broker\'s group refusal to kafkajs\'s "Failed to find group coordinator" as its cause; kafkajs alone drops it', async () => {
    const unpatched = await searchOn(freshKafkajsModule(CLUSTER_MODULE), freshKafkajsModule(BROKER_MODULE));
    expect((unpatched as Error).name).toBe('KafkaJSGroupCoordinatorNotFound');
    expect(accessRefusal(unpatched)).toBeUndefined();

    expect(keepKafkajsCoordinatorRefusals()).toBe(true);
    const patched = await searchOn(require(CLUSTER_MODULE), require(BROKER_MODULE));
    expect((patched as Error).message).toBe('Failed to find group coordinator');
    expect(accessRefusal(patched)).toBe('GROUP_AUTHORIZATION_FAILED');
    expect(keepKafkajsCoordinatorRefusals()).toBe(true);
  });
});
