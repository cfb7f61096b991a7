// `epicsperf setup`: create (or check) the managed Python environment.
import type { Command } from 'commander';
import { ensurePythonEnv, pythonEnvStatus } from '../pyenv/index.js';

export function register(program: Command): void {
  program
    .command('setup')
    .description('create the managed Python environment (the IOC and the Python clients) if it is missing')
    .option('--force', 'rebuild it even if it is ready')
    .action(async (opts: { force?: boolean }) => {
      const python = await ensurePythonEnv({ force: opts.force ?? false });
      const status = pythonEnvStatus();
      process.stdout.write(`python environment: ${status.dir ?? python}\ninterpreter: ${python}\n`);
    });
}
