// `epicsperf setup`: create (or check) the managed Python environment and build the runners of
// other languages (C, C++, Java, Rust) that the clients declare, side by side where they can be.
import type { Command } from 'commander';
import { pythonEnvStatus } from '../pyenv/index.js';
import { CLIENTS, prepareRunners } from '../clients/index.js';
import { exitOnSignals } from './common.js';

export function register(program: Command): void {
  program
    .command('setup')
    .description('create the managed Python environment (the IOC and the Python clients) and build the C, C++, Java and Rust runners')
    .option('--force', 'rebuild the Python environment even if it is ready')
    .action(async (opts: { force?: boolean }) => {
      // Stopped by a signal, it exits through its exit handlers, which end the builds under way.
      exitOnSignals();
      const { python, built } = await prepareRunners({ python: { force: opts.force ?? false }, clients: CLIENTS });
      const status = pythonEnvStatus();
      process.stdout.write(
        `python environment: ${status.dir ?? python}\ninterpreter: ${python}\n` +
          built.map(({ title, result }) => `${title}: ${'path' in result ? result.path : `not built: ${result.error}`}\n`).join(''),
      );
    });
}
