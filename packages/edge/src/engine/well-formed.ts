import type { RequestEvent } from '@banstream/schemas';

/** The event's text fields (the headers map is walked apart). */
const TEXT_FIELDS = ['eventId', 'ip', 'country', 'region', 'method', 'host', 'path', 'route', 'userId', 'apiKeyHash', 'edgeId'] as const;

/**
 * The event with U+FFFD in place of every lone surrogate, as the enforcer builds its
 * subjects (boundValue): UTF-8 cannot carry one, and avsc writes one in a short string
 * as three bytes the aggregator reads as three U+FFFD, in a long one as one U+FFFD, so
 * a user id `bot\ud800` would be banned under a subject the enforcer never looks up.
 * The same object when every text is well-formed (the rule: a one-byte string is, at no cost).
 */
export function wellFormedEvent(event: RequestEvent): RequestEvent {
  let fixed: RequestEvent | undefined;
  for (const field of TEXT_FIELDS) {
    const text = event[field];
    if (typeof text === 'string' && !text.isWellFormed()) {
      fixed ??= { ...event };
      (fixed as unknown as Record<string, string>)[field] = text.toWellFormed();
    }
  }
  const headers = wellFormedHeaders(event.headers);
  if (headers !== event.headers) (fixed ??= { ...event }).headers = headers;
  return fixed ?? event;
}

function wellFormedHeaders(headers: Record<string, string>): Record<string, string> {
  if (headers === null || typeof headers !== 'object') return headers;
  let fixed: Record<string, string> | undefined;
  for (const name of Object.keys(headers)) {
    // A string: the event was checked against the schema before it is written.
    const value = headers[name]!;
    if (name.isWellFormed() && value.isWellFormed()) continue;
    if (fixed === undefined) fixed = { ...headers };
    delete fixed[name];
    // Assigned after the delete: a name that becomes another's takes its place, as a later key does in avsc's map.
    fixed[name.toWellFormed()] = value.toWellFormed();
  }
  return fixed ?? headers;
}
