// `epicsperf setup`: create (or check) the managed Python environment and build the runners of
// other languages (C, C++, Java, Rust) that the clients declare (every client's, or those of
// --clients), side by side where they can be, and without --clients install the Rust gateways
// (the servers ca-gateway-rs and pva-gateway-rs) beside them.
import type { Command } from 'commander';
import { pythonEnvStatus } from '../pyenv/index.js';
import { CLIENTS, prepareRunners } from '../clients/index.js';
import { buildRustGateways } from '../toolchains/cargo.js';
import { exitOnSignals, parseClientList } from './common.js';

export function register(program: Command): void {
  program
    .command('setup')
    .description(
      'create the managed Python environment (the IOC and the Python clients), build the C, C++, Java and Rust runners and install the Rust gateways',
    )
    .option('--force', 'rebuild the Python environment even if it is ready')
    .option('--clients <list>', "only these clients' runners (the Python environment is always made: the IOC runs in it)")
    .action(async (opts: { force?: boolean; clients?: string }) => {
      const clients = opts.clients === undefined ? CLIENTS : parseClientList(opts.clients, 'all');
      // Stopped by a signal, it exits through its exit handlers, which end the builds under way.
      exitOnSignals();
      const gateways = opts.clients === undefined ? buildRustGateways() : undefined;
      const { python, built: runners } = await prepareRunners({ python: { force: opts.force ?? false }, clients });
      const built = gateways ? [...runners, { title: 'Rust gateways', result: await gateways }] : runners;
      const status = pythonEnvStatus();
      process.stdout.write(
        `python environment: ${status.dir ?? python}\ninterpreter: ${python}\n` +
          built.map(({ title, result }) => `${title}: ${'path' in result ? result.path : `not built: ${result.error}`}\n`).join(''),
      );
    });
}
