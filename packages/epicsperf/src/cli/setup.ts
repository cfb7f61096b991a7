// `epicsperf setup`: create (or check) the managed Python environment and build the C runner.
import type { Command } from 'commander';
import { ensurePythonEnv, pythonEnvStatus } from '../pyenv/index.js';
import { buildCRunner } from '../clients/clib.js';
import { buildPvxsRunner } from '../clients/cxxlib.js';

export function register(program: Command): void {
  program
    .command('setup')
    .description('create the managed Python environment (the IOC and the Python clients) and build the C libca runner')
    .option('--force', 'rebuild the Python environment even if it is ready')
    .action(async (opts: { force?: boolean }) => {
      const python = await ensurePythonEnv({ force: opts.force ?? false });
      const status = pythonEnvStatus();
      const c = await buildCRunner(python);
      const p = await buildPvxsRunner(python);
      process.stdout.write(
        `python environment: ${status.dir ?? python}\ninterpreter: ${python}\n` +
          ('path' in c ? `C runner (c-libca): ${c.path}\n` : `C runner (c-libca): not built: ${c.error}\n`) +
          ('path' in p ? `C++ runner (c-pvxs): ${p.path}\n` : `C++ runner (c-pvxs): not built: ${p.error}\n`),
      );
    });
}
