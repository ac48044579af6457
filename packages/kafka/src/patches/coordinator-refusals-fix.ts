import { createRequire } from 'node:module';
import { accessRefusal } from '../access.js';

/**
 * kafkajs 2.2.4 looks for a group's coordinator on each broker in turn and drops every
 * error (BrokerPool.withBroker): a consumer refused its group (GROUP_AUTHORIZATION_FAILED)
 * crashes with "Failed to find group coordinator" and nothing else. This keeps the
 * refusal a broker answered and hands it to that error as its `cause`, so the port
 * (access.ts) can name it. Applied once per process, by installKafkaPatches().
 */
type FindArgs = { groupId: string };
type Find = (this: unknown, args: FindArgs) => Promise<unknown>;

export const BROKER_MODULE = 'kafkajs/src/broker/index.js';
export const CLUSTER_MODULE = 'kafkajs/src/cluster/index.js';

const require = createRequire(import.meta.url);
let applied = false;

/** Patches Broker.findGroupCoordinator and Cluster.findGroupCoordinatorMetadata; false (and kafkajs left alone) when their shape differs. */
export function keepKafkajsCoordinatorRefusals(): boolean {
  if (applied) return true;
  const broker = (require(BROKER_MODULE) as { prototype: { findGroupCoordinator?: Find } }).prototype;
  const cluster = (require(CLUSTER_MODULE) as { prototype: { findGroupCoordinatorMetadata?: Find } }).prototype;
  const find = broker.findGroupCoordinator;
  const findMetadata = cluster.findGroupCoordinatorMetadata;
  if (typeof find !== 'function' || typeof findMetadata !== 'function') return false;
  // Per group id: the refusal one broker answered, until the search across brokers ends.
  const refusals = new Map<string, unknown>();
  broker.findGroupCoordinator = async function (this: unknown, args: FindArgs) {
    try {
      return await find.call(this, args);
    } catch (error) {
      if (accessRefusal(error)) refusals.set(args.groupId, error);
      throw error;
    }
  };
  cluster.findGroupCoordinatorMetadata = async function (this: unknown, args: FindArgs) {
    try {
      return await findMetadata.call(this, args);
    } catch (error) {
      const refusal = refusals.get(args.groupId);
      const e = error as { name?: unknown; cause?: unknown };
      if (refusal !== undefined && e.name === 'KafkaJSGroupCoordinatorNotFound' && e.cause === undefined) e.cause = refusal;
      throw error;
    } finally {
      refusals.delete(args.groupId);
    }
  };
  applied = true;
  return true;
}
