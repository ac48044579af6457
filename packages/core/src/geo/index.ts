export { HourlyBaseline, HOURS_PER_WEEK, type BaselineArrays, type HourStats } from './baseline.js';
export { GeoSettings, GEO_THRESHOLD_KEYS, parseGeoOverrides, parseGeoTimeZones, checkTimeZone, type GeoThresholds } from './settings.js';
export {
  GeoDetector,
  geoAlertId,
  type AlertEpisode,
  type DetectorOptions,
  type DetectorOutput,
  type DetectorSnapshot,
  type GeoVerdict,
  type Judgement,
} from './detector.js';
