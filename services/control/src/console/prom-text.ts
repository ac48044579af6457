/** One sample of the Prometheus text format: `name{a="x",b="y"} 12.5`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * The samples of the wanted metric names in a /metrics text. Lines of other metrics
 * are skipped unparsed, so a large exposition costs one scan; at most `maxSamples`
 * samples are kept (an enforcer's labels are bounded, but the text is someone else's).
 */
export function parseSamples(text: string, wanted: ReadonlySet<string>, maxSamples = 10_000): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.length === 0 || line.charCodeAt(0) === 35 /* # */) continue;
    const space = line.search(/[{\s]/);
    if (space < 0 || !wanted.has(line.slice(0, space))) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const value = Number(m[3]);
    if (!Number.isFinite(value)) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1]!, labels, value });
    if (out.length >= maxSamples) break;
  }
  return out;
}
