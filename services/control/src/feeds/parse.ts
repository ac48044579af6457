import { networkSubject, tryParseCidr, type Cidr } from '@banstream/core';

/** How a feed's text is read: one address or network a line, or one column of a CSV. */
export type FeedFormat = { kind: 'netset' } | { kind: 'csv'; column: string; header: boolean };

/** One entry: its canonical subject (`ip:…` for a host, `cidr:…` for a network) and its network. */
export interface FeedEntry {
  subject: string;
  network: Cidr;
}

export interface ParsedFeed {
  /** Unique entries, in the order first seen. */
  entries: FeedEntry[];
  /** Lines that held something other than comments and blanks. */
  dataLines: number;
  /** Data lines whose value is not an address or network. */
  invalid: number;
  /** Line numbers (1-based) of the first few invalid lines, for the error (their text is not echoed: the source is not ours). */
  invalidAt: number[];
  /** Entries listed more than once. */
  duplicates: number;
}

export interface ParseLimits {
  maxLines: number;
  maxEntries: number;
}

/** Why a text is refused whole: too many lines or entries, or a CSV column that is not there. */
export class FeedParseError extends Error {}

const INVALID_SHOWN = 5;

/**
 * Reads a feed's text into unique canonical entries. Netset lines (FireHOL netsets,
 * Spamhaus DROP `1.10.16.0/20 ; SBL256894`) lose everything from `#` or `;` and keep
 * their first word; CSV rows give one column (1-based index, or a header name with a
 * header row), `#` lines being comments. Stops, refusing the text, past the limits:
 * a hostile source gets no further than they allow.
 */
export function parseFeed(text: string, format: FeedFormat, limits: ParseLimits): ParsedFeed {
  const out: ParsedFeed = { entries: [], dataLines: 0, invalid: 0, invalidAt: [], duplicates: 0 };
  const seen = new Set<string>();
  let columnIndex = format.kind === 'csv' && !format.header ? csvIndex(format.column) : undefined;
  let lineNo = 0;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    lineNo++;
    if (lineNo > limits.maxLines) throw new FeedParseError(`more than ${limits.maxLines} lines (CONTROL_FEED_MAX_LINES)`);
    const line = text.slice(start, end);
    start = end + 1;
    let value: string | undefined;
    if (format.kind === 'netset') {
      const cut = line.search(/[#;]/);
      value = (cut < 0 ? line : line.slice(0, cut)).trim().split(/\s+/, 1)[0];
    } else {
      const trimmed = line.trim();
      if (trimmed === '' || trimmed.startsWith('#')) continue;
      const cells = csvCells(trimmed);
      if (columnIndex === undefined) {
        columnIndex = headerIndex(cells, format.column);
        continue;
      }
      value = cells[columnIndex]?.trim() ?? '';
      if (value === '') {
        // A short row is malformed; an empty cell in a present column is too.
        value = '\0';
      }
    }
    if (value === undefined || value === '') continue;
    out.dataLines++;
    const network = value.length <= 64 ? tryParseCidr(value) : undefined;
    if (network === undefined) {
      out.invalid++;
      if (out.invalidAt.length < INVALID_SHOWN) out.invalidAt.push(lineNo);
      continue;
    }
    const subject = networkSubject(network);
    if (seen.has(subject)) {
      out.duplicates++;
      continue;
    }
    seen.add(subject);
    if (seen.size > limits.maxEntries) throw new FeedParseError(`more than ${limits.maxEntries} entries (the feed's maxEntries)`);
    out.entries.push({ subject, network });
  }
  if (format.kind === 'csv' && format.header && columnIndex === undefined) throw new FeedParseError('no header row: the file is empty');
  return out;
}

function csvIndex(column: string): number {
  if (!/^[1-9][0-9]{0,3}$/.test(column)) throw new FeedParseError(`column ${JSON.stringify(column)} must be a 1-based index without a header row`);
  return Number(column) - 1;
}

function headerIndex(header: string[], column: string): number {
  const byName = header.findIndex((h) => h.trim().toLowerCase() === column.toLowerCase());
  if (byName >= 0) return byName;
  if (/^[1-9][0-9]{0,3}$/.test(column)) return Number(column) - 1;
  throw new FeedParseError(`no column ${JSON.stringify(column)} in the header row (${header.length} columns)`);
}

/** The cells of one CSV row: commas, double quotes around a cell, `""` for a quote inside one. */
export function csvCells(row: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < row.length; i++) {
    const c = row[i]!;
    if (quoted) {
      if (c === '"' && row[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      cells.push(cell);
      cell = '';
    } else cell += c;
  }
  cells.push(cell);
  return cells;
}
