import type { ErrorCode } from '@banstream/core';
import { requestProblem } from '@banstream/platform';

/**
 * Fastify's own errors of body reading: the platform's code for each (its statuses
 * from the catalogue, core/errors.ts), in the gateway's words. 4xx means "fix the
 * request, do not retry it as is"; 500 is the gateway's own failure (nothing accepted; retry).
 */
export function fromFastifyError(error: { code?: string; statusCode?: number; message: string }, bodyLimit: number): { code: ErrorCode; message: string } {
  if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return { code: 'BAD_JSON', message: 'the body is empty: send a JSON array of events' };
  const { code, message } = requestProblem(error);
  switch (code) {
    case 'BODY_TOO_LARGE':
      return { code, message: `the body is larger than the limit of ${bodyLimit} bytes (INGEST_BODY_LIMIT_BYTES): send smaller batches` };
    case 'UNSUPPORTED_MEDIA_TYPE':
      return { code, message: UNSUPPORTED_MEDIA_TYPE };
    case 'INTERNAL':
      return { code, message: 'the gateway failed on this request; nothing of it was accepted: retry it' };
    default:
      return { code, message };
  }
}

export const UNSUPPORTED_MEDIA_TYPE = 'send Content-Type: application/json (a JSON array of RequestEvent) or application/avro (one RequestEventBatch in Avro single-object encoding)';
