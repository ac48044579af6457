import type { ErrorCode } from '@banstream/core';

/**
 * Fastify's own errors of body reading, in the gateway's terms (codes and statuses
 * from the catalogue, core/errors.ts): 4xx means "fix the request, do not retry it
 * as is"; 500 is the gateway's own failure (nothing accepted; retry).
 */
export function fromFastifyError(error: { code?: string; statusCode?: number; message: string }, bodyLimit: number): { code: ErrorCode; message: string } {
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
