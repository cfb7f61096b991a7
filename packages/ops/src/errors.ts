// The operator commands' errors: one base class with a stable `code` (ERR_EPICS_OPS_*), as the
// library's (ERR_EPICS_*) and the benchmark tool's (ERR_EPICSPERF_*) have.

export type OpsErrorCode = 'ERR_EPICS_OPS_USAGE' | 'ERR_EPICS_OPS_PV_LIST' | 'ERR_EPICS_OPS_SNAPSHOT_FILE';

/** Base class of every error the operator commands report; each is the user's input at fault
 *  (the command exits with code 2). */
export class OpsError extends Error {
  constructor(
    readonly code: OpsErrorCode,
    message: string,
  ) {
    super(message);
  }
  override get name(): string {
    return this.constructor.name;
  }
}

/** Bad command-line input. */
export class UsageError extends OpsError {
  constructor(message: string) {
    super('ERR_EPICS_OPS_USAGE', message);
  }
}

/** A PV list that cannot be used: unreadable, empty, a bad name or a duplicate. */
export class PvListError extends OpsError {
  constructor(message: string) {
    super('ERR_EPICS_OPS_PV_LIST', message);
  }
}

/** A snapshot file that cannot be read or written: unreadable, of no known format, malformed. */
export class SnapshotFileError extends OpsError {
  constructor(message: string) {
    super('ERR_EPICS_OPS_SNAPSHOT_FILE', message);
  }
}
