import { ERRORS, type ErrorCode, type ProblemStatus } from './errors.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Members an API adds to a problem (RFC 9457 extensions), e.g. `errors` naming each field. */
export type ProblemExtensions = Record<string, unknown> & { type?: never; title?: never; status?: never; detail?: never; code?: never };

/** An RFC 9457 problem document, with banstream's stable `code`. */
export interface ProblemDocument {
  type: 'about:blank';
  title: string;
  status: ProblemStatus;
  detail: string;
  code: ErrorCode;
  [extension: string]: unknown;
}

/**
 * The body of every error answer of every banstream HTTP service: its status and title
 * from the catalogue, `detail` for the human, `code` for the program. The type is
 * `about:blank`: the status says what kind of problem it is, the code which one.
 */
export function problemDocument(code: ErrorCode, detail: string, extensions?: ProblemExtensions): ProblemDocument {
  const { status, title } = ERRORS[code];
  return { type: 'about:blank', title, status, detail, code, ...extensions };
}
