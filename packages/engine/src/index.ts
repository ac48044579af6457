/**
 * The aggregator's pure counting and ban logic, in a package of its own so that code
 * which must decide exactly as the aggregator does (the control plane's backtest)
 * runs the same code without depending on the aggregator service.
 */
export { observe, observeKeyed, publishCounts, toBanRecord, type DeciderContext, type Observation, type Sighting, type CountingRoute } from './decider.js';
export { LATE, PartitionState, type CountingOptions } from './partition-state.js';
export { countedAt, receivedAt } from './event-time.js';
export { BanLedger } from './ban-ledger.js';
export { BanLifter } from './ban-expiry.js';
export { Outbox, type Drained, type Keyed } from './outbox.js';
export { AppliedOffsets, RepartitionBuffer } from './repartition.js';
export { eventKeyOfSubject, isPartitionLocal, partitionFor, routeOf, type Route } from './routing.js';
export { checkEvent, type CheckedEvent } from './event-check.js';
export { countedEventsDecoder, readsHeaders, type CountedEvent } from './counted-event.js';
export { countedEventsReader, readTail, type CountedEventsReader } from './counted-event-reader.js';
export { EVIDENCE_TOP, EVIDENCE_VALUE_CHARS, EvidenceSample, type EventAtHand } from './evidence.js';
export { eventsAlone, type EventsAloneCodecs } from './events-alone.js';
export { GEO_POLICY_ID, GeoCounts } from './geo-counts.js';
export { emptyReport, GeoWatch, snapshotOf, type GeoWatchDeps, type GeoWatchReport } from './geo-watch.js';
export { nearestThreshold, type HotEntry } from './hot-subjects.js';
