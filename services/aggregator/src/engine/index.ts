/**
 * The aggregator's pure counting and ban logic, for code that must decide exactly
 * as the aggregator does without running it (the control plane's backtest).
 */
export { observe, toBanRecord, type DeciderContext, type Observation } from './decider.js';
export { LATE, PartitionState, type CountingOptions } from './partition-state.js';
export { countedAt, receivedAt } from './event-time.js';
export { BanLedger } from './ban-ledger.js';
export { Outbox, type Keyed } from './outbox.js';
export { RepartitionBuffer } from './repartition.js';
export { routeOf, isPartitionLocal, partitionFor, type Route } from './routing.js';
export { checkEvent, type CheckedEvent } from './event-check.js';
export { countedEventsDecoder, readsHeaders, type CountedEvent } from './counted-event.js';
