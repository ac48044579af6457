import { checkedCost } from '../cost.js';
import { BanstreamError } from '../errors.js';
import { invalidIp, parseIp, type IpAddress } from './ip.js';
import { isValidAsn, isValidStatus, normaliseGeo, normaliseHeaders, normaliseHost, normaliseMethod, normalisePath, normaliseStatus, ownValue, parseCookies, type HeadersInput } from './normalise.js';
import { hashApiKey, normaliseApiKeyHash } from './values.js';

/**
 * The normalised view of one request, the only input of subjectFor. Build it with
 * attributesFromEvent (aggregator) or attributesFromRequest (enforcer): both apply
 * the same normalisation, which is what makes their subjects agree.
 */
export interface RequestAttributes {
  /** Canonical text (see parseIp): IPv4-mapped addresses are IPv4. */
  readonly ip: string;
  /** The parsed address, kept so prefix subjects need no second parse. */
  readonly ipAddress?: IpAddress | undefined;
  /** Upper case. */
  readonly method: string;
  /** Lower case, without port. */
  readonly host: string;
  /** Without query string. */
  readonly path: string;
  readonly route?: string | undefined;
  /** Undefined before the response exists (the enforcer) or when the client went away. */
  readonly status?: number | undefined;
  readonly userId?: string | undefined;
  /** Lower-case hex SHA-256 of the API key. */
  readonly apiKeyHash?: string | undefined;
  /** Lower-case names; a prototype-less object. */
  readonly headers: Readonly<Record<string, string>>;
  readonly cookies?: Readonly<Record<string, string>> | undefined;
  /** ISO 3166-1 alpha-2, upper case. */
  readonly country?: string | undefined;
  /** ISO 3166-2, upper case. */
  readonly region?: string | undefined;
  readonly asn?: number | undefined;
  /** Event time, ms since the Unix epoch. */
  readonly timestamp: number;
  /**
   * What the request counts for (1 to MAX_COST), as the event or the caller of check()
   * gave it; a policy's `costs` may replace it (CompiledPolicy.costOf). Undefined: 1.
   */
  readonly cost?: number | undefined;
}

/**
 * The fields of the Avro RequestEvent (schemas/avro/request-event), declared here
 * structurally because core does not depend on @banstream/schemas. Subjects never
 * use the event id, edge id or latency, so readers may leave them out.
 */
export interface RequestEventInput {
  eventId?: string;
  timestamp: number;
  ip: string;
  country: string | null;
  region: string | null;
  asn: number | null;
  method: string;
  host: string;
  path: string;
  route: string | null;
  status: number;
  userId: string | null;
  apiKeyHash: string | null;
  /** Readers that skip the headers (no policy reads them) leave this out: no headers. */
  headers?: Readonly<Record<string, string>>;
  edgeId?: string;
  latencyMs?: number | null;
  /** Absent from v1 records, and from readers' projections of them: 1. */
  cost?: number;
}

/** What an enforcer knows about a request it is asked about. */
export interface RequestInput {
  ip: string;
  method: string;
  /** The Host header or authority; a port is stripped. */
  host: string;
  /** A query string, if any, is stripped. */
  path: string;
  route?: string | null | undefined;
  status?: number | null | undefined;
  /** Node's IncomingHttpHeaders fit; cookies are read from the Cookie header. */
  headers?: HeadersInput | undefined;
  /** The clear API key: hashed here (hashApiKey), never kept. */
  apiKey?: string | null | undefined;
  userId?: string | null | undefined;
  country?: string | null | undefined;
  region?: string | null | undefined;
  asn?: number | null | undefined;
  /** What the request counts for, 1 to MAX_COST (default 1); anything else throws COST_OUT_OF_RANGE. */
  cost?: number | null | undefined;
  /** From the caller's clock: pure code does not read the time. */
  timestamp: number;
}

/**
 * Attributes of a published event. Throws a BanstreamError (SUBJECT_INVALID_IP,
 * SUBJECT_INVALID_ATTRIBUTE or COST_OUT_OF_RANGE) for an event no edge should have sent, so the
 * aggregator can send it to the DLQ with that reason.
 */
export function attributesFromEvent(event: RequestEventInput): RequestAttributes {
  let apiKeyHash: string | undefined;
  if (event.apiKeyHash !== null && event.apiKeyHash !== undefined) {
    apiKeyHash = normaliseApiKeyHash(event.apiKeyHash);
    if (apiKeyHash === undefined) throw invalidAttribute('apiKeyHash', 'is not a hex SHA-256 (64 hex digits)');
  }
  return build(event, event.timestamp, event.route, event.status, event.headers, apiKeyHash, event.cost);
}

