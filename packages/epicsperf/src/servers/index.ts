// A server runner started here (docs/runners.md, Server runners): its command by runtime (the C++,
// Java and Rust ones built on first use, the last two with their language's client runners), free
// ports on loopback, the environment its clients need, posts on command and the post times
// shipped back; a gateway's row starts the server behind it first.
import { join } from 'node:path';
import { startGateway } from '../ioc/gateway.js';
import { PACKAGE_ROOT } from '../home.js';
import type { IocStats } from '../ioc/index.js';
import { freePort } from '../ioc/ports.js';
import type { Meter } from '../procstat.js';
import { RunnerProcess } from '../launch/process.js';
import { pythonModule } from '../pyenv/index.js';
import { buildRustRunners, rustRunnerCommand } from '../toolchains/cargo.js';
import { buildPvxsServer } from '../toolchains/cxxlib.js';
import { buildJavaRunners, javaRunnerCommand } from '../toolchains/jvm.js';
import { type ServerSpec, findServer } from './registry.js';

export * from './registry.js';

export interface ServedPayloads {
  /** Prefix of the PV names (`P:CROSS:DOUBLE` ...). */
  prefix: string;
  int32: readonly number[];
  bytes: readonly number[];
  /** Elements of the round-trip PVs (`P:LATENCY:DOUBLE` and `:CHAR`); none without. */
  latency?: number;
  /** The counters `P:CALC1..N` (none without), posted by the app's ticker at `counterRate` Hz (0 or none: still). */
  counters?: number;
  counterRate?: number;
}

/** A server runner's counts (the built-in IOC's stats fields of the counters). */
export type ServerStats = Pick<IocStats, 'ticks' | 'tickTime' | 'counterValue' | 'time' | 'rampValue'>;

export interface RunningServer {
  spec: ServerSpec;
  version: string | undefined;
  /** What a client needs to reach it (loopback address lists, its ports). */
  clientEnv: Record<string, string>;
  /** Reads its process from outside. */
  meter: Meter;
  /** Its counters' ticks so far. */
  stats(): Promise<ServerStats>;
  /** `P:RAMP` counts at `hz` from now (0: still); with counters. */
  setRamp(hz: number): Promise<void>;
  /** Post `count` updates to `name`, one each `periodMs`; resolves when the last is posted. */
  post(name: string, count: number, periodMs: number): Promise<void>;
  /** (k, wall clock s) of each post since the last ship, in order. */
  ship(): Promise<Map<number, number>>;
  stop(): Promise<void>;
}

/** The command of a server's runner, or why it cannot run here (its build failed). */
async function command(
  spec: ServerSpec,
  python: string,
): Promise<{ command: string; args: string[]; env?: Record<string, string> } | { error: string }> {
  if (spec.runtime === 'node') return { command: process.execPath, args: [join(PACKAGE_ROOT, 'dist', 'runners', 'node-server.js')] };
  if (spec.runtime === 'c++') {
    const built = await buildPvxsServer(python);
    return 'error' in built ? built : { command: built.path, args: [] };
  }
  // Built with the clients' runners of the same language (one build makes them all).
  if (spec.runtime === 'java') {
    const built = await buildJavaRunners();
    return 'error' in built ? built : javaRunnerCommand(spec.main!);
  }
  if (spec.runtime === 'rust') {
    const built = await buildRustRunners();
    return 'error' in built ? built : rustRunnerCommand(spec.main!);
  }
  const m = pythonModule('server_driver');
  return { command: python, args: ['-u', ...m.args, '--server', spec.name], env: m.env };
}

