import { problemDocument, type ErrorCode } from '@banstream/core';
import type { Decision } from '../enforcer.js';
import { decisionHeaders, problemBody } from '../http/rate-limit-headers.js';
import { GRPC_INVALID_ARGUMENT, GRPC_OK, GRPC_PERMISSION_DENIED, OVERWRITE_IF_EXISTS_OR_ADD, type CheckResponse, type HeaderValueOption } from './messages.js';

const PROBLEM_JSON = 'application/problem+json';

/**
 * A decision as Envoy's gRPC ext_authz takes it. Allowed: OK, and the RateLimit headers
 * for the client's response. Denied: PERMISSION_DENIED with the HTTP answer Envoy sends
 * the client in its place: the decision's status (403, 429), its headers (RateLimit,
 * Retry-After) and the problem+json body, as GET /v1/auth answers.
 */
export function checkResponse(decision: Decision): CheckResponse {
  const headers = options(decisionHeaders(decision));
  if (decision.allowed) return { status: { code: GRPC_OK }, ok_response: { response_headers_to_add: headers } };
  headers.push(option('content-type', PROBLEM_JSON));
  return {
    status: { code: GRPC_PERMISSION_DENIED, message: decision.reason },
    denied_response: { status: { code: decision.status }, headers, body: JSON.stringify(problemBody(decision)) },
  };
}

/** A request that cannot be checked as sent: INVALID_ARGUMENT, and a 400 problem naming why for the client (as /v1/auth's 400). */
export function refusedResponse(code: ErrorCode, detail: string): CheckResponse {
  const problem = problemDocument(code, detail);
  return {
    status: { code: GRPC_INVALID_ARGUMENT, message: detail },
    denied_response: { status: { code: problem.status }, headers: [option('content-type', PROBLEM_JSON)], body: JSON.stringify(problem) },
  };
}

function options(headers: Record<string, string>): HeaderValueOption[] {
  const list: HeaderValueOption[] = [];
  for (const key in headers) list.push(option(key, headers[key]!));
  return list;
}

function option(key: string, value: string): HeaderValueOption {
  return { header: { key, value }, append_action: OVERWRITE_IF_EXISTS_OR_ADD };
}
