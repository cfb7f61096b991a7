// The tool's errors share one base class with a stable code; input errors are told apart.
import { describe, expect, it } from 'vitest';
import { HarnessError, IocError, PythonEnvError, ResultsFileError, RunnerError, UsageError } from '../../src/errors.js';

describe('harness errors', () => {
  it('each has its code and name, and only usage and results-file errors are input errors', () => {
    const cases: [HarnessError, string, boolean][] = [
      [new UsageError('u'), 'ERR_EPICSPERF_USAGE', true],
      [new ResultsFileError('f'), 'ERR_EPICSPERF_RESULTS', true],
      [new RunnerError('r'), 'ERR_EPICSPERF_RUNNER', false],
      [new IocError('i'), 'ERR_EPICSPERF_IOC', false],
      [new PythonEnvError('y'), 'ERR_EPICSPERF_PYTHON_ENV', false],
    ];
    for (const [err, code, input] of cases) {
      expect(err).toBeInstanceOf(HarnessError);
      expect(err.code).toBe(code);
      expect(err.isInputError).toBe(input);
      expect(err.name).toBe(err.constructor.name);
    }
  });
});
