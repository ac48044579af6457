import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attributesFromRequest, subjectFor } from '@banstream/core';
import { loadSchemaCatalog, SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { wellFormedEvent } from '@banstream/edge';
import { checkEvent, countedEventsReader } from '@banstream/engine';

const catalog = loadSchemaCatalog();
const codec = catalog.codec(SCHEMA_NAMES.requestEventBatch);
const read = countedEventsReader(catalog, { headers: true });
const NOW = 1_764_000_000_000;

const request = (userId: string) => ({ ip: '203.0.113.7', method: 'POST', host: 'shop.example', path: '/login', userId, timestamp: NOW });
const eventOf = (userId: string): RequestEvent => ({
  eventId: 'e',
  timestamp: NOW,
  ip: '203.0.113.7',
  country: null,
  region: null,
  asn: null,
  method: 'POST',
  host: 'shop.example',
  path: '/login',
  route: null,
  status: 0,
  userId,
  apiKeyHash: null,
  headers: {},
  edgeId: 'edge',
  latencyMs: null,
  cost: 1,
});

/** The subject the aggregator counts (and bans) for an event written as the edge writes it (wellFormedEvent, then avsc) and read by its reader. */
function aggregatorSubject(userId: string): string | undefined {
  const [event] = read(codec.encode({ events: [wellFormedEvent(eventOf(userId))] }))!;
  const checked = checkEvent(event!, NOW, 5_000);
  return checked.ok ? subjectFor(['user'], checked.attrs) : undefined;
}

describe('a user id with a lone surrogate, from the enforcer to the aggregator', () => {
  it('keeps well-formed ids as they are (the reference for the case below)', () => {
    for (const id of ['victim', 'é', 'victim\ud83d\ude00']) expect(aggregatorSubject(id)).toBe(subjectFor(['user'], attributesFromRequest(request(id))));
  });

  // UTF-8 cannot carry a lone surrogate: avsc writes one in a string of at most 64 bytes
  // as ED A0 80 (read back as three U+FFFD), a longer one as U+FFFD. Both sides put one
  // U+FFFD in its place first (the edge's wellFormedEvent, the enforcer's boundValue).
  it('bans the subject the enforcer looks up, for short and long ids', () => {
    for (const id of ['victim\ud800', `${'x'.repeat(70)}\udc00`, '\udfff\ud800', `${'é'.repeat(200)}\ud800`]) {
      expect(aggregatorSubject(id)).toBe(subjectFor(['user'], attributesFromRequest(request(id))));
    }
  });

  // Fuzzed, fixed seed: ids of any length (across avsc's 64-byte switch and the hashing of
  // long ids) mixing ASCII, other text, paired surrogates and lone ones of both halves.
  it('bans the subject the enforcer looks up for generated ids (differential, fixed seed)', () => {
    const unit = fc.oneof(
      fc.constantFrom('a', 'Z', '0', ':', ' ', 'é', '\u4e2d', '\ufffd', '\ud83d\ude00'),
      fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
    );
    const id = fc.array(unit, { minLength: 1, maxLength: 300 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(id, (userId) => {
        expect(aggregatorSubject(userId)).toBe(subjectFor(['user'], attributesFromRequest(request(userId))));
      }),
      { seed: 20261126, numRuns: 500 },
    );
  });

  it('would not without the edge making the event well-formed (what the test above guards)', () => {
    const [event] = read(codec.encode({ events: [eventOf('victim\ud800')] }))!;
    const checked = checkEvent(event!, NOW, 5_000);
    expect(checked.ok && subjectFor(['user'], checked.attrs)).not.toBe(subjectFor(['user'], attributesFromRequest(request('victim\ud800'))));
  });
});
