// This host as a place to run clients and the IOC: runners are child processes, measured here.
// An agent (src/agent) serves another host with one of these.
import { hostname } from 'node:os';
import { RunnerProcess, type Runner } from '../launch/process.js';
import { writeNamesFile } from '../launch/names.js';
import { startIoc, type Ioc, type IocOptions } from '../ioc/index.js';
import { doctor } from '../doctor.js';
import { LOCAL, type Host, type RunnerRequest } from './host.js';
import type { EnvironmentReport } from '../results/index.js';
import { findClient, prepareClients, runnerCommand } from '../clients/index.js';

export class LocalHost implements Host {
  readonly address = hostname();

  /** `python`: the interpreter of the managed environment, when it is known already. */
  constructor(
    private python?: string,
    readonly name = LOCAL,
  ) {}

  async prepare(clients: readonly string[], referee: boolean): Promise<void> {
    const specs = clients.map((c) => findClient(c)).filter((c) => c !== undefined);
    // The IOC may be asked for too: the managed Python environment is always made.
    this.python = await prepareClients(specs, true, referee);
  }

  startRunner(r: RunnerRequest): Runner {
    // A name of no client of the registry goes to the Python runner, which says it does not know it.
    const { command, args, env } = runnerCommand({ name: r.client }, this.python ?? 'python3', r.task);
    const names = writeNamesFile(r.names);
    const runner = new RunnerProcess(command, [...args, r.task, '--names', names.path, ...r.args], { ...r.env, ...env }, r.client);
    void runner.exited.then(() => names.remove());
    return runner;
  }

  startIoc(options: IocOptions): Promise<Ioc> {
    return startIoc({ ...(this.python !== undefined && { python: this.python }), ...options });
  }

  doctor(): Promise<EnvironmentReport> {
    return doctor();
  }

  async close(): Promise<void> {}
}
