import { normaliseHost, normaliseMethod, normalisePath, parseIp, tryParseIp } from '@banstream/core';
import type { RequestEvent } from '@banstream/schemas';
import { eventKey } from './event-key.js';
import { EVENT_RULES, FORBIDDEN_HEADERS, HEADER_NAME, type TimeBound } from './event-rules.js';

const MAX_PATH_LENGTH = EVENT_RULES.path?.maxLength ?? Number.MAX_SAFE_INTEGER;

type Report = (path: string, message: string) => void;

/** An event in normal form, and its events-topic key (from the address parsed to check it). */
export interface NormalisedEvent {
  event: RequestEvent;
  key: string;
}

/**
 * The semantic checks of one event whose shape the schema already accepted, and its
 * normalised copy (undefined when `report` was called). The copy has every field in
 * the schema's order, so the publisher encodes one object shape.
 */
export function normaliseEvent(e: RequestEvent, report: Report, time: TimeBound): NormalisedEvent | undefined {
  let ok = true;
  const fail = (path: string, message: string) => {
    ok = false;
    report(path, message);
  };
  const ahead = e.timestamp - time.nowMs;
  if (ahead > time.maxFutureMs) fail('/timestamp', `is ${ahead} ms ahead of the gateway clock (at most ${time.maxFutureMs} ms ahead is accepted)`);
  const ip = tryParseIp(e.ip);
  if (ip === undefined) fail('/ip', ipProblem(e.ip));
  if (e.status > 0 && e.status < 100) fail('/status', 'must be 0 (no response) or an HTTP status from 100 to 999');
  const host = normaliseHost(e.host);
  if (host.length === 0) fail('/host', 'is empty once the port and trailing dots are removed');
  const path = normalisePath(e.path);
  if (path.length === 0) fail('/path', 'has no path before the query string or fragment');
  // Escaping a stray `%` lengthens a path: the bound holds for what is published.
  else if (path.length > MAX_PATH_LENGTH) fail('/path', `is ${path.length} characters once normalised, more than ${MAX_PATH_LENGTH}`);
  const headers = normaliseHeaderNames(e.headers ?? {}, fail);
  if (!ok || ip === undefined) return undefined;
  const event: RequestEvent = {
    eventId: e.eventId,
    timestamp: e.timestamp,
    ip: ip.text,
    country: e.country == null ? null : e.country.toUpperCase(),
    region: e.region == null ? null : e.region.toUpperCase(),
    asn: e.asn ?? null,
    method: normaliseMethod(e.method),
    host,
    path,
    route: e.route ?? null,
    status: e.status,
    userId: e.userId ?? null,
    apiKeyHash: e.apiKeyHash == null ? null : e.apiKeyHash.toLowerCase(),
    headers,
    edgeId: e.edgeId,
    latencyMs: e.latencyMs ?? null,
    cost: e.cost ?? 1,
  };
  return { event, key: eventKey(ip) };
}

/** Lower-case names (in a prototype-less object: a header may be called `__proto__`). */
function normaliseHeaderNames(headers: Readonly<Record<string, string>>, fail: Report): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const name of Object.keys(headers)) {
    const where = `/headers/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) fail(where, 'is not a header name (an HTTP token of 1 to 64 characters)');
    else if (FORBIDDEN_HEADERS.has(lower)) fail(where, 'carries credentials, which must not leave the edge');
    else if (lower in out) fail(where, 'is given twice (header names are case-insensitive)');
    else out[lower] = headers[name]!;
  }
  return out;
}

function ipProblem(text: string): string {
  try {
    parseIp(text);
    return 'is not an IP address';
  } catch (error) {
    return (error as Error).message;
  }
}
