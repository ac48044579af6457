import { describe, expect, it } from 'vitest';
import { loadSchemaCatalog, requestEvent, SCHEMA_NAMES, type RequestEvent } from '@banstream/schemas';
import { EventEncoder } from './prepare.js';

const type = loadSchemaCatalog().latest(SCHEMA_NAMES.requestEvent).type;

function event(i: number, pathLength = 10): RequestEvent {
  return requestEvent({ eventId: `e-${i}`, timestamp: 1_700_000_000_000 + i, ip: `192.0.2.${i % 256}`, country: 'DE', path: `/${'p'.repeat(pathLength)}`, headers: { 'user-agent': 'test' } });
}

describe('EventEncoder', () => {
  it('writes each event as toBuffer would, across chunk boundaries and for an event larger than a chunk', () => {
    const encoder = new EventEncoder(type);
    const events = Array.from({ length: 2_000 }, (_, i) => event(i, i === 1_500 ? 100_000 : 10 + (i % 50)));
    const bodies = events.map((e) => encoder.encode(e));
    bodies.forEach((body, i) => expect(body.equals(type.toBuffer(events[i]!)), `event ${i}`).toBe(true));
    // Views of shared chunks, not a buffer each: fewer distinct backing stores than events.
    expect(new Set(bodies.map((b) => b.buffer)).size).toBeLessThan(20);
    expect(type.fromBuffer(bodies[1_500]!)).toEqual(events[1_500]);
  });
});
