// The public API of epics-client: the Channel Access and PV Access client (Context, snapshot), its
// options, configuration and result types, and its error classes. The codecs are in ./ca and ./pva.
export { Context, type Protocol, type ProtocolReading } from './client/context.js';
export { PvaReading, type PvaValue } from './client/pva/reading.js';
export type { PvaReadOptions, PvaPutOptions, PvaRpcOptions, RpcArgument } from './client/pva/api.js';
export type { PvaMonitorOptions } from './client/pva/monitor.js';
export type { PvaSnapshotOptions } from './client/pva/snapshot.js';
export type { PvaRequest } from './client/pva/ops.js';
export type { PvaPutValue } from './pva/fields.js';
export type { NTValue, Alarm, TimeStamp, Display, Control } from './pva/nt.js';
export type { NumericArray, PvStructure, PvUnion, PvAny, PvValue } from './pva/values.js';
export type {
  FieldDesc,
  StructureDesc,
  ScalarDesc,
  ScalarArrayDesc,
  UnionDesc,
  StructureArrayDesc,
  UnionArrayDesc,
  AnyDesc,
  AnyArrayDesc,
  FieldEntry,
  ScalarType,
} from './pva/types.js';
export type { PvRequestOptions } from './pva/pvrequest.js';
export { snapshot } from './client/standalone.js';
export {
  Monitor,
  type MonitorOptions,
  type MonitorEvent,
  type MonitorCallback,
  type ConnectionEvent,
  type ConnectedEvent,
  type CaConnectedEvent,
  type PvaConnectedEvent,
  type DisconnectedEvent,
  type AccessRightsEvent,
  type MonitorErrorEvent,
} from './client/monitor.js';
export type {
  GetForm,
  ReadingOf,
  AnyReading,
  PlainReading,
  StsReading,
  TimeReading,
  GrReading,
  CtrlReading,
  FullReading,
} from './client/ca/reading.js';
export type { ChannelInfo } from './client/ca/info.js';
export type { SnapshotOptions, SnapshotResult, SnapshotSuccess, SnapshotFailure } from './client/snapshot.js';
export type { CallOptions, ReadOptions, GetOptions, PutOptions, PutValue } from './client/options.js';
export type { ContextOptions, Endpoint, SearchDestination } from './transport/config.js';
export type { CaConfig } from './transport/ca/config.js';
export type { PvaConfig, PvaTlsConfig } from './transport/pva/config.js';
export type { PvaManagerStats, PvaConnectionStats } from './client/pva/manager.js';
export type { ManagerStats as ContextStats } from './client/channel-cache.js';
export type { DestinationStats } from './transport/search-scheduler.js';
export type { NameServerStats } from './transport/name-servers.js';
export type { PvaAddress } from './transport/addresses.js';
export { Reading, type CaValue, type CaArray, type DbrMetadata } from './ca/dbr.js';
export type { FormName, NativeTypeName } from './ca/constants.js';
export {
  EpicsError,
  TimeoutError,
  DisconnectedError,
  NotFoundError,
  AccessDeniedError,
  RemoteError,
  ProtocolError,
  ClosedError,
  BadArgumentError,
  AbortedError,
  TlsError,
  type EpicsErrorCode,
  type TlsErrorCode,
} from './client/errors.js';
export { DBE_VALUE, DBE_LOG, DBE_ALARM, DBE_PROPERTY, SEVERITY_NAMES, ALARM_STATUS_NAMES } from './ca/constants.js';
export { LOG_LEVELS, logChannelName, type LogLevel, type LogRecord } from './log.js';
