import { describe, expect, it } from 'vitest';
import { combine } from './workers-readiness.js';
import type { Answer } from './supervisor-ipc.js';

const answer = (checks: Record<string, boolean>): Answer => ({ type: 'banstream:answer', id: 0, readiness: { ready: Object.values(checks).every(Boolean), checks } });

describe('a supervisor readiness from its workers', () => {
  it('reports each worker and each of their checks, true only where every answering worker has it', () => {
    const own = { ready: true, checks: { accepting: true } };
    const report = combine(own, [answer({ accepting: true, kafka: true, started: true }), answer({ accepting: true, kafka: false, started: true })]);
    expect(report).toEqual({ ready: false, checks: { accepting: true, 'worker 1': true, 'worker 2': false, kafka: false, started: true } });
  });

  it('is not ready while a worker does not answer, nor while draining', () => {
    expect(combine({ ready: true, checks: { accepting: true } }, [answer({ kafka: true }), undefined]).ready).toBe(false);
    expect(combine({ ready: false, checks: { accepting: false } }, [answer({ kafka: true })]).ready).toBe(false);
    expect(combine({ ready: true, checks: { accepting: true } }, [answer({ accepting: true, kafka: true })])).toEqual({ ready: true, checks: { accepting: true, 'worker 1': true, kafka: true } });
  });
});
