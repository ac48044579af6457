export { createEdgePublisher, type EdgePublisher } from './publisher.js';
export { DEFAULTS as EDGE_PUBLISHER_DEFAULTS, type EdgePublisherOptions } from './options.js';
export { DROP_REASONS, EventBuffer, type BufferStats, type DropReason, type Pending } from './engine/event-buffer.js';
export { estimateEventBytes, EVENT_OVERHEAD_BYTES } from './engine/event-size.js';
export { groupByKey, encodeGroups, type KeyedGroup, type EncodedRecord } from './engine/records.js';
export { createKafkaSink, type KafkaSinkOptions } from './kafka-sink.js';
export { isPermanentFailure, type KeyedRecord, type RecordSink } from './sink.js';
export { avroLong, concatBatch, isEncoded, type BufferedEvent, type EncodedEvent } from './engine/encoded.js';
export { edgeMetrics } from './metrics.js';
