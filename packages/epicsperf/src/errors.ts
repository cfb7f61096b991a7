// The tool's errors (usage, runners, the IOC, the Python environment, stored results): one base
// class with a stable `code` (ERR_EPICSPERF_*), as the library's (ERR_EPICS_*) and epics-ops's
// (ERR_EPICS_OPS_*) have; PV lists and snapshot files are epics-ops's.

export type HarnessErrorCode =
  | 'ERR_EPICSPERF_USAGE'
  | 'ERR_EPICSPERF_RUNNER'
  | 'ERR_EPICSPERF_IOC'
  | 'ERR_EPICSPERF_PYTHON_ENV'
  | 'ERR_EPICSPERF_RESULTS';

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
    return this.code === 'ERR_EPICSPERF_USAGE' || this.code === 'ERR_EPICSPERF_RESULTS';
  }
}

/** Bad command-line input. */
export class UsageError extends HarnessError {
  constructor(message: string) {
    super('ERR_EPICSPERF_USAGE', message);
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
