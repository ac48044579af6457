import { describe, expect, it } from 'vitest';
import { ERRORS, type ErrorCode } from './errors.js';
import { problemDocument } from './problem.js';

/** RFC 9110's reason phrases: an `about:blank` problem's title is its status's (RFC 9457 §4.2.1). */
const REASON_PHRASES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

describe('the error catalogue', () => {
  it('renders every entry as a valid RFC 9457 problem document', () => {
    const codes = Object.keys(ERRORS) as ErrorCode[];
    expect(codes.length).toBeGreaterThan(40);
    for (const code of codes) {
      const doc = JSON.parse(JSON.stringify(problemDocument(code, `what went wrong (${code})`)));
      expect(code, 'codes are SCREAMING_SNAKE_CASE').toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(Object.keys(doc).sort(), code).toEqual(['code', 'detail', 'status', 'title', 'type']);
      expect(doc.type, code).toBe('about:blank');
      expect(Number.isInteger(doc.status) && doc.status >= 400 && doc.status <= 599, code).toBe(true);
      expect(doc.title, code).toBe(REASON_PHRASES[doc.status]);
      expect([doc.code, doc.detail], code).toEqual([code, `what went wrong (${code})`]);
    }
  });

  it('keeps the statuses the APIs have always answered with', () => {
    const status = (code: ErrorCode) => ERRORS[code].status;
    expect([status('INVALID_REQUEST'), status('UNAUTHENTICATED'), status('FORBIDDEN'), status('NOT_FOUND'), status('CONFLICT')]).toEqual([400, 401, 403, 404, 409]);
    expect([status('RATE_LIMITED'), status('BACKTEST_BUSY'), status('KAFKA_UNAVAILABLE'), status('INTERNAL')]).toEqual([429, 429, 503, 500]);
    expect([status('CALLER_NOT_TRUSTED'), status('BANS_LISTING_BUSY'), status('SUBJECT_INVALID_IP')]).toEqual([403, 503, 400]);
    expect([status('INVALID_EVENTS'), status('UNAUTHORIZED'), status('BODY_TOO_LARGE'), status('UNSUPPORTED_MEDIA_TYPE'), status('BUFFER_FULL')]).toEqual([400, 401, 413, 415, 503]);
  });

  it('adds extension members after the standard ones', () => {
    const errors = [{ path: 'threshold.count', message: 'must be > 0' }];
    expect(problemDocument('POLICY_INVALID', 'threshold.count: must be > 0', { errors })).toEqual({
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'threshold.count: must be > 0',
      code: 'POLICY_INVALID',
      errors,
    });
  });
});
