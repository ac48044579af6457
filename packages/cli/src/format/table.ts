/** A column: its header and how to show a row's value. */
export interface Column<T> {
  header: string;
  value: (row: T) => string;
  /** Right-aligned (numbers). */
  right?: boolean;
  /** Longest width; longer values end with `…`. */
  max?: number;
}

/** Rows as an aligned text table with a header line; `(none)` when empty. */
export function table<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((r) => columns.map((c) => clip(c.value(r), c.max)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (columns[i]!.right ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n');
}

function clip(text: string, max: number | undefined): string {
  const one = text.replace(/\s+/g, ' ');
  return max !== undefined && one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** `in 59m`, `3h ago`: a time relative to now, for tables. */
export function relative(atMs: number, nowMs: number): string {
  const d = atMs - nowMs;
  const abs = Math.abs(d);
  const text =
    abs < 60_000 ? `${Math.round(abs / 1000)}s` : abs < 3_600_000 ? `${Math.round(abs / 60_000)}m` : abs < 172_800_000 ? `${Math.round(abs / 3_600_000)}h` : `${Math.round(abs / 86_400_000)}d`;
  return d >= 0 ? `in ${text}` : `${text} ago`;
}

/** ISO time to the second, without milliseconds. */
export function isoSeconds(atMs: number): string {
  return new Date(atMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
