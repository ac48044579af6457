import { describe, expect, it } from 'vitest';
import { manualClock } from '@banstream/core';
import { CircuitBreaker, type BreakerState } from './breaker.js';

function breaker(options = { failureThreshold: 3, coolDownMs: 1_000 }) {
  const clock = manualClock(0);
  const moves: string[] = [];
  const b = new CircuitBreaker(options, clock.now, (to: BreakerState, from: BreakerState) => moves.push(`${from}->${to}`));
  return { b, clock, moves };
}

describe('CircuitBreaker', () => {
  it('opens after the threshold of consecutive failures, not after scattered ones', () => {
    const { b, moves } = breaker();
    b.recordFailure();
    b.recordFailure();
    b.recordSuccess();
    b.recordFailure();
    b.recordFailure();
    expect(b.state).toBe('closed');
    b.recordFailure();
    expect(b.state).toBe('open');
    expect(moves).toEqual(['closed->open']);
  });

  it('refuses calls while cooling down, then lets exactly one probe through', () => {
    const { b, clock } = breaker();
    for (let i = 0; i < 3; i++) b.recordFailure();
    clock.advance(999);
    expect(b.refusing()).toBe(true);
    expect(b.tryAcquire()).toBe(false);
    clock.advance(1);
    expect(b.refusing()).toBe(false);
    expect(b.tryAcquire()).toBe(true);
    expect(b.state).toBe('half-open');
    expect(b.tryAcquire()).toBe(false);
  });

  it('closes when the probe succeeds', () => {
    const { b, clock, moves } = breaker();
    for (let i = 0; i < 3; i++) b.recordFailure();
    clock.advance(1_000);
    b.tryAcquire();
    b.recordSuccess();
    expect(b.state).toBe('closed');
    expect(b.tryAcquire()).toBe(true);
    expect(moves).toEqual(['closed->open', 'open->half-open', 'half-open->closed']);
  });

  it('reopens for a whole cool-down when the probe fails', () => {
    const { b, clock } = breaker();
    for (let i = 0; i < 3; i++) b.recordFailure();
    clock.advance(1_500);
    b.tryAcquire();
    b.recordFailure();
    expect(b.state).toBe('open');
    clock.advance(999);
    expect(b.tryAcquire()).toBe(false);
    clock.advance(1);
    expect(b.tryAcquire()).toBe(true);
  });

  it('ignores failures of calls that were already out when it opened', () => {
    const { b, clock } = breaker();
    for (let i = 0; i < 3; i++) b.recordFailure();
    clock.advance(600);
    b.recordFailure();
    clock.advance(400);
    expect(b.tryAcquire()).toBe(true);
  });

  it('rejects nonsense settings', () => {
    expect(() => new CircuitBreaker({ failureThreshold: 0 }, () => 0)).toThrow(/failureThreshold/);
    expect(() => new CircuitBreaker({ coolDownMs: -1 }, () => 0)).toThrow(/coolDownMs/);
  });
});
