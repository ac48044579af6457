import { isBanstreamError, parsePolicyText, type PolicySpec } from '@banstream/core';

export interface TextProblem {
  path: string;
  message: string;
  line?: number;
  column?: number;
}

export type TextCheck = { ok: true; policies: PolicySpec[] } | { ok: false; errors: TextProblem[] };

/** A policy file read as `banstream policies apply` reads it: its policies, or every problem with its field path. */
export function checkPolicyText(text: string): TextCheck {
  try {
    const document = parsePolicyText(text, 'auto');
    if (document.allowlist !== undefined && document.allowlist.length > 0) {
      return { ok: false, errors: [{ path: 'allowlist', message: 'is not applied with policies: add entries on the Allowlist page (banstream allow add)' }] };
    }
    return { ok: true, policies: document.policies };
  } catch (error) {
    if (!isBanstreamError(error, 'POLICY_INVALID')) throw error;
    const listed = (error.details.errors as TextProblem[] | undefined) ?? [];
    const errors =
      listed.length > 0 ? listed.map((e) => ({ path: e.path, message: e.message, ...(e.line === undefined ? {} : { line: e.line, column: e.column }) })) : [{ path: '(text)', message: error.message }];
    return { ok: false, errors };
  }
}
