import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isBanstreamError } from '@banstream/core';
import type { Logger } from '@banstream/platform';

/** A field-level problem: `threshold.count: must be > 0`. */
export interface FieldError {
  path: string;
  message: string;
}

/** Stable codes of the admin API's errors, with their HTTP status. */
export const API_ERRORS = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  INVALID_REQUEST: 400,
  POLICY_INVALID: 400,
  SUBJECT_INVALID: 400,
  /** A ban or allowlist entry on a network wider than CONTROL_MIN_PREFIX_V4/V6, without force. */
  NETWORK_TOO_WIDE: 400,
  /** A manual ban on a subject that names no client (method, host, country, path…), without force. */
  SUBJECT_TOO_BROAD: 400,
  /** A manual ban longer than CONTROL_MAX_BAN_DURATION (force does not lift it). */
  BAN_TOO_LONG: 400,
  RATE_LIMITED: 429,
  BACKTEST_BUSY: 429,
  KAFKA_UNAVAILABLE: 503,
  INTERNAL: 500,
} as const;
export type ApiErrorCode = keyof typeof API_ERRORS;

const TITLES: Record<number, string> = {
  400: 'Bad request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not found', 409: 'Conflict', 429: 'Too many requests', 500: 'Internal error', 503: 'Unavailable',
};

export class ApiError extends Error {
  constructor(readonly code: ApiErrorCode, message: string, readonly errors?: FieldError[]) {
    super(message);
    this.name = 'ApiError';
  }

  get status(): number {
    return API_ERRORS[this.code];
  }
}

/** An RFC 9457 problem body. */
export function problemBody(status: number, code: string, detail: string, errors?: FieldError[]) {
  return { type: 'about:blank', title: TITLES[status] ?? 'Error', status, code, detail, ...(errors ? { errors } : {}) };
}

export function sendProblem(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.code(error.status).type('application/problem+json').send(problemBody(error.status, error.code, error.message, error.errors));
}

/** `/threshold/count` → `threshold.count`; `/key/0` → `key[0]`. */
export function jsonPointerToPath(pointer: string, prefix = ''): string {
  let out = '';
  for (const seg of pointer.split('/').slice(1)) {
    const s = seg.replaceAll('~1', '/').replaceAll('~0', '~');
    out += /^\d+$/.test(s) ? `[${s}]` : out === '' ? s : `.${s}`;
  }
  return out === '' ? '' : `${prefix}${out}`;
}

/**
 * Every error leaves as problem+json with a stable code: schema validation errors
 * name each field; Kafka trouble is a retryable 503; anything else a 500 whose
 * detail says nothing of internals (it is logged, without the request's headers).
 */
export function errorHandler(logger: Logger) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ApiError) return sendProblem(reply, error);
    if (error.validation) {
      const where = error.validationContext ?? 'body';
      const errors = error.validation.map((v) => {
        const missing = v.keyword === 'required' ? (v.params as { missingProperty?: string }).missingProperty : undefined;
        const extra = v.keyword === 'additionalProperties' ? (v.params as { additionalProperty?: string }).additionalProperty : undefined;
        const path = jsonPointerToPath(`${v.instancePath}${missing || extra ? `/${missing ?? extra}` : ''}`, where === 'body' ? '' : `${where}.`) || where;
        return { path, message: extra ? 'is not a known field' : missing ? 'is required' : (v.message ?? 'is invalid') };
      });
      return sendProblem(reply, new ApiError('INVALID_REQUEST', errors.map((e) => `${e.path}: ${e.message}`).join('; '), errors));
    }
    if (isBanstreamError(error) && (error.code === 'SUBJECT_INVALID' || error.code.startsWith('SUBJECT_'))) {
      return sendProblem(reply, new ApiError('SUBJECT_INVALID', error.message));
    }
    if (isBanstreamError(error) && (error.code === 'KAFKA_UNAVAILABLE' || error.code === 'KAFKA_TIMEOUT')) {
      return reply.header('retry-after', '5').code(503).type('application/problem+json').send(problemBody(503, error.code, 'Kafka did not accept the change; nothing was changed, retry'));
    }
    if (error.statusCode === 429) return sendProblem(reply, new ApiError('RATE_LIMITED', error.message));
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).type('application/problem+json').send(problemBody(error.statusCode, error.code ?? 'INVALID_REQUEST', error.message));
    }
    logger.error({ err: error, method: request.method, route: request.routeOptions.url, requestId: request.id }, 'request failed');
    return sendProblem(reply, new ApiError('INTERNAL', 'the request failed on the server; see its log with this request id: ' + request.id));
  };
}