/**
 * Attributes of a live request, for the enforcer. Throws like attributesFromEvent.
 * `timestamp` may come apart from the request (the enforcer's clock), so a caller
 * need not copy the request to add it: in Node 20, adding a property to an object
 * made by spread costs about 700 ns and leaves an object slow to read.
 */
export function attributesFromRequest(request: Omit<RequestInput, 'timestamp'> & { timestamp?: number }, timestamp = request.timestamp): RequestAttributes {
  const apiKey = request.apiKey;
  const apiKeyHash = apiKey === undefined || apiKey === null || apiKey.length === 0 ? undefined : hashApiKey(apiKey);
  return build(request, timestamp, request.route, request.status, request.headers, apiKeyHash, request.cost);
}

type CommonInput = Pick<RequestInput, 'ip' | 'method' | 'host' | 'path' | 'userId' | 'country' | 'region' | 'asn'>;

function build(
  input: CommonInput,
  timestamp: number | undefined,
  route: string | null | undefined,
  rawStatus: number | null | undefined,
  rawHeaders: HeadersInput | undefined,
  apiKeyHash: string | undefined,
  rawCost: number | null | undefined,
): RequestAttributes {
  if (typeof input.ip !== 'string') throw invalidIp(input.ip, 'not a string');
  const ipAddress = parseIp(input.ip);
  const status = normaliseStatus(rawStatus);
  if (status !== undefined && !isValidStatus(status)) throw invalidAttribute('status', `${String(status)} is not an HTTP status (100–999, or 0 for none)`);
  const asn = input.asn ?? undefined;
  if (asn !== undefined && !isValidAsn(asn)) throw invalidAttribute('asn', `${String(asn)} is not an unsigned 32-bit integer`);
  if (timestamp === undefined || !Number.isFinite(timestamp)) throw invalidAttribute('timestamp', `${String(timestamp)} is not a time in ms`);
  if (typeof input.method !== 'string') throw invalidAttribute('method', 'is not a string');
  if (typeof input.host !== 'string') throw invalidAttribute('host', 'is not a string');
  if (typeof input.path !== 'string') throw invalidAttribute('path', 'is not a string');
  const cost = rawCost === 1 || rawCost === undefined ? 1 : checkedCost(rawCost);
  return new Attributes(
    ipAddress.text,
    ipAddress,
    normaliseMethod(input.method),
    normaliseHost(input.host),
    normalisePath(input.path),
    route === null || route === undefined || route.length === 0 ? undefined : route,
    status,
    input.userId === null || input.userId === undefined || input.userId.length === 0 ? undefined : input.userId,
    apiKeyHash,
    normaliseGeo(input.country),
    normaliseGeo(input.region),
    asn,
    timestamp,
    cost,
    rawHeaders,
  );
}

/**
 * Headers and cookies are normalised when first read, and most checks never read them
 * (only policies matching or keyed on a header or cookie do): a browser's dozen
 * headers cost about 1 µs to copy into a prototype-less map, and its cookies 250 ns to
 * parse. So the caller's headers must not change until the request is decided. A
 * class, not an object literal with getters: V8 builds such a literal in about 1 µs.
 */
class Attributes implements RequestAttributes {
  #rawHeaders: HeadersInput | undefined;
  #headers: Record<string, string> | undefined = undefined;
  #cookies: Record<string, string> | undefined | null = null;

  constructor(
    readonly ip: string,
    readonly ipAddress: IpAddress,
    readonly method: string,
    readonly host: string,
    readonly path: string,
    readonly route: string | undefined,
    readonly status: number | undefined,
    readonly userId: string | undefined,
    readonly apiKeyHash: string | undefined,
    readonly country: string | undefined,
    readonly region: string | undefined,
    readonly asn: number | undefined,
    readonly timestamp: number,
    readonly cost: number,
    rawHeaders: HeadersInput | undefined,
  ) {
    this.#rawHeaders = rawHeaders;
  }

  get headers(): Readonly<Record<string, string>> {
    return (this.#headers ??= normaliseHeaders(this.#rawHeaders));
  }

  get cookies(): Readonly<Record<string, string>> | undefined {
    if (this.#cookies === null) this.#cookies = parseCookies(ownValue(this.headers, 'cookie'));
    return this.#cookies;
  }
}

function invalidAttribute(field: string, reason: string): BanstreamError {
  return new BanstreamError('SUBJECT_INVALID_ATTRIBUTE', `invalid request attribute ${field}: ${reason}`, { details: { field, reason } });
}
