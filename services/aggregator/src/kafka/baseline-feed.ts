import { CompactedFeed, type Admin, type Kafka } from '@banstream/kafka';
import type { Logger, Registry } from '@banstream/platform';
import { SCHEMA_NAMES, type SchemaCatalog } from '@banstream/schemas';
import type { DetectorSnapshot } from '@banstream/core';
import { snapshotOf } from '@banstream/engine';

export interface BaselineFeedOptions {
  kafka: Kafka;
  admin: Admin;
  topic: string;
  groupId: string;
  logger: Logger;
  /** Where its skipped records and restarts are counted (feed `baselines`). */
  registry?: Registry;
  catalog: SchemaCatalog;
}

/**
 * The compacted baselines topic, read from the beginning and tailed: the newest
 * record of every subject, kept as bytes and decoded only when this instance comes
 * to own the subject. A partition's new owner calls `catchUp` before it replays, so
 * what the previous owner wrote last is what it restores.
 */
export class BaselineFeed {
  private readonly latest = new Map<string, Buffer>();
  private readonly feed: CompactedFeed;
  private readonly codec;

  constructor(private readonly options: BaselineFeedOptions) {
    this.codec = options.catalog.codec(SCHEMA_NAMES.geoBaseline);
    this.feed = new CompactedFeed({
      kafka: options.kafka,
      admin: options.admin,
      topic: options.topic,
      groupId: options.groupId,
      logger: options.logger,
      feed: 'baselines',
      registry: options.registry,
      onRecord: (r) => {
        if (r.value === null) this.latest.delete(r.key);
        else this.latest.set(r.key, r.value);
      },
    });
  }

  get size(): number {
    return this.latest.size;
  }

  start(): Promise<void> {
    return this.feed.start();
  }

  catchUp(): Promise<void> {
    return this.feed.catchUp();
  }

  stop(): Promise<void> {
    return this.feed.stop();
  }

  /** The subject's stored state; undefined when there is none or it cannot be read (learning starts over). */
  restore(subject: string): DetectorSnapshot | undefined {
    const bytes = this.latest.get(subject);
    if (!bytes) return undefined;
    try {
      return snapshotOf(this.codec.decode(bytes));
    } catch (error) {
      this.options.logger.warn({ err: error, subject, topic: this.options.topic }, 'stored baseline unreadable: learning starts over');
      return undefined;
    }
  }
}
