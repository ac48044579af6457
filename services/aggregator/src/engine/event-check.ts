import { attributesFromEvent, BanstreamError, type ErrorCode, type RequestAttributes } from '@banstream/core';
import type { CountedEvent } from './counted-event.js';

export type CheckedEvent = { ok: true; attrs: RequestAttributes } | { ok: false; code: ErrorCode; message: string };

/**
 * An event the aggregator can count, or why not (the DLQ reason). Events dated
 * further ahead of the aggregator's clock than `maxFutureMs` are refused: counted,
 * they would sit in a window nobody reaches for a long time and could be used to
 * pre-load a victim's count.
 */
export function checkEvent(event: CountedEvent, nowMs: number, maxFutureMs: number): CheckedEvent {
  if (!Number.isSafeInteger(event.timestamp) || event.timestamp <= 0) {
    return { ok: false, code: 'EVENT_TIME_OUT_OF_RANGE', message: `timestamp ${event.timestamp} is not a positive ms time` };
  }
  if (event.timestamp > nowMs + maxFutureMs) {
    return { ok: false, code: 'EVENT_TIME_OUT_OF_RANGE', message: `timestamp is ${event.timestamp - nowMs} ms ahead of the aggregator clock (at most ${maxFutureMs})` };
  }
  try {
    return { ok: true, attrs: attributesFromEvent(event) };
  } catch (error) {
    if (error instanceof BanstreamError) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}
