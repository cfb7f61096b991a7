// `epics-ops`: the operator's commands on epics-client, in this process: snapshot (and --save),
// diff, restore, and caget/caput/camonitor/cainfo as `ca get|put|monitor|info`.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { CliExit, EXIT_USAGE, reportAndExit } from './cli/exit.js';
import * as snapshotCmd from './cli/snapshot.js';
import * as diffCmd from './cli/diff.js';
import * as restoreCmd from './cli/restore.js';
import * as caCmd from './cli/ca.js';

const NAME = 'epics-ops';
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command();
program
  .name(NAME)
  .description('Save, compare and restore EPICS PVs, and read and write them as caget, caput, camonitor and cainfo do, with epics-client')
  .version(version, '-V, --version')
  .exitOverride()
  .configureOutput({ outputError: (str, write) => write(`${NAME}: ${str.trim()}\n`) });
for (const cmd of [snapshotCmd, diffCmd, restoreCmd, caCmd]) cmd.register(program);
for (const sub of program.commands) sub.exitOverride();

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CliExit) {
    // already reported
  } else if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? 0 : EXIT_USAGE;
  } else {
    try {
      reportAndExit(err, { program: NAME });
    } catch {
      // reported
    }
  }
}
