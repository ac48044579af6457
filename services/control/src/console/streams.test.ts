import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '@banstream/platform';
import { MAX_STREAMS_PER_TOKEN, StreamHub } from './streams.js';

/** What the hub uses of a response: write, end, destroy, its backlog and its close event. */
class FakeResponse extends EventEmitter {
  written: string[] = [];
  ended = false;
  writableLength = 0;
  write(chunk: string): boolean {
    this.written.push(chunk);
    return true;
  }
  end(): void {
    this.ended = true;
    this.emit('close');
  }
  destroy(): void {
    this.end();
  }
}

const logger = createLogger({ service: 'control-test', level: 'silent' });
const res = () => new FakeResponse();
const asRes = (r: FakeResponse) => r as unknown as ServerResponse;

afterEach(() => vi.useRealTimers());

describe('StreamHub', () => {
  it('sends one snapshot per tick to every stream, computed once', async () => {
    vi.useFakeTimers();
    let made = 0;
    const hub = new StreamHub({ max: 5, tickMs: 1_000, snapshot: async () => ({ n: ++made }), logger });
    const [a, b] = [res(), res()];
    hub.open('a', asRes(a), () => true);
    hub.open('b', asRes(b), () => true);
    await vi.advanceTimersByTimeAsync(2_000);
    const events = (r: FakeResponse) => r.written.filter((w) => w.startsWith('event: overview'));
    expect(events(a)).toEqual(['event: overview\ndata: {"n":1}\n\n', 'event: overview\ndata: {"n":2}\n\n', 'event: overview\ndata: {"n":3}\n\n']);
    expect(events(b).length).toBeGreaterThanOrEqual(2);
    expect(made).toBe(3);
    hub.closeAll();
  });

  it('does not let one token take every stream: its own oldest is ended instead', () => {
    const hub = new StreamHub({ max: 50, tickMs: 1_000, snapshot: async () => ({}), logger });
    // A viewer token signed in ten times (its most sessions) opens a stream from each.
    const viewer = Array.from({ length: 10 }, (_, i) => {
      const r = res();
      expect(hub.hasRoom(`v${i}`, 'bob')).toBe(true);
      hub.open(`v${i}`, asRes(r), () => true, 'bob');
      return r;
    });
    expect(hub.size).toBe(MAX_STREAMS_PER_TOKEN);
    expect(viewer.filter((r) => r.ended)).toHaveLength(10 - MAX_STREAMS_PER_TOKEN);
    // Four more such tokens would have filled the hub: others still get a stream.
    for (const name of ['t1', 't2', 't3', 't4']) for (let i = 0; i < 10; i++) hub.open(`${name}-${i}`, asRes(res()), () => true, name);
    expect(hub.hasRoom('admin-session', 'root')).toBe(true);
    hub.closeAll();
  });

  it('keeps one stream per session and at most `max`', () => {
    const hub = new StreamHub({ max: 2, tickMs: 1_000, snapshot: async () => ({}), logger });
    const first = res();
    hub.open('s1', asRes(first), () => true);
    const again = res();
    expect(hub.hasRoom('s1')).toBe(true);
    hub.open('s1', asRes(again), () => true);
    expect(first.ended).toBe(true);
    expect(hub.size).toBe(1);
    hub.open('s2', asRes(res()), () => true);
    expect(hub.hasRoom('s3')).toBe(false);
    expect(hub.hasRoom('s2')).toBe(true);
    again.emit('close');
    expect(hub.size).toBe(1);
    expect(hub.hasRoom('s3')).toBe(true);
    hub.closeAll();
    expect(hub.size).toBe(0);
  });

  it('closes a stream whose session ended, and drops a client that stopped reading', async () => {
    vi.useFakeTimers();
    const hub = new StreamHub({ max: 5, tickMs: 1_000, snapshot: async () => ({}), logger });
    let alive = true;
    const signedOut = res();
    const stuck = res();
    hub.open('out', asRes(signedOut), () => alive);
    hub.open('stuck', asRes(stuck), () => true);
    await vi.advanceTimersByTimeAsync(0);
    alive = false;
    stuck.writableLength = 2 * 1024 * 1024;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(signedOut.ended).toBe(true);
    expect(stuck.ended).toBe(true);
    expect(hub.size).toBe(0);
  });
});
