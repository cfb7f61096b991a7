// `epicsperf setup`: create (or check) the managed Python environment and build the runners of
// other languages (C, C++, Java, Rust) that the clients declare.
import type { Command } from 'commander';
import { ensurePythonEnv, pythonEnvStatus } from '../pyenv/index.js';
import { buildCRunner } from '../toolchains/clib.js';
import { buildPvxsRunner } from '../toolchains/cxxlib.js';
import { buildRunners, CLIENTS } from '../clients/index.js';

export function register(program: Command): void {
  program
    .command('setup')
    .description('create the managed Python environment (the IOC and the Python clients) and build the C, C++, Java and Rust runners')
    .option('--force', 'rebuild the Python environment even if it is ready')
    .action(async (opts: { force?: boolean }) => {
      const python = await ensurePythonEnv({ force: opts.force ?? false });
      const status = pythonEnvStatus();
      const c = await buildCRunner(python);
      const p = await buildPvxsRunner(python);
      const built = await buildRunners(CLIENTS);
      process.stdout.write(
        `python environment: ${status.dir ?? python}\ninterpreter: ${python}\n` +
          ('path' in c ? `C runner (c-libca): ${c.path}\n` : `C runner (c-libca): not built: ${c.error}\n`) +
          ('path' in p ? `C++ runner (c-pvxs): ${p.path}\n` : `C++ runner (c-pvxs): not built: ${p.error}\n`) +
          Object.entries(built)
            .map(([runtime, r]) => `${runtime === 'java' ? 'Java' : 'Rust'} runners: ${'path' in r ? r.path : `not built: ${r.error}`}\n`)
            .join(''),
      );
    });
}
