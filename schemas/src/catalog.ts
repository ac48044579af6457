import { BanstreamError } from '@banstream/core';
import type { Resolver, Type } from 'avsc';
import { toAvroType } from './avro-type.js';
import { fingerprintToHex, parsingCanonicalForm, crc64Avro } from './fingerprint.js';
import { decodeSingleObjectBody, encodeSingleObject, readFingerprint } from './single-object.js';
import type { SchemaName, SchemaTypes } from './types.js';

/**
 * The schema catalog: every version of every record, keyed by name and by
 * fingerprint. Pure: it is built from already-read sources (see catalog-files.ts for
 * the folder loader), so tests can build catalogs from inline schemas.
 */

/** One schema file as read: catalog name (folder), version (vN), parsed JSON. */
export interface SchemaSource {
  readonly name: string;
  readonly version: number;
  readonly schema: unknown;
  /** Where it came from, for error messages (a file path). */
  readonly origin?: string;
}

export interface SchemaVersion {
  readonly name: string;
  readonly version: number;
  /** CRC-64-AVRO of the Parsing Canonical Form, unsigned. */
  readonly fingerprint: bigint;
  readonly fingerprintHex: string;
  readonly canonicalForm: string;
  readonly schema: unknown;
  readonly type: Type;
}

export interface Codec<T> {
  readonly name: string;
  /** The version `encode` writes: the newest. */
  readonly version: number;
  readonly fingerprint: bigint;
  /** Validates, then encodes as single-object with the newest schema. */
  encode(value: T): Buffer;
  /** Decodes any known version of this record into the newest shape (defaults filled in). */
  decode(buf: Uint8Array): T;
}

export interface SchemaCatalog {
  /** Catalog names, sorted. */
  readonly names: readonly string[];
  /** Every version of `name`, oldest first. */
  versions(name: string): readonly SchemaVersion[];
  latest(name: string): SchemaVersion;
  byFingerprint(fingerprint: bigint): SchemaVersion | undefined;
  /** The writer schema of an encoded record (bad magic, truncated, unknown → typed errors). */
  identify(buf: Uint8Array): SchemaVersion;
  codec<N extends SchemaName>(name: N): Codec<SchemaTypes[N]>;
  codec<T>(name: string): Codec<T>;
  /**
   * Reads any version of `name` into the shape of `readerSchema`, a projection of the
   * record (same names, some fields left out) that Avro schema resolution maps every
   * writer onto: left-out fields are skipped, never turned into values. For hot paths
   * that need a few fields of large records. Decode only: nothing is written with it.
   */
  projection<T>(name: string, readerSchema: unknown): Decoder<T>;
}

export interface Decoder<T> {
  decode(buf: Uint8Array): T;
}

const NAME_PATTERN = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

