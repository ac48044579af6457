import { RE2JS } from 're2js';
import { BanstreamError, isBanstreamError } from '../errors.js';

/**
 * Header `matches` patterns run by re2js, a JavaScript port of RE2: time linear in the
 * header value, whatever the pattern, so no policy author's `(a+)+$` can let an
 * attacker's header stall an enforcer (V8's RegExp took 5.7 s on 27 characters). RE2
 * syntax: no lookahead, lookbehind or backreferences; `(?i)` for case-insensitive.
 * Measured on this project's machines against V8's RegExp on a 100-character
 * User-Agent: 0.4–0.8 µs a test instead of 20–100 ns; the native `re2` addon needs a
 * build or a download outside the npm registry, and re2-wasm was slower still (5 µs).
 *
 * Linear is not yet cheap: the cost grows with the compiled program too. `[a-z]{100}`
 * twenty times (2,002 instructions) took 300–580 ms on every 8 KB value; at 600 the
 * slowest seen was under 10 ms (after the pattern's first match, which builds its
 * automaton: up to 170 ms at 8 KB, once per process). So a pattern may compile to at
 * most MAX_HEADER_PATTERN_INSTRUCTIONS instructions: any 512-character literal fits, a
 * counted repetition such as `{1000}` does not.
 */
export const MAX_HEADER_PATTERN_INSTRUCTIONS = 600;

export interface HeaderPattern {
  /** Whether the pattern matches somewhere in the value (unanchored, like RegExp.test). */
  test(value: string): boolean;
}

/** Compiles a `matches` pattern; throws POLICY_INVALID with the reason (details.reason) if it cannot run. */
export function compileHeaderPattern(source: string): HeaderPattern {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source);
  } catch (error) {
    const reason = syntaxReason(error);
    throw invalidPattern(source, reason, error);
  }
  const size = compiled.programSize();
  if (size > MAX_HEADER_PATTERN_INSTRUCTIONS) {
    const reason =
      `compiles to ${size} instructions, more than the ${MAX_HEADER_PATTERN_INSTRUCTIONS} a header pattern may use ` +
      `(matching time grows with them; a counted repetition such as {100} makes one per repeat)`;
    throw invalidPattern(source, reason);
  }
  return compiled;
}

/** Why `source` cannot be a header pattern, or undefined if it can: validation's words. */
export function headerPatternProblem(source: string): string | undefined {
  try {
    compileHeaderPattern(source);
    return undefined;
  } catch (error) {
    if (isBanstreamError(error, 'POLICY_INVALID') && typeof error.details.reason === 'string') return error.details.reason;
    throw error;
  }
}

function invalidPattern(source: string, reason: string, cause?: unknown): BanstreamError {
  return new BanstreamError('POLICY_INVALID', `header pattern ${JSON.stringify(source.slice(0, 80))} ${reason}`, { cause, details: { reason } });
}

function syntaxReason(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/^error parsing regexp: /, '');
  let hint = '';
  if (/`\(\?<?[=!]/.test(message)) hint = ': lookahead and lookbehind cannot run in linear time';
  else if (/`\\(?:[1-9]|k)`/.test(message)) hint = ': backreferences cannot run in linear time';
  return `is not a valid RE2 regular expression: ${message}${hint}`;
}
