// epics-ops as a library: the commands, to register on a program of one's own (epicsperf does),
// and what they are made of: PV lists and snapshot files of every format, a list read once,
// the reports, the shared options, the errors.
export * as caCommand from './cli/ca.js';
export * as diffCommand from './cli/diff.js';
export * as restoreCommand from './cli/restore.js';
export { addSnapshotOptions, exitOnSignals, readHere, saveSnapshot, type SnapshotOpts } from './cli/snapshot.js';
export { CliExit, EXIT_FAILURE, EXIT_USAGE, type ExitOptions, reportAndExit, runProgram } from './cli/exit.js';
export { protocolOption, withSavesetContext } from './cli/saveset-common.js';
export { OpsError, type OpsErrorCode, PvListError, SnapshotFileError, UsageError } from './errors.js';
export * from './files.js';
export * from './pvlist.js';
export * from './read.js';
export * from './snapshot-report.js';
export * from './saveset-report.js';
export * from './table.js';
export * from './options.js';
export { writeAtomic } from './atomic.js';
export { clientVersion } from './version.js';
