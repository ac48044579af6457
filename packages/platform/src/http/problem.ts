import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ERRORS, PROBLEM_CONTENT_TYPE, problemDocument, type ErrorCode, type ProblemExtensions } from '@banstream/core';
import type { Logger } from '../logging/logger.js';

/**
 * The one writer of error answers for every banstream HTTP service: the status from
 * the error catalogue (core/errors.ts), the body an RFC 9457 problem document.
 */
export function sendProblem(reply: FastifyReply, code: ErrorCode, detail: string, extensions?: ProblemExtensions): FastifyReply {
  return reply
    .code(ERRORS[code].status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemDocument(code, detail, extensions));
}

/** A field-level problem: `threshold.count: must be > 0`. */
export interface FieldError {
  path: string;
  message: string;
}

/** An error a route throws to be answered as a problem (its status from the catalogue). */
export class ProblemError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly errors?: FieldError[],
  ) {
    super(message);
    this.name = 'ProblemError';
  }

  get status(): number {
    return ERRORS[this.code].status;
  }
}

export function sendProblemError(reply: FastifyReply, error: ProblemError): FastifyReply {
  return sendProblem(reply, error.code, error.message, error.errors ? { errors: error.errors } : undefined);
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

/** Fastify's schema errors as INVALID_REQUEST naming each field (`querystring.limit: must be <= 1000`). */
export function validationProblem(error: FastifyError): ProblemError {
  const where = error.validationContext ?? 'body';
  const errors = (error.validation ?? []).map((v) => {
    const missing = v.keyword === 'required' ? (v.params as { missingProperty?: string }).missingProperty : undefined;
    const extra = v.keyword === 'additionalProperties' ? (v.params as { additionalProperty?: string }).additionalProperty : undefined;
    const path = jsonPointerToPath(`${v.instancePath}${missing || extra ? `/${missing ?? extra}` : ''}`, where === 'body' ? '' : `${where}.`) || where;
    return { path, message: extra ? 'is not a known field' : missing ? 'is required' : (v.message ?? 'is invalid') };
  });
  return new ProblemError('INVALID_REQUEST', errors.map((e) => `${e.path}: ${e.message}`).join('; '), errors);
}

/** Fastify's own errors of reading a request (its FST_ codes), in the catalogue's terms. */
export function requestProblem(error: { code?: string; statusCode?: number; message: string }): ProblemError {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ProblemError('BODY_TOO_LARGE', error.message);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ProblemError('UNSUPPORTED_MEDIA_TYPE', error.message);
    default:
      if (error.statusCode === 429) return new ProblemError('RATE_LIMITED', error.message);
      // Not the client's fault unless Fastify says so: a 4xx tells a client not to send the request again.
      return new ProblemError(error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? 'BAD_REQUEST' : 'INTERNAL', error.message);
  }
}

/**
 * Every error leaves as problem+json with a stable code: a ProblemError as it says,
 * schema validation errors naming each field, Fastify's request errors by their
 * kind; anything else a 500 whose detail says nothing of internals (it is logged,
 * without the request's headers).
 */
export function problemErrorHandler(logger: Logger) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    if (error instanceof ProblemError) return sendProblemError(reply, error);
    if (error.validation) return sendProblemError(reply, validationProblem(error));
    const problem = requestProblem(error);
    if (problem.code !== 'INTERNAL') return sendProblemError(reply, problem);
    logger.error({ err: error, method: request.method, route: request.routeOptions.url, requestId: request.id }, 'request failed');
    return sendProblem(reply, 'INTERNAL', `the request failed on the server; see its log with this request id: ${request.id}`);
  };
}

/** 404 for a route the server does not have. */
export function notFoundProblem(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendProblem(reply, 'NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`);
}
