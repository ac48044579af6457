import { compileKey, parseCidr, parseSubject, type SubjectFn } from '@banstream/core';

/** Scopes every check looks up whatever the bans (decide.ts): a ban on them needs no shape. */
const LOOKED_UP_ALWAYS = new Set(['ip', 'cidr', 'user', 'apikey']);

/**
 * The key shapes of the manual bans on other subjects (`path:/admin`,
 * `header.user-agent:…`, `ip:…|path:/login`…). A policy's bans are looked up through
 * the policy when it applies; a manual ban has no policy, so a check builds the subject
 * of each shape present (compileKey, as a policy keyed so would) and looks it up. Most
 * deployments have none: `subjectFns` is then empty and a check reads its length only.
 */
export class ManualShapes {
  private readonly shapes = new Map<string, { subjectOf: SubjectFn; bans: number }>();
  /** One function per shape held, for the check's loop; replaced, never changed in place. */
  subjectFns: readonly SubjectFn[] = [];

  /** A manual ban on `subject` came in (a ban on an always-looked-up scope is ignored). */
  add(subject: string): void {
    const key = shapeKey(subject);
    if (key === undefined) return;
    const shape = this.shapes.get(key.text);
    if (shape) {
      shape.bans++;
      return;
    }
    this.shapes.set(key.text, { subjectOf: compileKey(key.dimensions), bans: 1 });
    this.subjectFns = [...this.shapes.values()].map((s) => s.subjectOf);
  }

  /** A manual ban on `subject` went (lifted, replaced or expired). */
  remove(subject: string): void {
    const key = shapeKey(subject);
    const shape = key === undefined ? undefined : this.shapes.get(key.text);
    if (!shape || --shape.bans > 0) return;
    this.shapes.delete(key!.text);
    this.subjectFns = [...this.shapes.values()].map((s) => s.subjectOf);
  }
}

/**
 * The key whose compiled subject of a matching request is `subject`: each part's
 * dimension, a network part's prefix length kept for its family. Undefined for a
 * scope looked up anyway, or text that is not a subject (never a check's).
 */
function shapeKey(subject: string): { text: string; dimensions: string[] } | undefined {
  let parts;
  try {
    parts = parseSubject(subject);
  } catch {
    return undefined;
  }
  if (parts.length === 1 && LOOKED_UP_ALWAYS.has(parts[0]!.scope)) return undefined;
  const dimensions = parts.map((p) => {
    if (p.scope === 'cidr') {
      const network = parseCidr(p.value);
      return network.family === 4 ? `prefix/${network.bits}` : `prefix/24,${network.bits}`;
    }
    const dot = p.scope.indexOf('.');
    return dot > 0 ? `${p.scope.slice(0, dot)}:${p.scope.slice(dot + 1)}` : p.scope;
  });
  return { text: dimensions.join('|'), dimensions };
}
