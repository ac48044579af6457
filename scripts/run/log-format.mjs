// Turns a service's pino JSON line into one short, labelled, readable line.
const LEVELS = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
const COLORS = { ingest: 36, aggregator: 35, enforcer: 33, stack: 32, run: 32 };
const OMIT = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname']);

export function formatLine(label, line, { color = process.stdout.isTTY } = {}) {
  const tag = color ? `\x1b[${COLORS[label] ?? 37}m${label.padEnd(10)}\x1b[0m` : label.padEnd(10);
  let record;
  try {
    record = JSON.parse(line);
  } catch {
    return `${tag} | ${line}`;
  }
  if (typeof record !== 'object' || record === null || !('msg' in record)) return `${tag} | ${line}`;
  const time = typeof record.time === 'string' ? record.time.slice(11, 23) : '';
  const extra = Object.entries(record).filter(([k]) => !OMIT.has(k));
  const fields = extra.length ? ' ' + extra.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ') : '';
  return `${tag} | ${time} ${LEVELS[record.level] ?? record.level} ${record.msg}${fields}`;
}
