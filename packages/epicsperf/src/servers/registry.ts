// The servers the server workloads compare (`bench crossing --servers`): each an app that publishes
// PVs through one runtime's server API and posts on command, a *server runner*
// (docs/runners.md, Server runners). One declaration per server; how each starts is in index.ts.
export type ServerProtocol = 'CA' | 'PVA';

export interface ServerSpec {
  /** What `--servers` takes, and what its runner's `ready` names. */
  name: string;
  runtime: 'node' | 'python' | 'c++' | 'java' | 'rust';
  /** The main class (java) or binary (rust) of its runner, built with the clients' runners. */
  main?: string;
  protocols: readonly ServerProtocol[];
  /** The library its version is of. */
  library: string;
  description: string;
  /** A gateway: the server it stands in front of (started first, reached only through it). */
  gatewayTo?: string;
}

export const SERVERS: readonly ServerSpec[] = [
  {
    name: 'node',
    runtime: 'node',
    protocols: ['CA', 'PVA'],
    library: 'epics-client',
    description: "this project's server (epics-client/server), in Node",
  },
  {
    name: 'softioc',
    runtime: 'python',
    protocols: ['CA', 'PVA'],
    library: 'softioc',
    description: "pythonSoftIOC's builder records set from Python, served by EPICS base's RSRV and QSRV (the built-in IOC's servers)",
  },
  {
    name: 'pvxs',
    runtime: 'c++',
    protocols: ['PVA'],
    library: 'pvxslibs',
    description: "pvxs's SharedPV in C++, on the wheel's libpvxs",
  },
  {
    name: 'p4p',
    runtime: 'python',
    protocols: ['PVA'],
    library: 'p4p',
    description: "p4p's SharedPV (Python, on pvxs)",
  },
  {
    name: 'caproto',
    runtime: 'python',
    protocols: ['CA'],
    library: 'caproto',
    description: "caproto's asyncio server (pure Python)",
  },
  {
    name: 'corepva',
    runtime: 'java',
    main: 'epicsperf.CorePvaServer',
    protocols: ['PVA'],
    library: 'core-pva',
    description: "Phoebus core-pva's PVAServer (pure Java PV Access)",
  },
  {
    name: 'epics-rs',
    runtime: 'rust',
    main: 'epicsperf-rust-server',
    protocols: ['CA', 'PVA'],
    library: 'epics-ca-rs',
    description: "epics-rs's servers (epics-ca-rs and epics-pva-rs, pure Rust on tokio) serving the same PVs",
  },
  {
    name: 'pvagw',
    runtime: 'python',
    protocols: ['PVA'],
    library: 'p4p',
    gatewayTo: 'softioc',
    description:
      "p4p's PV Access gateway (pvagw) in front of softioc's app (crossing) or the built-in IOC (headroom): what a gateway adds, its CPU as the server's",
  },
  {
    name: 'ca-gateway-rs',
    runtime: 'rust',
    protocols: ['CA'],
    library: 'epics-bridge-rs',
    gatewayTo: 'softioc',
    description:
      "epics-rs's CA gateway (ca-gateway-rs, a port of EPICS ca-gateway; crates.io's epics-bridge-rs, installed on first use) in front of softioc's app (crossing) or the built-in IOC (headroom)",
  },
  {
    name: 'pva-gateway-rs',
    runtime: 'rust',
    protocols: ['PVA'],
    library: 'epics-bridge-rs',
    gatewayTo: 'softioc',
    description:
      "epics-rs's PV Access gateway (pva-gateway-rs, after pva2pva; crates.io's epics-bridge-rs, installed on first use) in front of softioc's app (crossing) or the built-in IOC (headroom)",
  },
];

export const SERVER_NAMES = SERVERS.map((s) => s.name);

export function findServer(name: string): ServerSpec | undefined {
  return SERVERS.find((s) => s.name === name);
}
