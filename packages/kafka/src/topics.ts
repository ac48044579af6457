/**
 * The topics of DESIGN.md with their configurations. Pure: `topicSpecs` says what
 * should exist; `ensureTopics` (topic-admin.ts) makes it so.
 */
/**
 * `aggregator-subjects` is the aggregator's internal repartition topic (subjects not
 * local to an events partition); `aggregator-baselines` its compacted changelog of
 * what geographic alerting learned per country and region.
 */
export const TOPIC_NAMES = ['events', 'bans', 'counts', 'policies', 'allowlist', 'alerts', 'audit', 'dlq', 'aggregator-subjects', 'aggregator-baselines', 'feeds', 'ban-history'] as const;
export type TopicName = (typeof TOPIC_NAMES)[number];

export interface TopicSpec {
  name: string;
  numPartitions: number;
  replicationFactor: number;
  configs: Record<string, string>;
}

export interface TopicLayoutOptions {
  prefix: string;
  partitions: number;
  replicationFactor: number;
  /** Longest asynchronous window any policy uses; events keep at least twice that. */
  longestWindowMs?: number;
  /** How long the ban history keeps every ban, lift and expiry (TOPIC_BAN_HISTORY_RETENTION_DAYS); 180 days by default. */
  banHistoryRetentionMs?: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export function topicFullName(prefix: string, topic: TopicName): string {
  return `${prefix}${topic}.v1`;
}

export function topicSpecs(options: TopicLayoutOptions): TopicSpec[] {
  const compact = { 'cleanup.policy': 'compact', 'min.compaction.lag.ms': '0', 'segment.ms': String(HOUR) };
  // Tombstones (unbans, deleted policies) must outlive the slowest enforcer rebuild.
  const compactWithTombstones = { ...compact, 'delete.retention.ms': String(DAY) };
  const deleteAfter = (ms: number) => ({ 'cleanup.policy': 'delete', 'retention.ms': String(ms) });
  // The aggregator weighs event times against the record's (packages/engine event-time.ts): the broker's clock, not a producer's.
  const appendTime = { 'message.timestamp.type': 'LogAppendTime' };
  const eventsRetention = Math.max(DAY, 2 * (options.longestWindowMs ?? 0));
  const minIsr = String(Math.min(2, options.replicationFactor));

  const configs: Record<TopicName, Record<string, string>> = {
    // Gzip batches stay as written: their records may be far larger decompressed, which the
    // aggregator is built for (tests plant them); the broker need not rewrite every batch.
    events: { ...deleteAfter(eventsRetention), 'compression.type': 'producer', ...appendTime },
    bans: compactWithTombstones,
    counts: compact,
    policies: compactWithTombstones,
    allowlist: compactWithTombstones,
    alerts: deleteAfter(7 * DAY),
    audit: deleteAfter(365 * DAY),
    dlq: deleteAfter(14 * DAY),
    // Replayed like the events, to rebuild the counts of repartitioned subjects.
    'aggregator-subjects': { ...deleteAfter(eventsRetention), ...appendTime },
    // Weeks of learning live here and nowhere else: compacted, never deleted by age.
    'aggregator-baselines': compact,
    // The control plane's blocklist feeds (their bans are on the bans topic).
    feeds: compactWithTombstones,
    // Every ban, lift and expiry, keyed by subject: what the compacted bans topic forgets.
    'ban-history': deleteAfter(options.banHistoryRetentionMs ?? 180 * DAY),
  };
  return TOPIC_NAMES.map((topic) => ({
    name: topicFullName(options.prefix, topic),
    // Control topics are small; one partition keeps their order total and cheap to rebuild.
    numPartitions: topic === 'events' || topic === 'counts' || topic === 'bans' || topic === 'ban-history' || topic.startsWith('aggregator-') ? options.partitions : 1,
    replicationFactor: options.replicationFactor,
    // kafkajs reads no Snappy, LZ4 or ZSTD batch: banstream's readers skip one as a dead
    // letter (patches/unreadable-batches.ts). Kept uncompressed, the broker decompresses it
    // on write, so the compacted state loses nothing. banstream's own producers do not compress.
    configs: { 'compression.type': 'uncompressed', ...configs[topic], 'min.insync.replicas': minIsr },
  }));
}
