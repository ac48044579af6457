/**
 * JSON array bodies parsed without making one string of a large body. V8 puts a
 * string of more than 128 KiB in its large-object space, and on this machine making
 * one costs about 1 ms, 40 times a 120 KiB string: most of the cost of a 500-event
 * batch. Bodies above CHUNKED_FROM_BYTES are split at their top-level commas into
 * chunks of about CHUNK_BYTES, each parsed as an array of its own.
 */

/** A UTF-8 body of this size makes a string of at most 128 KiB even when every character takes two bytes in V8. */
export const CHUNKED_FROM_BYTES = 64 * 1024;
const CHUNK_BYTES = 48 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * The elements of a top-level JSON array, parsed chunk by chunk; undefined when the
 * body is not one well-formed array (the caller then parses it whole, which names
 * the error). Structure is found on bytes: every byte of a multi-byte UTF-8
 * character is 0x80 or above, never a quote, bracket or comma; each chunk is then
 * checked in full by JSON.parse.
 */
export function parseJsonArrayInChunks(body: Buffer, chunkBytes = CHUNK_BYTES): unknown[] | undefined {
  const n = body.length;
  let i = skipSpace(body, 0);
  if (body[i] !== OPEN_ARRAY) return undefined;
  const out: unknown[] = [];
  let depth = 0;
  const first = ++i;
  let chunkStart = first;
  try {
    while (i < n) {
      const c = body[i]!;
      if (c === QUOTE) {
        i = stringEnd(body, i);
        if (i < 0) return undefined;
      } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        depth++;
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        if (depth > 0) {
          depth--;
        } else {
          if (c !== CLOSE_ARRAY || skipSpace(body, i + 1) !== n) return undefined;
          const lastIsEmpty = skipSpace(body, chunkStart) === i;
          // Nothing after a comma that ended a chunk is a trailing comma (`[1,]`), which JSON refuses.
          if (lastIsEmpty && chunkStart > first) return undefined;
          if (!lastIsEmpty) parseChunk(body, chunkStart, i, out);
          return out;
        }
      } else if (c === COMMA && depth === 0 && i - chunkStart >= chunkBytes) {
        parseChunk(body, chunkStart, i, out);
        chunkStart = i + 1;
      }
      i++;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

function parseChunk(body: Buffer, start: number, end: number, out: unknown[]): void {
  const elements = JSON.parse(`[${body.toString('utf8', start, end)}]`) as unknown[];
  for (const e of elements) out.push(e);
}

/** The index of the quote closing the string opened at `open`, or -1. */
function stringEnd(body: Buffer, open: number): number {
  for (let q = body.indexOf(QUOTE, open + 1); q >= 0; q = body.indexOf(QUOTE, q + 1)) {
    let backslashes = 0;
    while (body[q - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return q;
  }
  return -1;
}

function skipSpace(body: Buffer, from: number): number {
  let i = from;
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09)) i++;
  return i;
}
