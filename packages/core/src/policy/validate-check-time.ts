import { isRecord, type PathSegment } from './validate-messages.js';

/**
 * Rules that keep a policy enforceable where it is enforced. The aggregator counts
 * async policies from events, after each response; the enforcer applies their bans
 * and throttles, and counts hard policies itself, when a request is checked: before
 * any response, with what the request carries and nothing the edge left out of its
 * events. A policy that one side cannot apply as written would be shown and not
 * enforced, so it is refused here, naming the field and the reason.
 */

type Push = (at: readonly PathSegment[], message: string) => void;

const STATUS_DIMENSIONS = new Set(['status', 'status_class']);
const STATUS_CONDITIONS = ['statuses', 'statusClasses'] as const;
/** Events never carry credentials (RequestEvent.headers), so the aggregator never sees them. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization']);

export function checkTimeRules(p: Record<string, unknown>, at: readonly PathSegment[], push: Push): void {
  const enforcement = isRecord(p.enforcement) ? p.enforcement : {};
  const action = isRecord(p.action) ? p.action : {};
  const match = isRecord(p.match) ? p.match : {};
  const hard = enforcement.type === 'hard';
  const async = p.enforcement === undefined || enforcement.type === 'async';

  if (Array.isArray(p.key)) {
    p.key.forEach((dimension, j) => {
      if (typeof dimension !== 'string' || !STATUS_DIMENSIONS.has(dimension)) return;
      if (hard) {
        push([...at, 'key', j], `${dimension} cannot be a key with enforcement.type hard: a hard limit counts each request when it is checked, before its response has a status`);
      } else if (action.type === 'ban' || action.type === 'throttle') {
        push(
          [...at, 'key', j],
          `${dimension} cannot be a key of a ${action.type} policy: the enforcer checks a request before its response, so it would never find the ${action.type === 'ban' ? 'ban' : 'count'}; ` +
            'use match.statuses or match.statusClasses to count only some responses, or action.type alert',
        );
      }
    });
  }

  if (hard) {
    for (const field of STATUS_CONDITIONS) {
      if (match[field] === undefined) continue;
      push(
        [...at, 'match', field],
        'cannot be used with enforcement.type hard: a hard limit counts each request when it is checked, before its response has a status; use enforcement.type async to count only some responses',
      );
    }
  }

  if (async && Array.isArray(match.headers)) {
    match.headers.forEach((h, j) => {
      const name = isRecord(h) && typeof h.name === 'string' ? h.name.toLowerCase() : undefined;
      if (name === undefined || !CREDENTIAL_HEADERS.has(name)) return;
      push(
        [...at, 'match', 'headers', j, 'name'],
        `${name} cannot be matched by an async policy: events never carry credentials, so the aggregator that counts it never sees this header; use enforcement.type hard, or key on apikey or user`,
      );
    });
  }
}
