import { toAvroType } from './avro-type.js';
import type { SchemaVersion } from './catalog.js';

/**
 * Schema resolution as the reader will do it at run time: avsc's createResolver
 * refuses exactly the writer/reader pairs it cannot decode (a reader field missing
 * from the writer without a default, a changed type, an unknown enum symbol without
 * an enum default, a rename without alias…), so asking it is the check.
 */

export type Compatibility = { readonly compatible: true } | { readonly compatible: false; readonly reason: string };

/** Can data written with `writer` be read with `reader`? Each is schema JSON or an avsc Type. */
export function checkCompatibility(writer: unknown, reader: unknown): Compatibility {
  const writerType = toAvroType(writer, 'writer schema');
  const readerType = toAvroType(reader, 'reader schema');
  try {
    readerType.createResolver(writerType);
    return { compatible: true };
  } catch (err) {
    return { compatible: false, reason: err instanceof Error ? err.message : String(err) };
  }
}

export interface CompatibilityProblem {
  readonly name: string;
  readonly writerVersion: number;
  readonly readerVersion: number;
  /** backward: a newer reader fails on older data; forward: an older reader fails on newer data. */
  readonly direction: 'backward' | 'forward';
  readonly reason: string;
}

type VersionLike = Pick<SchemaVersion, 'name' | 'version' | 'type'>;

/**
 * Checks every ordered pair of versions of one record. Checking all pairs, not only
 * pairs with the newest, keeps compatibility transitive: during a rolling deploy any
 * two releases may meet on a topic.
 */
export function findCompatibilityProblems(versions: readonly VersionLike[]): CompatibilityProblem[] {
  const problems: CompatibilityProblem[] = [];
  for (const writer of versions) {
    for (const reader of versions) {
      if (writer === reader) continue;
      const result = checkCompatibility(writer.type, reader.type);
      if (!result.compatible) {
        problems.push({
          name: reader.name,
          writerVersion: writer.version,
          readerVersion: reader.version,
          direction: writer.version < reader.version ? 'backward' : 'forward',
          reason: result.reason,
        });
      }
    }
  }
  return problems;
}
