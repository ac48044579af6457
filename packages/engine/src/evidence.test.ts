import { describe, expect, it } from 'vitest';
import { EVIDENCE_TOP, EVIDENCE_VALUE_CHARS, EvidenceSample, type EventAtHand } from './evidence.js';

function event(path: string, fields: Partial<{ method: string; status: number; agent: string; edge: string }> = {}): EventAtHand {
  return { path, method: fields.method ?? 'GET', status: fields.status, userAgent: () => fields.agent, edge: () => fields.edge };
}

describe('EvidenceSample', () => {
  it('keeps every event up to 64 and lists the top values, most frequent first, ties by value', () => {
    const sample = new EvidenceSample();
    for (let i = 0; i < 40; i++) sample.add(event('/login', { method: 'POST', status: 401, agent: 'curl/8', edge: 'e1' }));
    for (let i = 0; i < 20; i++) sample.add(event('/', { status: 200, edge: 'e2' }));
    const evidence = EvidenceSample.evidence(sample, 1, 2);
    expect(evidence).toEqual({
      firstEventAt: 1,
      lastEventAt: 2,
      sampledEvents: 60,
      paths: [
        { value: '/login', count: 40 },
        { value: '/', count: 20 },
      ],
      methods: [
        { value: 'POST', count: 40 },
        { value: 'GET', count: 20 },
      ],
      statuses: [
        { value: '401', count: 40 },
        { value: '200', count: 20 },
      ],
      userAgents: [{ value: 'curl/8', count: 40 }],
      edges: [
        { value: 'e1', count: 40 },
        { value: 'e2', count: 20 },
      ],
    });
  });

  it('samples a flood one in 2, 4, … weighing each sample by its stride, and asks for the user agent only of sampled events', () => {
    const sample = new EvidenceSample();
    let asked = 0;
    const flood: EventAtHand = { path: '/search', method: 'GET', status: 200, userAgent: () => (asked++, 'bot'), edge: () => 'e' };
    for (let i = 0; i < 100_000; i++) sample.add(flood);
    const evidence = EvidenceSample.evidence(sample, 0, 0);
    expect(evidence.sampledEvents).toBe(100_000);
    // Every event up to 64, then fewer and fewer: at most one in 1,024 at the end.
    expect(asked).toBeLessThan(1_000);
    expect(asked).toBeGreaterThan(100);
    // The weighted count estimates the events: within one stride of the truth.
    expect(Math.abs(evidence.paths[0]!.count - 100_000)).toBeLessThanOrEqual(1024);
  });

  it('stays bounded under many distinct values: five listed, a heavy value kept among them, long values cut', () => {
    const sample = new EvidenceSample();
    const long = `/${'a'.repeat(5000)}`;
    for (let i = 0; i < 10_000; i++) sample.add(event(i % 2 === 0 ? long : `/random/${i}`, { agent: `agent-${i}` }));
    const evidence = EvidenceSample.evidence(sample, 0, 0);
    expect(evidence.paths).toHaveLength(EVIDENCE_TOP);
    expect(evidence.paths[0]!.value).toBe(long.slice(0, EVIDENCE_VALUE_CHARS));
    expect(evidence.userAgents).toHaveLength(EVIDENCE_TOP);
  });

  it('gives the window times alone and empty lists without a sample', () => {
    expect(EvidenceSample.evidence(undefined, 5, 9)).toEqual({ firstEventAt: 5, lastEventAt: 9, sampledEvents: 0, paths: [], methods: [], statuses: [], userAgents: [], edges: [] });
  });
});
