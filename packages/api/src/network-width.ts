import { parseSubject, tryParseCidr } from '@banstream/core';

/**
 * How wide a network an operator may ban or allow without saying `force`: the
 * shortest prefix length per family. A typo such as `0.0.0.0/0` would otherwise
 * refuse (or allow) the whole internet with one request.
 */
export interface MinPrefix {
  readonly v4: number;
  readonly v6: number;
}

/** The defaults of CONTROL_MIN_PREFIX_V4 and CONTROL_MIN_PREFIX_V6. */
export const DEFAULT_MIN_PREFIX: MinPrefix = Object.freeze({ v4: 8, v6: 32 });

/** The configuration variable that sets each family's limit, named in refusals. */
export const MIN_PREFIX_VARIABLE = { 4: 'CONTROL_MIN_PREFIX_V4', 6: 'CONTROL_MIN_PREFIX_V6' } as const;

export interface WideNetwork {
  /** Canonical network text: `0.0.0.0/0`, `::/0`. */
  readonly network: string;
  readonly family: 4 | 6;
  readonly bits: number;
  /** The shortest prefix allowed without force for this family. */
  readonly min: number;
}

/**
 * The first network of a canonical subject (`cidr:…`, or a composite with a `cidr`
 * part) that is wider than `limits` allows; undefined when there is none. An
 * IPv4-mapped network (`::ffff:0:0/96`) is read as the IPv4 network it holds
 * (`0.0.0.0/0`), so it is held to the IPv4 limit.
 */
export function wideNetwork(subject: string, limits: MinPrefix): WideNetwork | undefined {
  if (!subject.includes('cidr:')) return undefined;
  for (const part of parseSubject(subject)) {
    if (part.scope !== 'cidr') continue;
    const cidr = tryParseCidr(part.value);
    if (cidr === undefined) continue;
    const min = cidr.family === 4 ? limits.v4 : limits.v6;
    if (cidr.bits < min) return { network: cidr.text, family: cidr.family, bits: cidr.bits, min };
  }
  return undefined;
}

/** `0.0.0.0/0 covers more than the /8 an IPv4 ban may cover without force (CONTROL_MIN_PREFIX_V4)`. */
export function describeWide(wide: WideNetwork, what: string): string {
  return `${wide.network} is wider than the /${wide.min} an IPv${wide.family} ${what} may cover without force (${MIN_PREFIX_VARIABLE[wide.family]})`;
}
