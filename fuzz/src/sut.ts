import { formatIpv4 } from '@banstream/core';
import { loadSchemaCatalog, SCHEMA_NAMES, SINGLE_OBJECT_MAGIC, type Codec, type RequestEventBatch, type SchemaCatalog, type SchemaVersion } from '@banstream/schemas';
import { countedEventsDecoder, type CountedEvent } from '../../packages/engine/dist/counted-event.js';
import { countedEventsReader, type CountedEventsReader } from '../../packages/engine/dist/counted-event-reader.js';
import type { GeoLookup } from '../../services/ingest/dist/geo/enrich.js';
import { EVENT_RULES } from '../../services/ingest/dist/events/event-rules.js';
import type { Preparation } from '../../services/ingest/dist/events/prepare.js';
import { EventValidator } from '../../services/ingest/dist/events/validate.js';
import { parseSchema, type Node, type WriterVersion } from './reference.js';

/**
 * The readers under test, built as the services build them (dist/, what runs), and
 * the reference's view of the same catalog.
 */
export interface Sut {
  catalog: SchemaCatalog;
  /** Every writer version, by fingerprint, for the reference. */
  writers: Map<bigint, WriterVersion>;
  fingerprints: bigint[];
  /** The newest version of each record, as reference nodes. */
  latest: Map<string, { version: SchemaVersion; node: Node }>;
  eventNode: Node;
  batchCodec: Codec<RequestEventBatch>;
  preparation: Preparation;
  /** The header the gateway's publisher writes before concatenated event bodies. */
  batchHeader: Buffer;
  aggregator: { headers: boolean; read: CountedEventsReader; decode: (b: Buffer) => { events: CountedEvent[] } }[];
}

/** Some networks known (one with region and ASN), as a geography database would answer. */
function fakeGeo(): GeoLookup {
  const lookup = (ip: string) => (ip.startsWith('203.') ? { country: 'AU', region: null, asn: null } : ip.startsWith('2001:db8:') ? { country: 'FR', region: 'FR-IDF', asn: 3215 } : undefined);
  return { lookup, lookupIpv4: (address) => lookup(formatIpv4(address)) };
}

export function buildSut(): Sut {
  const catalog = loadSchemaCatalog();
  const writers = new Map<bigint, WriterVersion>();
  const latest = new Map<string, { version: SchemaVersion; node: Node }>();
  for (const name of catalog.names) {
    for (const v of catalog.versions(name)) writers.set(v.fingerprint, { name, fingerprint: v.fingerprint, node: parseSchema(v.schema) });
    const newest = catalog.latest(name);
    latest.set(name, { version: newest, node: writers.get(newest.fingerprint)!.node });
  }
  const batchCodec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
  const eventVersion = catalog.latest(SCHEMA_NAMES.requestEvent);
  const batchHeader = Buffer.alloc(10);
  batchHeader.set(SINGLE_OBJECT_MAGIC);
  batchHeader.writeBigUInt64LE(batchCodec.fingerprint, 2);
  return {
    catalog,
    writers,
    fingerprints: [...writers.keys()],
    latest,
    eventNode: parseSchema(eventVersion.schema),
    batchCodec,
    batchHeader,
    preparation: { validator: new EventValidator(eventVersion.schema, EVENT_RULES), batchCodec, eventType: eventVersion.type, geo: fakeGeo(), time: FUZZ_TIME },
    aggregator: [true, false].map((headers) => ({ headers, read: countedEventsReader(catalog, { headers }), decode: countedEventsDecoder(catalog, { headers }).decode })),
  };
}

/**
 * The gateway's clock in the harness: fixed, so a seed replays the same run, and after
 * every realistic time the generators make (1.7e12 to 1.8e12), so the time bound refuses
 * only the extreme ones; both gateway paths must agree either way.
 */
export const FUZZ_TIME = { nowMs: 1_800_000_000_000, maxFutureMs: 5_000 };

/** The fields of a RequestEvent the aggregator reads (CountedEvent), headers aside. */
export const COUNTED_FIELDS = ['timestamp', 'ip', 'country', 'region', 'asn', 'method', 'host', 'path', 'route', 'status', 'userId', 'apiKeyHash', 'cost'] as const;
