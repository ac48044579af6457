import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '../errors.js';
import { GeoSettings, parseGeoOverrides, parseGeoTimeZones } from './settings.js';

describe('geo settings', () => {
  const defaults = { ratio: 3, z: 5, minRate: 1 };

  it('resolves thresholds: the region, then its country, then the defaults', () => {
    const settings = new GeoSettings(defaults, parseGeoOverrides('FR:ratio=4,z=6; FR-IDF:minRate=5 ;US:minRate=50'));
    expect(settings.thresholdsFor('FR')).toEqual({ ratio: 4, z: 6, minRate: 1 });
    expect(settings.thresholdsFor('FR-IDF')).toEqual({ ratio: 4, z: 6, minRate: 5 });
    expect(settings.thresholdsFor('US-CA')).toEqual({ ratio: 3, z: 5, minRate: 50 });
    expect(settings.thresholdsFor('JP')).toEqual(defaults);
  });

  it('resolves time zones the same way, with a default for the rest', () => {
    const settings = new GeoSettings(defaults, new Map(), parseGeoTimeZones('FR=Europe/Paris, US=America/New_York,US-CA=America/Los_Angeles'), 'UTC');
    expect(settings.timeZoneFor('FR-IDF')).toBe('Europe/Paris');
    expect(settings.timeZoneFor('US-CA')).toBe('America/Los_Angeles');
    expect(settings.timeZoneFor('US-NY')).toBe('America/New_York');
    expect(settings.timeZoneFor('JP')).toBe('UTC');
  });

  it('refuses malformed overrides and unknown zones, naming the part', () => {
    const problem = (f: () => unknown) => {
      try {
        f();
      } catch (error) {
        return isBanstreamError(error, 'CONFIG_INVALID') ? error.message : `unexpected ${String(error)}`;
      }
      return 'accepted';
    };
    expect(problem(() => parseGeoOverrides('FR:ratoi=4'))).toContain('"FR:ratoi=4"');
    expect(problem(() => parseGeoOverrides('FR:ratio=-1'))).toContain('positive number');
    expect(problem(() => parseGeoOverrides('france:ratio=4'))).toContain('CODE');
    expect(problem(() => parseGeoTimeZones('FR=Europe/Pariss'))).toContain('unknown time zone "Europe/Pariss"');
    expect(problem(() => parseGeoTimeZones('FR'))).toContain('CODE=Area/City');
    expect(parseGeoOverrides('')).toEqual(new Map());
  });
});
