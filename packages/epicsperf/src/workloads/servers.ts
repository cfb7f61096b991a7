// What the server workloads (crossing, storm, headroom and load with --servers) share: the
// `--servers` option and the reference clients that read the servers, one per protocol.
import { InvalidArgumentError, Option } from 'commander';
import { IOC_SERVER } from '../bench/counting.js';
import { type ClientSpec, findClient, type Task } from '../clients/index.js';
import { UsageError } from '../errors.js';
import { SERVER_NAMES, findServer } from '../servers/index.js';
import { listArg } from '../options.js';

/** The reference clients, one per protocol, unless --clients names others. */
export const REFERENCE_CLIENTS = ['c-libca', 'c-pvxs'];

function parseServers(v: string): string[] {
  const list = listArg(v);
  if (list.length === 0) throw new InvalidArgumentError('give at least one server');
  for (const s of list)
    if (s !== IOC_SERVER && !findServer(s))
      throw new InvalidArgumentError(`no server "${s}" (servers: ${[...SERVER_NAMES, IOC_SERVER].join(', ')})`);
  return [...new Set(list)];
}

export const serversOption = new Option(
  '--servers <list>',
  `crossing, storm, headroom, load: servers to compare (${SERVER_NAMES.join(',')}; all but crossing also ${IOC_SERVER}, the built-in IOC's own records on RSRV and QSRV; crossing's and storm's default: all, headroom's and load's: none, the clients' own)`,
).argParser(parseServers);

/** A client whose runner serves every task a workload needs of its reference clients. */
export const servesAll = (c: ClientSpec, tasks: readonly Task[]): boolean => tasks.every((t) => c.tasks.includes(t));

/** The reference clients of a server workload: those of `--clients` (each must serve `tasks`), else REFERENCE_CLIENTS. */
export function referenceClients(workload: string, list: string | undefined, tasks: readonly Task[]): string[] {
  if (list === undefined) return REFERENCE_CLIENTS;
  const names = listArg(list);
  for (const n of names) {
    const c = findClient(n);
    if (!c) throw new UsageError(`no client "${n}"`);
    if (!servesAll(c, tasks))
      throw new UsageError(`${workload}: ${n} does not run the ${tasks.join(' and ')} task a reference client needs`);
  }
  return names;
}

/** The reference client of a protocol among the run's clients: c-libca or c-pvxs where the run
 *  has it, else the first that speaks the protocol and serves the tasks. */
export function referenceFor(ready: readonly ClientSpec[], protocol: 'CA' | 'PVA', tasks: readonly Task[]): ClientSpec | undefined {
  const all = ready.filter((c) => c.protocol === protocol && servesAll(c, tasks));
  return all.find((c) => REFERENCE_CLIENTS.includes(c.name)) ?? all[0];
}
