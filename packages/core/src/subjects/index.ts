/**
 * Request attributes and subjects: the one function that turns a request into the
 * subject each policy counts it under. The aggregator and the enforcer both use it,
 * so they cannot disagree on what a subject is.
 */
export { type IpAddress, MAX_IP_TEXT_LENGTH, parseIp, tryParseIp, formatIp, canonicalIpv4, canonicalIpv4At, formatIpv4 } from './ip.js';
export {
  type Cidr,
  EVENT_KEY_PREFIX_BITS,
  networkPrefix,
  networkOf,
  eventPartitionKey,
  ipv4EventPartitionKey,
  parseCidr,
  tryParseCidr,
  cidrContains,
} from './cidr.js';
export {
  MAX_SUBJECT_VALUE_BYTES,
  HASHED_VALUE_PREFIX,
  API_KEY_SUBJECT_HEX_CHARS,
  boundValue,
  hashValue,
  isHashedValue,
  escapeValue,
  unescapeValue,
  hashApiKey,
  normaliseApiKeyHash,
} from './values.js';
export {
  type HeadersInput,
  normaliseMethod,
  normaliseHost,
  normalisePath,
  normaliseHeaders,
  parseCookies,
  statusClass,
} from './normalise.js';
export { isNormalPathBytes } from './path.js';
export {
  DIMENSION_KINDS,
  type DimensionKind,
  type KeyDimension,
  DEFAULT_PREFIX_BITS,
  MAX_DIMENSION_NAME_LENGTH,
  parseDimension,
  formatDimension,
  checkDimension,
  dimensionScope,
  compareDimensions,
  parseKey,
} from './dimensions.js';
export {
  type RequestAttributes,
  type RequestEventInput,
  type RequestInput,
  attributesFromEvent,
  attributesFromRequest,
} from './attributes.js';
export {
  type KeyParts,
  type SubjectFn,
  SUBJECT_SEPARATOR,
  compileKey,
  keyParts,
  subjectFor,
  ipSubjectOf,
  userSubjectOf,
  apiKeySubjectOf,
  addressSubject,
} from './subject.js';
export { canonicalSubject, networkSubject, responseOnlyScope } from './canonical.js';
export {
  type SubjectPart,
  MAX_SUBJECT_TEXT_LENGTH,
  parseSubject,
  formatSubject,
  normaliseSubject,
  subjectScope,
} from './subject-text.js';
