// Save, compare and restore: a machine's settings saved from a Context (CA and PVA names alike),
// compared with another save or with the live machine within a tolerance, written back with
// completion and read back; this project's snapshot file, and the formats control rooms use.
export type { SavedPv, SavedValue, SaveSet, SaveSetMeta, Tolerance } from './types.js';
export { save, type SaveOptions } from './save.js';
export {
  compare,
  compareLive,
  type CompareOptions,
  type LiveCompareOptions,
  type Diff,
  type DiffStatus,
  type DiffSummary,
  type PvDiff,
  type ToleranceRule,
} from './compare.js';
export {
  restore,
  type RestoreOptions,
  type RestoreReport,
  type RestorePlan,
  type RestoreOutcome,
  type RestoreCode,
  type PvRestore,
  type RestoreSummary,
} from './restore.js';
export { parseSnapshot, writeSnapshot, isNativeSnapshot, FORMAT_NAME, FORMAT_VERSION } from './native.js';
export {
  SNAPSHOT_FORMATS,
  snapshotFormatOf,
  snapshotFormatForName,
  isAutosaveReq,
  parsePhoebusCsv,
  writePhoebusCsv,
  parsePsiSnap,
  writePsiSnap,
  parseAutosaveSav,
  writeAutosaveSav,
  parseAutosaveReq,
  type SnapshotFormat,
  type SnapshotFormatId,
  type PhoebusCsvOptions,
  type AutosaveReqOptions,
} from './formats/index.js';
