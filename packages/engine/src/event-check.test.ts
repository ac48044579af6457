import { describe, expect, it } from 'vitest';
import { requestEvent, type RequestEvent } from '@banstream/schemas';
import { checkEvent } from './event-check.js';

const NOW = 1_800_000_000_000;
const event = (over: Partial<RequestEvent>): RequestEvent => requestEvent({ timestamp: NOW, ip: '::ffff:192.0.2.1', ...over });

describe('checkEvent', () => {
  it('accepts a good event with normalised attributes', () => {
    const checked = checkEvent(event({}), NOW, 60_000);
    expect(checked.ok && checked.attrs.ip).toBe('192.0.2.1');
  });

  it('refuses events dated further ahead of the time their record was received than allowed, naming how far', () => {
    expect(checkEvent(event({ timestamp: NOW + 5_000 }), NOW, 5_000).ok).toBe(true);
    expect(checkEvent(event({ timestamp: NOW + 5_001 }), NOW, 5_000)).toEqual({
      ok: false,
      code: 'EVENT_TIME_OUT_OF_RANGE',
      message: 'timestamp is 5001 ms ahead of the time its record was received (at most 5000)',
    });
    expect(checkEvent(event({ timestamp: NOW + 55_000 }), NOW, 5_000)).toMatchObject({ ok: false, code: 'EVENT_TIME_OUT_OF_RANGE' });
    expect(checkEvent(event({ timestamp: NOW + 3_600_000 }), NOW, 5_000)).toMatchObject({ ok: false, code: 'EVENT_TIME_OUT_OF_RANGE' });
    // Old events are not this check's to refuse: lateness is the partition clock's (PartitionState.admit).
    expect(checkEvent(event({ timestamp: NOW - 3_600_000 }), NOW, 5_000).ok).toBe(true);
  });

  it('refuses events without a real time, and bad attributes, with the reason', () => {
    expect(checkEvent(event({ timestamp: 0 }), NOW, 60_000)).toMatchObject({ ok: false, code: 'EVENT_TIME_OUT_OF_RANGE' });
    expect(checkEvent(event({ ip: '300.1.1.1' }), NOW, 60_000)).toMatchObject({ ok: false, code: 'SUBJECT_INVALID_IP' });
    expect(checkEvent(event({ apiKeyHash: 'xyz' }), NOW, 60_000)).toMatchObject({ ok: false, code: 'SUBJECT_INVALID_ATTRIBUTE' });
  });
});
