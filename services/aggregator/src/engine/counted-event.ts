import { SCHEMA_NAMES, type Decoder, type RequestEvent, type SchemaCatalog } from '@banstream/schemas';

/** Fields of a RequestEvent that counting never reads: skipped by the decoder, not decoded. */
const SKIPPED = new Set(['eventId', 'edgeId', 'latencyMs']);

/** What the aggregator reads of an event. */
export type CountedEvent = Omit<RequestEvent, 'eventId' | 'edgeId' | 'latencyMs'>;

interface RecordSchema {
  fields: { name: string; type: unknown }[];
}

/**
 * A decoder of events records into CountedEvents: the batch schema with the skipped
 * fields removed from its RequestEvent, which Avro resolution reads any writer
 * version into. Skipping a string costs a length read; decoding it, an allocation.
 */
export function countedEventsDecoder(catalog: SchemaCatalog): Decoder<{ events: CountedEvent[] }> {
  const batch = structuredClone(catalog.latest(SCHEMA_NAMES.requestEventBatch).schema) as RecordSchema;
  const events = batch.fields.find((f) => f.name === 'events')!.type as { items: RecordSchema };
  events.items.fields = events.items.fields.filter((f) => !SKIPPED.has(f.name));
  return catalog.projection(SCHEMA_NAMES.requestEventBatch, batch);
}
