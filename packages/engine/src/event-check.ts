import { attributesFromEvent, BanstreamError, type ErrorCode, type RequestAttributes } from '@banstream/core';
import type { CountedEvent } from './counted-event.js';

export type CheckedEvent = { ok: true; attrs: RequestAttributes } | { ok: false; code: ErrorCode; message: string };

/**
 * An event the aggregator can count, or why not (the DLQ reason). Events dated
 * further than `maxFutureMs` ahead of the time their record was received
 * (`receivedMs`, event-time.ts) are refused: their time is not one the pipeline can
 * have seen, and counted at it they could pre-load a victim's count.
 */
export function checkEvent(event: CountedEvent, receivedMs: number, maxFutureMs: number): CheckedEvent {
  if (!Number.isSafeInteger(event.timestamp) || event.timestamp <= 0) {
    return { ok: false, code: 'EVENT_TIME_OUT_OF_RANGE', message: `timestamp ${event.timestamp} is not a positive ms time` };
  }
  if (event.timestamp > receivedMs + maxFutureMs) {
    return { ok: false, code: 'EVENT_TIME_OUT_OF_RANGE', message: `timestamp is ${event.timestamp - receivedMs} ms ahead of the time its record was received (at most ${maxFutureMs})` };
  }
  try {
    return { ok: true, attrs: attributesFromEvent(event) };
  } catch (error) {
    if (error instanceof BanstreamError) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}
