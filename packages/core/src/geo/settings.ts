import { BanstreamError } from '../errors.js';
import { hourOfWeek } from '../policy/schedule.js';

/** An alert fires only when all three are reached at once. */
export interface GeoThresholds {
  /** Current rate over the baseline mean. */
  ratio: number;
  /** (current - mean) / standard deviation. */
  z: number;
  /** Absolute volume: requests per second. */
  minRate: number;
}

export const GEO_THRESHOLD_KEYS = ['ratio', 'z', 'minRate'] as const;

/**
 * Thresholds and time zones per country or region code. A region (`FR-IDF`) takes
 * its own entry first, then its country's (`FR`), then the defaults.
 */
export class GeoSettings {
  constructor(
    private readonly defaults: GeoThresholds,
    private readonly overrides: ReadonlyMap<string, Partial<GeoThresholds>> = new Map(),
    private readonly zones: ReadonlyMap<string, string> = new Map(),
    private readonly defaultZone = 'UTC',
  ) {}

  thresholdsFor(code: string): GeoThresholds {
    return { ...this.defaults, ...this.overrides.get(countryOf(code)), ...this.overrides.get(code) };
  }

  /** The IANA zone whose local hours the baselines of `code` are learned in. */
  timeZoneFor(code: string): string {
    return this.zones.get(code) ?? this.zones.get(countryOf(code)) ?? this.defaultZone;
  }
}

function countryOf(code: string): string {
  const dash = code.indexOf('-');
  return dash < 0 ? code : code.slice(0, dash);
}

const CODE = /^[A-Z]{2}(-[A-Z0-9]{1,3})?$/;

/**
 * Per-code threshold overrides: `FR:ratio=4,z=6;US:minRate=50;FR-IDF:minRate=5`.
 * Unknown codes, keys or values that are not positive numbers are refused with the
 * offending part named.
 */
export function parseGeoOverrides(text: string): Map<string, Partial<GeoThresholds>> {
  const out = new Map<string, Partial<GeoThresholds>>();
  for (const part of nonEmpty(text.split(';'))) {
    const colon = part.indexOf(':');
    const code = part.slice(0, colon).trim();
    if (colon < 0 || !CODE.test(code)) throw invalid(`override "${part}": expected CODE:key=value,… with CODE such as FR or FR-IDF`);
    const entry: Partial<GeoThresholds> = { ...out.get(code) };
    for (const pair of nonEmpty(part.slice(colon + 1).split(','))) {
      const [key, value, extra] = pair.split('=').map((s) => s.trim());
      const n = Number(value);
      if (!GEO_THRESHOLD_KEYS.includes(key as keyof GeoThresholds) || extra !== undefined || value === '' || !(n > 0) || !Number.isFinite(n)) {
        throw invalid(`override "${code}:${pair}": expected one of ${GEO_THRESHOLD_KEYS.join(', ')} = a positive number`);
      }
      entry[key as keyof GeoThresholds] = n;
    }
    out.set(code, entry);
  }
  return out;
}

/** `FR=Europe/Paris,US=America/New_York`; every zone must be one this runtime knows. */
export function parseGeoTimeZones(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const pair of nonEmpty(text.split(','))) {
    const [code, zone, extra] = pair.split('=').map((s) => s.trim());
    if (code === undefined || !CODE.test(code) || !zone || extra !== undefined) throw invalid(`time zone "${pair}": expected CODE=Area/City`);
    out.set(code, checkTimeZone(zone));
  }
  return out;
}

/** The zone itself when the runtime knows it; a CONFIG_INVALID error otherwise. */
export function checkTimeZone(zone: string): string {
  try {
    hourOfWeek(0, zone);
  } catch (cause) {
    throw invalid(`unknown time zone "${zone}": expected an IANA name such as Europe/Paris`, cause);
  }
  return zone;
}

function nonEmpty(parts: string[]): string[] {
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

function invalid(message: string, cause?: unknown): BanstreamError {
  return new BanstreamError('CONFIG_INVALID', message, cause === undefined ? {} : { cause });
}
