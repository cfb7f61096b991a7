// The epicsperf command line: parses, configures logging and dispatches; one file per command.
import { Command, Option } from 'commander';
import { configureLogging } from '../log.js';
import { packageVersion } from '../doctor.js';
import { caCommand, diffCommand, restoreCommand, runProgram } from 'epics-ops';
import { HarnessError } from '../errors.js';
import { getLogger } from '../log.js';
import * as doctorCmd from './doctor.js';
import * as iocCmd from './ioc.js';
import * as setupCmd from './setup.js';
import * as snapshotCmd from './snapshot.js';
import * as monitorCmd from './monitor.js';
import * as clientsCmd from './clients.js';
import * as benchCmd from './bench.js';
import * as captureCmd from './capture.js';
import * as latencyCmd from './latency.js';
import * as resultsCmd from './results.js';
import * as reportCmd from './report.js';
import * as compareCmd from './compare.js';
import * as agentCmd from './agent.js';

const program = new Command();
program
  .name('epicsperf')
  .description(
    'Benchmark EPICS clients across runtimes against a real IOC; save, compare and restore snapshots; a fast pure-TypeScript EPICS client',
  )
  .version(packageVersion(), '-V, --version')
  .addOption(
    new Option('--log-level <level>', 'log level on stderr').choices(['trace', 'debug', 'info', 'warn', 'error', 'silent']).default('warn'),
  )
  .option('--log-json', 'logs as JSON lines instead of readable text')
  .exitOverride()
  .configureOutput({ outputError: (str, write) => write(`epicsperf: ${str.trim()}\n`) })
  .hook('preAction', (cmd) => {
    const o = cmd.opts<{ logLevel: 'warn'; logJson?: boolean }>();
    configureLogging({ level: o.logLevel, json: o.logJson ?? false });
  });

const commands = [
  snapshotCmd,
  diffCommand,
  restoreCommand,
  monitorCmd,
  benchCmd,
  latencyCmd,
  captureCmd,
  resultsCmd,
  reportCmd,
  compareCmd,
  caCommand,
  clientsCmd,
  setupCmd,
  doctorCmd,
  iocCmd,
  agentCmd,
];
for (const cmd of commands) cmd.register(program);
await runProgram(program, {
  program: 'epicsperf',
  isInputError: (e) => e instanceof HarnessError && e.isInputError,
  debug: (stack) => getLogger('cli').debug({ stack }, 'error details'),
});
