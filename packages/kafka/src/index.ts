// The port to Kafka: the only package that uses kafkajs. Importing it loads nothing of
// kafkajs (kafkajs.ts); installKafkaPatches() is a service's explicit first step.
export { installKafkaPatches, type KafkaPatches } from './patches/install.js';
export { kafkajsLoaded, CompressionTypes, ConfigResourceTypes } from './kafkajs.js';
export type { Admin, Consumer, EachBatchPayload, Kafka, KafkaMessage, Message, PartitionMetadata, PartitionerFactory, Producer } from './kafkajs.js';
export { createKafka, parseBrokers, type KafkaClientOptions } from './client.js';
export { produceRequestEncodings } from './patches/produce-request-fix.js';
export { kafkajsGroupingFixed } from './patches/grouping-fix.js';
export { KeyPartitioner, sendUntilAnswered } from './key-partitioner.js';
export { topicSpecs, topicFullName, TOPIC_NAMES, type TopicName, type TopicSpec, type TopicLayoutOptions } from './topics.js';
export { ensureTopics, waitForTopicLeaders, type EnsureTopicsResult } from './topic-admin.js';
export { kafkaSecurityFromConfig, kafkaPrincipal, type KafkaSecurity, type KafkaSecurityConfig, type SaslMechanism } from './security.js';
export { accessRefusal, namedRefusal, ACCESS_REFUSALS, type AccessAttempt, type AccessRefusal } from './access.js';
export { kafkaEnv, kafkaSecurityEnv, kafkaFromConfig, ensureTopicsFromConfig, kafkaReachable, type KafkaConfig } from './from-config.js';
export { whenGivenUp } from './given-up.js';
export { unreadableBatch, MAX_DECOMPRESSED_BATCH_BYTES, type UnreadableBatch } from './patches/unreadable-batches.js';
export { CompactedFeed, endOffsets, type CompactedFeedOptions, type FeedRecord } from './compacted-feed.js';
export { MemberCommits, MEMBER_COMMIT_WAIT_MS } from './member-commits.js';
export { feedMetrics } from './metrics.js';
export { createTopicsEnv } from './cli/create-topics-env.js';
export {
  deadLetterRecord,
  deadLetterSink,
  reasonOfError,
  refusedRecord,
  DLQ_REASON,
  DLQ_MAX_KEY_BYTES,
  DLQ_MAX_VALUE_BYTES,
  type DeadLetterReason,
  type DeadLetterSink,
  type DeadLetterSinkOptions,
  type SourceRecord,
} from './dead-letter.js';
export { cappedPublication, inSends, kafkaRefusal, producerStateLost, KAFKA_MAX_SEND_BYTES, type CappedPublicationOptions, type KafkaRefusal, type SizedMessage } from './capped-sends.js';
export { RenewableProducer } from './renewable-producer.js';
