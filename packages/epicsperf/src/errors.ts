// The harness's errors (usage, PV lists, runners, the IOC, the Python environment): one base
// class with a stable `code`, as the library's errors have (src/client/errors.ts).

export type HarnessErrorCode =
  | 'ERR_EPICSPERF_USAGE'
  | 'ERR_EPICSPERF_PV_LIST'
  | 'ERR_EPICSPERF_RUNNER'
  | 'ERR_EPICSPERF_IOC'
  | 'ERR_EPICSPERF_PYTHON_ENV'
  | 'ERR_EPICSPERF_RESULTS'
  | 'ERR_EPICSPERF_SNAPSHOT_FILE';

/** Base class of every error the harness reports. */
export class HarnessError extends Error {
  constructor(
    readonly code: HarnessErrorCode,
    message: string,
  ) {
    super(message);
  }
  override get name(): string {
    return this.constructor.name;
  }
  /** True when the user's input was at fault (the CLI exits with code 2). */
  get isInputError(): boolean {
    return (
      this.code === 'ERR_EPICSPERF_USAGE' ||
      this.code === 'ERR_EPICSPERF_PV_LIST' ||
      this.code === 'ERR_EPICSPERF_RESULTS' ||
      this.code === 'ERR_EPICSPERF_SNAPSHOT_FILE'
    );
  }
}

/** Bad command-line input. */
export class UsageError extends HarnessError {
  constructor(message: string) {
    super('ERR_EPICSPERF_USAGE', message);
  }
}

/** A PV list that cannot be used: unreadable, empty, a bad name or a duplicate. */
export class PvListError extends HarnessError {
  constructor(message: string) {
    super('ERR_EPICSPERF_PV_LIST', message);
  }
}

/** A snapshot file that cannot be read or written: unreadable, of no known format, malformed. */
export class SnapshotFileError extends HarnessError {
  constructor(message: string) {
    super('ERR_EPICSPERF_SNAPSHOT_FILE', message);
  }
}

/** A client's runner process broke the runner protocol, crashed, or passed its deadline. */
export class RunnerError extends HarnessError {
  constructor(message: string) {
    super('ERR_EPICSPERF_RUNNER', message);
  }
}

/** The built-in IOC could not start or be reached. */
export class IocError extends HarnessError {
  constructor(message: string) {
    super('ERR_EPICSPERF_IOC', message);
  }
}

/** The managed Python environment could not be created or used. */
export class PythonEnvError extends HarnessError {
  constructor(message: string) {
    super('ERR_EPICSPERF_PYTHON_ENV', message);
  }
}

/** A stored results file that cannot be read: missing, not JSON, or of another format version. */
export class ResultsFileError extends HarnessError {
  constructor(message: string) {
    super('ERR_EPICSPERF_RESULTS', message);
  }
}