export function buildSchemaCatalog(sources: readonly SchemaSource[]): SchemaCatalog {
  const byName = new Map<string, SchemaVersion[]>();
  const byFp = new Map<bigint, SchemaVersion>();
  for (const source of [...sources].sort((a, b) => a.version - b.version)) {
    const entry = toVersion(source);
    const clash = byFp.get(entry.fingerprint);
    if (clash) {
      throw invalid(
        clash.name === entry.name
          ? `${entry.name} v${entry.version} has the same canonical form as v${clash.version}: doc or default changes belong in the existing version`
          : `${entry.name} v${entry.version} has the same fingerprint as ${clash.name} v${clash.version}`,
      );
    }
    byFp.set(entry.fingerprint, entry);
    byName.set(entry.name, [...(byName.get(entry.name) ?? []), entry]);
  }
  for (const [name, list] of byName) {
    list.forEach((v, i) => {
      // Versions are 1..N without gaps: a gap means a lost file, and lost writers cannot be read.
      if (v.version !== i + 1) throw invalid(`${name}: expected v${i + 1}, found v${v.version}`);
    });
    Object.freeze(list);
  }

  const versions = (name: string): readonly SchemaVersion[] => {
    const list = byName.get(name);
    if (!list) throw invalid(`unknown schema name '${name}'`);
    return list;
  };
  const latest = (name: string): SchemaVersion => versions(name).at(-1)!;
  const identify = (buf: Uint8Array, expected?: string): SchemaVersion => {
    const fingerprint = readFingerprint(buf);
    const writer = byFp.get(fingerprint);
    if (!writer) {
      const hex = fingerprintToHex(fingerprint);
      throw new BanstreamError('SCHEMA_UNKNOWN_FINGERPRINT', `no schema with fingerprint ${hex}`, {
        details: { fingerprint: hex, ...(expected === undefined ? {} : { schema: expected }) },
      });
    }
    return writer;
  };
  const codecs = new Map<string, Codec<unknown>>();

  return {
    names: [...byName.keys()].sort(),
    versions,
    latest,
    byFingerprint: (fingerprint) => byFp.get(fingerprint),
    identify: (buf) => identify(buf),
    codec<T>(name: string): Codec<T> {
      let codec = codecs.get(name);
      if (!codec) {
        codec = createCodec(latest(name), identify);
        codecs.set(name, codec);
      }
      return codec as Codec<T>;
    },
    projection<T>(name: string, readerSchema: unknown): Decoder<T> {
      latest(name); // an unknown name throws here rather than at the first decode
      const canonicalForm = parsingCanonicalForm(readerSchema);
      const fingerprint = crc64Avro(canonicalForm);
      const reader: SchemaVersion = Object.freeze({
        name,
        version: 0,
        fingerprint,
        fingerprintHex: fingerprintToHex(fingerprint),
        canonicalForm,
        schema: readerSchema,
        type: toAvroType(readerSchema, `projection of ${name}`),
      });
      const codec = createCodec(reader, identify);
      return { decode: (buf) => codec.decode(buf) as T };
    },
  };
}

function createCodec(reader: SchemaVersion, identify: (buf: Uint8Array, expected: string) => SchemaVersion): Codec<unknown> {
  const { name, type, fingerprint } = reader;
  const resolvers = new Map<bigint, Resolver>();
  const resolverFor = (writer: SchemaVersion): Resolver => {
    let resolver = resolvers.get(writer.fingerprint);
    if (!resolver) {
      try {
        resolver = type.createResolver(writer.type);
      } catch (cause) {
        throw new BanstreamError('SCHEMA_INCOMPATIBLE', `${name} v${reader.version} cannot read v${writer.version}`, {
          cause,
          details: { schema: name, fingerprint: writer.fingerprintHex },
        });
      }
      resolvers.set(writer.fingerprint, resolver);
    }
    return resolver;
  };
  return {
    name,
    version: reader.version,
    fingerprint,
    encode: (value) => encodeSingleObject(type, fingerprint, value, name),
    decode(buf) {
      const writer = identify(buf, name);
      if (writer.name !== name) {
        // A known schema, but of another record: a producer wrote to the wrong topic.
        throw new BanstreamError('SCHEMA_INCOMPATIBLE', `expected ${name}, got ${writer.name} v${writer.version}`, {
          details: { schema: name, actual: writer.name, fingerprint: writer.fingerprintHex },
        });
      }
      const resolver = writer === reader ? undefined : resolverFor(writer);
      return decodeSingleObjectBody(type, buf, writer.fingerprint, name, resolver, writer.type);
    },
  };
}

function toVersion(source: SchemaSource): SchemaVersion {
  const where = source.origin ?? `${source.name} v${source.version}`;
  if (!NAME_PATTERN.test(source.name)) throw invalid(`schema name '${source.name}' is not kebab-case (${where})`);
  if (!Number.isInteger(source.version) || source.version < 1) throw invalid(`bad version ${source.version} (${where})`);
  const type = toAvroType(source.schema, where);
  if (type.typeName !== 'record') throw invalid(`${where} must be a record schema, got ${type.typeName}`);
  const canonicalForm = parsingCanonicalForm(source.schema);
  const fingerprint = crc64Avro(canonicalForm);
  return Object.freeze({
    name: source.name,
    version: source.version,
    fingerprint,
    fingerprintHex: fingerprintToHex(fingerprint),
    canonicalForm,
    schema: source.schema,
    type,
  });
}

function invalid(message: string): BanstreamError {
  return new BanstreamError('CONFIG_INVALID', `schema catalog: ${message}`);
}
