// Runner for the `epics-tca` npm package (the other pure-TypeScript CA client), used as its
// README shows: one Context, createChannel() per name, then channel.get() or createMonitor().
//
// Snapshot: every name at once: createChannel(name, 'ca', timeout) and then get(timeout,
// DBR_TIME of the native type), so missing PVs together cost one timeout. Monitor:
// createMonitor(listener, DBR_TIME_DOUBLE, DBE_VALUE|DBE_ALARM) per channel; the listener
// reads the channel's latest DBR data. epics-tca reports neither "not found" nor a reason
// for a failed get (both resolve to undefined): a channel not created within the timeout is
// reported as "not found", a get that resolved to nothing as "timeout".
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { emit, fail, onCommand } from './protocol.js';
import { nowSeconds } from '../clock.js';
import { parseRunnerArgs, type RunnerArgs } from './args.js';
import { SampleStore } from '../bench/samples.js';

type Tca = typeof import('epics-tca');
type TcaContext = InstanceType<Tca['Context']>;
type TcaChannel = NonNullable<Awaited<ReturnType<TcaContext['createChannel']>>>;
type TcaMonitor = NonNullable<Awaited<ReturnType<TcaChannel['createMonitor']>>>;

/** Seconds between the POSIX and EPICS epochs (1970 and 1990). */
const EPICS_EPOCH = 631152000;
const DBR_TIME_DOUBLE = 20;
const DBE_VALUE = 1;
const DBE_ALARM = 4;
const LOG_ERROR = 4;

async function loadTca(): Promise<{ tca: Tca; version: string }> {
  try {
    const mod = (await import('epics-tca')) as Tca & { default?: Tca };
    const require = createRequire(import.meta.url);
    const pkg = JSON.parse(readFileSync(require.resolve('epics-tca/package.json'), 'utf8')) as { version: string };
    return { tca: mod.default ?? mod, version: pkg.version };
  } catch {
    fail('epics-tca is not installed', 3);
  }
}

interface Meta {
  value: unknown;
  severity?: number;
  status?: number;
  secondsSinceEpoch?: number;
  nanoSeconds?: number;
}

function stampOf(d: Meta): number {
  return (d.secondsSinceEpoch ?? 0) + EPICS_EPOCH + (d.nanoSeconds ?? 0) * 1e-9;
}

/** A scalar for one element, the list otherwise; non-finite numbers become null as in JSON. */
function jsonValue(value: unknown): unknown {
  const one = (v: unknown): unknown => (typeof v === 'number' && !Number.isFinite(v) ? null : v);
  if (Array.isArray(value)) return value.length === 1 ? one(value[0]) : value.map(one);
  return one(value);
}

function firstNumber(value: unknown): number {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'number' ? v : Number(v);
}

async function snapshot(ctx: TcaContext, args: RunnerArgs): Promise<unknown[]> {
  const timeout = args.timeoutMs / 1000;
  const t0 = performance.now();
  const elapsedMs = () => Math.round((performance.now() - t0) * 1000) / 1000;
  return Promise.all(
    args.names.map(async (name) => {
      let channel: TcaChannel | undefined;
      try {
        channel = await ctx.createChannel(name, 'ca', timeout);
      } catch {
        channel = undefined;
      }
      if (!channel) return { ok: false, error: 'not found', elapsedMs: elapsedMs() };
      const d = (await channel.get(timeout, channel.getDbrType_TIME())) as Meta | undefined;
      if (!d) return { ok: false, error: 'timeout', elapsedMs: elapsedMs() };
      return {
        ok: true,
        value: jsonValue(d.value),
        severity: d.severity ?? 0,
        status: d.status ?? 0,
        timestamp: stampOf(d),
        elapsedMs: elapsedMs(),
      };
    }),
  );
}

function monitor(ctx: TcaContext, args: RunnerArgs, store: SampleStore, monitors: TcaMonitor[]): void {
  const n = args.names.length;
  const seen = new Uint8Array(n);
  let started = 0;
  let complete = false;
  const listenerFor = (index: number) => (m: TcaMonitor) => {
    const received = nowSeconds();
    if (complete) return;
    const d = m.getChannel().getDbrData() as Meta;
    const full = store.add(index, d.severity ?? 0, d.status ?? 0, firstNumber(d.value), stampOf(d), received);
    if (!seen[index]) {
      seen[index] = 1;
      if (++started === n) emit({ ev: 'connected', count: n });
    }
    if (full) {
      complete = true;
      emit({ ev: 'complete' });
    }
  };
  if (n === 0) {
    emit({ ev: 'connected', count: 0 });
    emit({ ev: 'complete' });
  }
  args.names.forEach((name, i) => {
    void (async () => {
      const channel = await ctx.createChannel(name, 'ca');
      if (!channel) return;
      const m = await channel.createMonitor(undefined, listenerFor(i), DBR_TIME_DOUBLE, 1, DBE_VALUE | DBE_ALARM);
      if (m) monitors.push(m);
    })().catch((err: unknown) => fail(`${name}: ${err instanceof Error ? err.message : String(err)}`));
  });
}

async function main(): Promise<void> {
  const args = parseRunnerArgs();
  const { tca, version } = await loadTca();
  const ctx = new tca.Context(undefined, LOG_ERROR);
  await ctx.initialize();
  const store = new SampleStore(args.task === 'monitor' ? args.names.length : 0, Math.max(1, args.samples));
  const monitors: TcaMonitor[] = [];
  let results: unknown[] = [];
  emit({ ev: 'ready', client: 'epics-tca', version });
  onCommand((cmd) => {
    if (cmd === 'start') {
      if (args.task === 'monitor') monitor(ctx, args, store, monitors);
      else {
        void snapshot(ctx, args).then((r) => {
          results = r;
          emit({ ev: 'done' });
        });
      }
    } else if (cmd === 'ship') {
      if (args.task === 'snapshot') emit({ ev: 'results' }, Buffer.from(JSON.stringify(results)));
      else emit({ ev: 'samples', count: store.count }, store.bytes());
    } else if (cmd === 'exit') {
      ctx.destroyHard();
      process.exit(0);
    }
  });
}

main().catch((err: unknown) => fail(err instanceof Error ? err.message : String(err)));
