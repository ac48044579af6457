import type { Type } from 'avsc';
import { AvroCursor, OFF_FAST_PATH } from './avro-cursor.js';

/**
 * Which field a refused body broke, for the error message: `events[3].headers`.
 * Runs only after a decode was refused (never on the hot path): it walks the writer
 * type again, skipping each field with the guarded readers (decode-guard.ts) and
 * descending into the one that throws. Map entries are named by position, never by
 * key (keys are the sender's text). Empty when the refusal is not a broken rule.
 */
export function locateProblem(writer: Type, buf: Buffer, from: number): string {
  const cursor = new AvroCursor(buf, from);
  const path: string[] = [];
  try {
    descend(writer as unknown as Node, cursor, path);
  } catch (error) {
    if (error !== OFF_FAST_PATH) return '';
  }
  return path.join('').replace(/^\./, '');
}

interface Node {
  typeName: string;
  fields?: { name: string; type: Node }[];
  itemsType?: Node;
  valuesType?: Node;
  types?: Node[];
  _skip(cursor: AvroCursor): void;
}

/** Skips `node`'s value; when that throws, leaves in `path` where, and throws. */
function descend(node: Node, cursor: AvroCursor, path: string[]): void {
  if (node.fields) {
    for (const field of node.fields) within(field.type, cursor, path, `.${field.name}`);
  } else if (node.itemsType || node.valuesType) {
    let index = 0;
    for (let n = cursor.block(); n !== 0; n = cursor.block()) {
      const end = cursor.blockEnd;
      for (; n > 0; n--, index++) {
        if (node.valuesType) {
          const at = cursor.pos;
          try {
            cursor.string();
          } catch (error) {
            cursor.pos = at;
            path.push(`[#${index}]`);
            throw error;
          }
        }
        within((node.itemsType ?? node.valuesType)!, cursor, path, `[${node.valuesType ? '#' : ''}${index}]`);
      }
      cursor.endBlock(end);
    }
  } else if (node.types) {
    const branch = node.types[cursor.branch(node.types.length)]!;
    descend(branch, cursor, path);
  } else {
    node._skip(cursor);
  }
}

/** Skips one child; if that throws, walks it again from where it started to find where. */
function within(node: Node, cursor: AvroCursor, path: string[], step: string): void {
  const at = cursor.pos;
  try {
    node._skip(cursor);
  } catch (error) {
    if (error !== OFF_FAST_PATH) throw error;
    path.push(step);
    cursor.pos = at;
    descend(node, cursor, path);
    throw error; // the second walk should throw too; if it did not, this is where
  }
}
