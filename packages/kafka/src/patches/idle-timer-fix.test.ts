import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fixKafkajsIdleTimerLoop, kafkajsRequestQueuePrototype } from './idle-timer-fix.js';

interface QueueState {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checks: number;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** A RequestQueue with only the fields the scheduler reads; checkPendingRequests counts its calls. */
function queue(pending: number, throttledUntil = -1): QueueState {
  const q = Object.create(kafkajsRequestQueuePrototype()) as QueueState;
  q.pending = Array.from({ length: pending }, (_, i) => i);
  q.throttledUntil = throttledUntil;
  q.throttleCheckTimeoutId = null;
  q.checks = 0;
  q.checkPendingRequests = () => void q.checks++;
  return q;
}

describe('fixKafkajsIdleTimerLoop', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('patches the installed kafkajs (a kafkajs upgrade that moves the queue fails here)', () => {
    expect(fixKafkajsIdleTimerLoop()).toBe(true);
    expect(fixKafkajsIdleTimerLoop()).toBe(true);
  });

  it('arms no timer when nothing is pending: kafkajs 2.2.4 armed a 1 ms one that re-armed itself', () => {
    fixKafkajsIdleTimerLoop();
    const q = queue(0);
    q.scheduleCheckPendingRequests();
    expect(q.throttleCheckTimeoutId).toBeNull();
    const throttled = queue(0, Date.now() + 500);
    throttled.scheduleCheckPendingRequests();
    expect(throttled.throttleCheckTimeoutId).toBeNull();
  });

  it('checks waiting requests when the throttle ends', () => {
    fixKafkajsIdleTimerLoop();
    const q = queue(2, Date.now() + 200);
    q.scheduleCheckPendingRequests();
    vi.advanceTimersByTime(199);
    expect(q.checks).toBe(0);
    vi.advanceTimersByTime(1);
    expect(q.checks).toBe(1);
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it('checks requests that wait for an in-flight slot every 10 ms, one timer at a time', () => {
    fixKafkajsIdleTimerLoop();
    const q = queue(1);
    q.scheduleCheckPendingRequests();
    q.scheduleCheckPendingRequests();
    vi.advanceTimersByTime(9);
    expect(q.checks).toBe(0);
    vi.advanceTimersByTime(1);
    expect(q.checks).toBe(1);
  });
});
