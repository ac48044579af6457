import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isBanstreamError } from '@banstream/core';
import { problemErrorHandler, sendProblem, type Logger } from '@banstream/platform';

/**
 * The admin API's errors: the platform's problem answers, and two of the API's own
 * readings of errors from below. A subject that does not parse is SUBJECT_INVALID
 * whatever its part; Kafka trouble is a retryable 503 that says nothing was changed.
 */
export function errorHandler(logger: Logger) {
  const common = problemErrorHandler(logger);
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    if (isBanstreamError(error) && error.code.startsWith('SUBJECT_')) return sendProblem(reply, 'SUBJECT_INVALID', error.message);
    if (isBanstreamError(error) && (error.code === 'KAFKA_UNAVAILABLE' || error.code === 'KAFKA_TIMEOUT')) {
      return sendProblem(reply.header('retry-after', '5'), error.code, 'Kafka did not accept the change; nothing was changed, retry');
    }
    return common(error, request, reply);
  };
}
