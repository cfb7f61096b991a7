// A host the harness runs clients and the IOC on: this one, or another one through its agent
// (src/hosts/remote.ts). Workloads start runners and IOCs only through this.
import type { Runner } from '../launch/process.js';
import type { Ioc, IocOptions } from '../ioc/index.js';
import type { EnvironmentReport } from '../results/index.js';

/** The name of the host the orchestrator runs on. */
export const LOCAL = 'local';

/** A runner to start: one of the project's clients on one task, never an arbitrary command. */
export interface RunnerRequest {
  /** A client's name (clients.json). */
  client: string;
  /** The runner's task (docs/runners.md). */
  task: string;
  /** The task's options after `--names FILE`. */
  args: readonly string[];
  /** The PVs, handed to the runner as its names file. */
  names: readonly string[];
  /** EPICS_* variables that reach the IOC from this host. */
  env: Readonly<Record<string, string>>;
}

export interface Host {
  /** `local`, or the name given in `--hosts`. */
  readonly name: string;
  /** Where it is: this machine's name, or the agent's endpoint. */
  readonly address: string;
  /** Make these clients runnable there (the Python environment, the C runners), once. */
  prepare(clients: readonly string[], referee: boolean): Promise<void>;
  startRunner(request: RunnerRequest): Runner;
  /** The built-in IOC on this host; on another host it serves every interface on the default ports. */
  startIoc(options: IocOptions): Promise<Ioc>;
  /** The host's environment report (`epicsperf doctor`). */
  doctor(): Promise<EnvironmentReport>;
  close(): Promise<void>;
}