/** Start the server `name` serving `payloads` on free loopback ports; rejects with why it cannot. */
export async function startServer(name: string, python: string, payloads: ServedPayloads): Promise<RunningServer> {
  const spec = findServer(name);
  if (!spec) throw new Error(`no server ${name}`);
  if (spec.gatewayTo) return behindGateway(spec, spec.gatewayTo, python, payloads);
  const cmd = await command(spec, python);
  if ('error' in cmd) throw new Error(cmd.error);
  const taken = new Set<number>();
  const port = async (o: { udp: boolean; tcp: boolean }): Promise<number> => {
    const p = await freePort(o, taken);
    taken.add(p);
    return p;
  };
  const ca = await port({ udp: true, tcp: true });
  const repeater = await port({ udp: true, tcp: false });
  const pva = await port({ udp: false, tcp: true });
  const broadcast = await port({ udp: true, tcp: false });
  const largest = Math.max(1, ...payloads.int32, ...payloads.bytes, payloads.latency ?? 0);
  const clientEnv: Record<string, string> = {
    EPICS_CA_ADDR_LIST: '127.0.0.1',
    EPICS_CA_AUTO_ADDR_LIST: 'NO',
    EPICS_CA_SERVER_PORT: String(ca),
    EPICS_CA_REPEATER_PORT: String(repeater),
    EPICS_CA_MAX_ARRAY_BYTES: String(Math.max(16384, 8 * largest + 4096)),
    EPICS_PVA_ADDR_LIST: '127.0.0.1',
    EPICS_PVA_AUTO_ADDR_LIST: 'NO',
    EPICS_PVA_SERVER_PORT: String(pva),
    EPICS_PVA_BROADCAST_PORT: String(broadcast),
  };
  // The server's own: the same ports under each name a server reads, on loopback only.
  const env = {
    ...clientEnv,
    ...cmd.env,
    EPICS_CAS_INTF_ADDR_LIST: '127.0.0.1',
    EPICS_CAS_SERVER_PORT: String(ca),
    EPICS_PVAS_INTF_ADDR_LIST: '127.0.0.1',
    EPICS_PVAS_SERVER_PORT: String(pva),
    EPICS_PVAS_BROADCAST_PORT: String(broadcast),
  };
  const args = [
    ...cmd.args,
    'serve',
    '--prefix',
    payloads.prefix,
    '--int32',
    payloads.int32.join(','),
    '--bytes',
    payloads.bytes.join(','),
    ...(payloads.latency ? ['--latency', String(payloads.latency)] : []),
    ...(payloads.counters ? ['--counters', String(payloads.counters), '--counter-rate', String(payloads.counterRate ?? 0)] : []),
  ];
  const runner = new RunnerProcess(cmd.command, args, env);
  // Room for a slow library to make 100,000 counters.
  const ready = await runner.next('ready', 60_000 + (payloads.counters ?? 0), 'serving');
  if (ready.server !== name) {
    await runner.kill();
    throw new Error(`the runner started for ${name} said it is ${JSON.stringify(ready.server ?? null)}`);
  }
  return {
    spec,
    version: typeof ready.version === 'string' ? ready.version : undefined,
    clientEnv,
    meter: runner.meter,
    async stats() {
      runner.say('stats');
      const e = await runner.next('stats', 10_000, 'answering stats');
      return {
        ticks: Number(e.ticks),
        tickTime: Number(e.tickTime),
        counterValue: Number(e.counterValue),
        time: Number(e.time),
        ...(e.rampValue !== undefined && { rampValue: Number(e.rampValue) }),
      };
    },
    async setRamp(hz) {
      runner.say(`ramp ${hz}`);
      await runner.next('ramped', 10_000, 'setting the ramp');
    },
    async post(pv, count, periodMs) {
      runner.say(`post ${pv} ${count} ${periodMs}`);
      await runner.next('posted', 30_000 + count * periodMs * 2, `posting to ${pv}`);
    },
    async ship() {
      runner.say('ship');
      const e = await runner.next('posts', 30_000, 'shipping its post times');
      const b = e.payload ?? Buffer.alloc(0);
      const pairs = new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
      const out = new Map<number, number>();
      for (let i = 0; i + 1 < pairs.length; i += 2) out.set(pairs[i]!, pairs[i + 1]!);
      return out;
    },
    stop: () => runner.finish(),
  };
}

/** The server `upstream` with a gateway in front: posts go to the app, clients reach it only
 *  through the gateway, whose process is the one measured. */
async function behindGateway(spec: ServerSpec, upstream: string, python: string, payloads: ServedPayloads): Promise<RunningServer> {
  const app = await startServer(upstream, python, payloads);
  try {
    const gateway = await startGateway(spec.name, python, app.clientEnv, `${payloads.prefix}CROSS:DOUBLE`);
    return {
      ...app,
      spec,
      version: gateway.version,
      clientEnv: { ...app.clientEnv, ...gateway.env },
      meter: gateway.meter,
      stop: async () => {
        await gateway.stop();
        await app.stop();
      },
    };
  } catch (e) {
    await app.stop();
    throw e;
  }
}
