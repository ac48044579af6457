import { AvroCursor, MapObject, OFF_FAST_PATH, SCHEMA_NAMES, sameBytes, SINGLE_OBJECT_HEADER_LENGTH, type SchemaCatalog, type SchemaVersion } from '@banstream/schemas';
import type { CountedEvent, CountedEventsOptions } from './counted-event.js';

/**
 * The writer's RequestEvent fields this reader is written for, in order, with their
 * types (`?` marks `["null", T]`): v1, and v2 which adds `cost`. A writer schema with
 * any other list is left to avsc.
 */
const V1_FIELDS =
  'eventId:string timestamp:long ip:string country:?string region:?string asn:?long method:string host:string ' +
  'path:string route:?string status:int userId:?string apiKeyHash:?string headers:map<string> edgeId:string latencyMs:?double';
const FIELDS = `${V1_FIELDS} cost:int`;

/**
 * Reads one events record; undefined leaves it to avsc, which decides (and words the
 * error). With `tails`, tails[i] is where event i's headers start in the record (its
 * edgeId follows them), for readTail(): the evidence of a sampled event, read only then.
 */
export type CountedEventsReader = (record: Buffer, tails?: number[]) => CountedEvent[] | undefined;

/**
 * A hand-written reader of events records written with RequestEventBatch v2 or v1 (edges
 * not yet upgraded: their events cost 1, as avsc's projection reads them), giving what avsc's projection (countedEventsDecoder) gives. Two things make it
 * cheaper: no resolver or generic reads, and a field whose bytes repeat the previous
 * event's (the events of one record share a network: mostly one country, region, host,
 * method, often one path) gets the previous event's string instead of a new one;
 * making strings was half of avsc's decoding time here. Anything unexpected (another
 * writer, bytes that break the contract, a block written with its size, bytes left
 * over) gives undefined: the guarded avsc then decides, by the same rules (AvroCursor).
 */
export function countedEventsReader(catalog: SchemaCatalog, options: CountedEventsOptions): CountedEventsReader {
  const versions = catalog.versions(SCHEMA_NAMES.requestEventBatch);
  const withCost = fingerprintOf(versions.find((w) => fieldList(w) === FIELDS));
  const withoutCost = fingerprintOf(versions.find((w) => fieldList(w) === V1_FIELDS));
  if (withCost === undefined) return () => undefined;
  const texts = new RepeatedTexts();
  return (record, tails) => {
    if (tails !== undefined) tails.length = 0;
    if (record.length < SINGLE_OBJECT_HEADER_LENGTH || record[0] !== 0xc3 || record[1] !== 0x01) return undefined;
    const low = record.readUInt32LE(2);
    const high = record.readUInt32LE(6);
    let costed: boolean;
    if (low === withCost.low && high === withCost.high) costed = true;
    else if (withoutCost !== undefined && low === withoutCost.low && high === withoutCost.high) costed = false;
    else return undefined;
    const c = new AvroCursor(record, SINGLE_OBJECT_HEADER_LENGTH);
    texts.reset();
    const events: CountedEvent[] = [];
    try {
      for (let n = c.blockCount(); n > 0; n = c.blockCount()) {
        for (let i = 0; i < n; i++) events.push(readEvent(c, texts, options.headers, tails, costed));
      }
    } catch (error) {
      if (error === OFF_FAST_PATH) return undefined;
      throw error;
    }
    return c.pos === record.length ? events : undefined;
  };
}

/** A writer's fingerprint as the two little-endian words of a single-object header. */
function fingerprintOf(writer: SchemaVersion | undefined): { low: number; high: number } | undefined {
  return writer === undefined ? undefined : { low: Number(writer.fingerprint & 0xffffffffn), high: Number(writer.fingerprint >> 32n) };
}

function readEvent(c: AvroCursor, t: RepeatedTexts, withHeaders: boolean, tails: number[] | undefined, costed: boolean): CountedEvent {
  c.string(); // eventId
  const timestamp = c.long();
  const ip = t.ip.read(c);
  const country = c.union() ? t.country.read(c) : null;
  const region = c.union() ? t.region.read(c) : null;
  const asn = c.union() ? c.long() : null;
  const method = t.method.read(c);
  const host = t.host.read(c);
  const path = t.path.read(c);
  const route = c.union() ? t.route.read(c) : null;
  const status = c.int();
  const userId = c.union() ? t.userId.read(c) : null;
  const apiKeyHash = c.union() ? t.apiKeyHash.read(c) : null;
  const event: CountedEvent = { timestamp, ip, country, region, asn, method, host, path, route, status, userId, apiKeyHash };
  if (tails !== undefined) tails.push(c.pos);
  if (withHeaders) event.headers = readMap(c);
  else skipMap(c);
  c.string(); // edgeId
  if (c.union()) c.double(); // latencyMs
  // Any int, as avsc reads it: the bounds are checkEvent's (attributesFromEvent), which words the refusal.
  // A v1 record has none: its default, as avsc's projection reads it.
  event.cost = costed ? c.int() : 1;
  return event;
}

