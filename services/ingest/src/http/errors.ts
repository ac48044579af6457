import type { FastifyReply } from 'fastify';

/**
 * Every answer of the gateway other than 202, with a stable code an edge can act
 * on: 4xx means "fix the request, do not retry it as is"; 503 means "retry later",
 * with Retry-After; 500 is the gateway's own failure (nothing accepted; retry).
 */
export const INGEST_ERRORS = {
  INVALID_EVENTS: 400,
  BAD_JSON: 400,
  BAD_AVRO: 400,
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  BUFFER_FULL: 503,
  UNAVAILABLE: 503,
  INTERNAL: 500,
} as const;

export type IngestErrorCode = keyof typeof INGEST_ERRORS;

export function sendError(reply: FastifyReply, code: IngestErrorCode, message: string, extra: Record<string, unknown> = {}): FastifyReply {
  const statusCode = INGEST_ERRORS[code];
  return reply.code(statusCode).send({ statusCode, code, message, ...extra });
}

/** Fastify's own errors of body reading, in the gateway's terms. */
export function fromFastifyError(error: { code?: string; statusCode?: number; message: string }, bodyLimit: number): { code: IngestErrorCode; message: string } {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'BODY_TOO_LARGE', message: `the body is larger than the limit of ${bodyLimit} bytes (INGEST_BODY_LIMIT_BYTES): send smaller batches` };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { code: 'UNSUPPORTED_MEDIA_TYPE', message: UNSUPPORTED_MEDIA_TYPE };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: 'BAD_JSON', message: 'the body is empty: send a JSON array of events' };
    default:
      // Not the client's fault unless Fastify says so: a 4xx would tell the edge to drop a batch it should send again.
      return error.statusCode !== undefined && error.statusCode < 500
        ? { code: 'BAD_REQUEST', message: error.message }
        : { code: 'INTERNAL', message: 'the gateway failed on this request; nothing of it was accepted: retry it' };
  }
}

export const UNSUPPORTED_MEDIA_TYPE =
  'send Content-Type: application/json (a JSON array of RequestEvent) or application/avro (one RequestEventBatch in Avro single-object encoding)';
