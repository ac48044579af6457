import { describe, expect, it } from 'vitest';
import type { RequestEvent } from '@banstream/schemas';
import { wellFormedEvent } from './well-formed.js';

const event = (over: Partial<RequestEvent> = {}): RequestEvent => ({
  eventId: 'e1',
  timestamp: 1,
  ip: '203.0.113.7',
  country: 'FR',
  region: null,
  asn: null,
  method: 'GET',
  host: 'shop.example',
  path: '/é',
  route: null,
  status: 200,
  userId: 'u',
  apiKeyHash: null,
  headers: { 'user-agent': 'curl' },
  edgeId: 'edge',
  latencyMs: null,
  cost: 1,
  ...over,
});

describe('wellFormedEvent', () => {
  it('hands back the same object when every text is well-formed, paired surrogates included', () => {
    const e = event({ userId: 'bot\ud83d\ude00' });
    expect(wellFormedEvent(e)).toBe(e);
  });

  it('puts U+FFFD in place of each lone surrogate of any text field and of header names and values, leaving the caller’s object alone', () => {
    const e = event({ userId: 'bot\ud800', path: '/\udc00x', headers: { 'x-t\ud800': 'a', 'user-agent': 'b\udfff' } });
    const fixed = wellFormedEvent(e);
    expect(fixed).not.toBe(e);
    expect(fixed.userId).toBe('bot\ufffd');
    expect(fixed.path).toBe('/\ufffdx');
    expect(fixed.headers).toEqual({ 'x-t\ufffd': 'a', 'user-agent': 'b\ufffd' });
    expect([e.userId, e.path, Object.keys(e.headers)[0]]).toEqual(['bot\ud800', '/\udc00x', 'x-t\ud800']);
  });

  it('leaves every field well-formed whatever the surrogates (random texts)', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const text = () => String.fromCharCode(...Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => (rnd() < 0.5 ? 0xd800 + Math.floor(rnd() * 0x800) : 0x61 + Math.floor(rnd() * 26))));
    for (let i = 0; i < 2000; i++) {
      const fixed = wellFormedEvent(event({ userId: text(), host: text(), headers: { [text()]: text() } }));
      for (const t of [fixed.userId!, fixed.host, ...Object.keys(fixed.headers), ...Object.values(fixed.headers)]) expect(t.isWellFormed()).toBe(true);
    }
  });
});