/**
 * The user-agent header and the edgeId of the event whose headers start at `at` in a
 * record this reader accepted (tails). Case-sensitive on the name: the edge writes names
 * in lower case.
 */
export function readTail(record: Buffer, at: number): { userAgent: string | undefined; edge: string } {
  const c = new AvroCursor(record, at);
  let userAgent: string | undefined;
  for (let n = c.blockCount(); n > 0; n = c.blockCount()) {
    for (let i = 0; i < n; i++) {
      const name = c.string();
      const isAgent = c.pos - name === USER_AGENT.length && sameBytes(record, name, c.pos, USER_AGENT, 0, USER_AGENT.length);
      const value = c.string();
      if (isAgent) userAgent = utf8(c, value);
    }
  }
  const edge = c.string();
  return { userAgent, edge: utf8(c, edge) };
}

const USER_AGENT = Buffer.from('user-agent');

/** As the guarded avsc reads a map of strings: into a MapObject, a later key replacing an earlier one. */
function readMap(c: AvroCursor): Record<string, string> {
  const out = new MapObject() as Record<string, string>;
  for (let n = c.blockCount(); n > 0; n = c.blockCount()) {
    for (let i = 0; i < n; i++) {
      const key = utf8(c, c.string());
      out[key] = utf8(c, c.string());
    }
  }
  return out;
}

/** Every key and value walked, as readMap does: a skipping reader must refuse what a reading one refuses. */
function skipMap(c: AvroCursor): void {
  for (let n = c.blockCount(); n > 0; n = c.blockCount()) {
    for (let i = 0; i < 2 * n; i++) c.string();
  }
}

interface Utf8Slicing {
  utf8Slice(start: number, end: number): string;
}

/** The string from `from` to the cursor, decoded as avsc decodes it. */
function utf8(c: AvroCursor, from: number): string {
  return (c.buf as unknown as Utf8Slicing).utf8Slice(from, c.pos);
}

/** One field's last string and where its bytes lie in the current record. */
class RepeatedText {
  private from = 0;
  private to = -1;
  private text = '';

  read(c: AvroCursor): string {
    const from = c.string();
    const to = c.pos;
    if (sameBytes(c.buf, from, to, c.buf, this.from, this.to)) return this.text;
    this.from = from;
    this.to = to;
    return (this.text = utf8(c, from));
  }

  reset(): void {
    this.to = -1;
  }
}

class RepeatedTexts {
  readonly ip = new RepeatedText();
  readonly country = new RepeatedText();
  readonly region = new RepeatedText();
  readonly method = new RepeatedText();
  readonly host = new RepeatedText();
  readonly path = new RepeatedText();
  readonly route = new RepeatedText();
  readonly userId = new RepeatedText();
  readonly apiKeyHash = new RepeatedText();

  /** A new record: positions in the last one mean nothing. */
  reset(): void {
    for (const text of this.all) text.reset();
  }

  private readonly all = [this.ip, this.country, this.region, this.method, this.host, this.path, this.route, this.userId, this.apiKeyHash];
}

/** The writer's RequestEvent fields as FIELDS spells them. */
export function fieldList(writer: SchemaVersion): string {
  const batch = writer.schema as { fields: { name: string; type: unknown }[] };
  const events = batch.fields.length === 1 && batch.fields[0]!.name === 'events' ? batch.fields[0]!.type : undefined;
  const items = (events as { type?: string; items?: { fields?: { name: string; type: unknown }[] } } | undefined)?.items;
  return (items?.fields ?? []).map((f) => `${f.name}:${typeName(f.type)}`).join(' ');
}

function typeName(type: unknown): string {
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.length === 2 && type[0] === 'null' ? `?${typeName(type[1])}` : 'union';
  const t = type as { type?: unknown; values?: unknown };
  if (t.type === 'map') return `map<${typeName(t.values)}>`;
  return typeof t.type === 'string' ? t.type : 'complex';
}
