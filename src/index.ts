// The public API of epicsperf as a library: the Channel Access client (Context, snapshot),
// its options and result types, and its error classes.
export { Context } from './client/context.js';
export { snapshot } from './client/standalone.js';
export {
  Monitor, type MonitorOptions, type MonitorEvent, type MonitorCallback, type ConnectionEvent, type AccessRightsEvent,
  type MonitorErrorEvent,
} from './client/monitor.js';
export type {
  GetForm, ReadingOf, AnyReading, PlainReading, StsReading, TimeReading, GrReading, CtrlReading, FullReading,
} from './client/reading.js';
export type { ChannelInfo } from './client/info.js';
export type { SnapshotOptions, SnapshotResult, SnapshotSuccess, SnapshotFailure } from './client/snapshot.js';
export type { CallOptions, ReadOptions, GetOptions, PutOptions, PutValue } from './client/options.js';
export type { ContextOptions } from './transport/config.js';
export { Reading, type CaValue, type CaArray, type DbrMetadata } from './ca/dbr.js';
export type { FormName, NativeTypeName } from './ca/constants.js';
export {
  CaError, TimeoutError, DisconnectedError, NotFoundError, AccessDeniedError, RemoteError, ProtocolError,
  ClosedError, BadArgumentError, AbortedError, type CaErrorCode,
} from './client/errors.js';
export { DBE_VALUE, DBE_LOG, DBE_ALARM, DBE_PROPERTY, SEVERITY_NAMES, ALARM_STATUS_NAMES } from './ca/constants.js';
