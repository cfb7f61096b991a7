// `epics-ops`: the operator's commands on epics-client, in this process: snapshot (and --save),
// diff, restore, caget/caput/camonitor/cainfo as `ca get|put|monitor|info`, and serve (a snapshot's PVs published).
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { runProgram } from './cli/exit.js';
import * as snapshotCmd from './cli/snapshot.js';
import * as diffCmd from './cli/diff.js';
import * as restoreCmd from './cli/restore.js';
import * as caCmd from './cli/ca.js';
import * as serveCmd from './cli/serve.js';

const NAME = 'epics-ops';
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

const program = new Command();
program
  .name(NAME)
  .description('Save, compare and restore EPICS PVs, and read and write them as caget, caput, camonitor and cainfo do, with epics-client')
  .version(version, '-V, --version')
  .exitOverride()
  .configureOutput({ outputError: (str, write) => write(`${NAME}: ${str.trim()}\n`) });
for (const cmd of [snapshotCmd, diffCmd, restoreCmd, caCmd, serveCmd]) cmd.register(program);
await runProgram(program, { program: NAME });
