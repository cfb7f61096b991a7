// One capture run seen from outside: start the client's capture runner, let it capture until the
// duration ends or stop() is called, measure its CPU and memory, and collect its summary.
// capture/'s operation: the `capture` command and the bench's capture workload start captures here
// (the only module of capture/ that other folders import); it runs the client through launch/.
import { LocalHost } from '../hosts/local-host.js';
import type { Host } from '../hosts/host.js';
import { runOnce } from '../launch/run.js';
import { getLogger } from '../log.js';
import type { CaptureRun, CaptureSummary } from '../results/capture.js';

const log = getLogger('capture');

/** A client that captures (`capture: true` in clients.json). */
export type CaptureClient = string;

/** Default --gap-check: the built-in IOC's counters and its array. */
export const DEFAULT_GAP_CHECK = '(^|:)(CALC\\d+|ARRAY)$';

export interface CaptureRunOptions {
  client: CaptureClient;
  python: string;
  /** Where the runner runs (default: here). On an agent, `out` is a plain file name, written in a
   *  folder of the run there and removed with it: the summary comes back, not the file. */
  host?: Host;
  env: Record<string, string>;
  names: readonly string[];
  out: string;
  flushMs: number;
  force: boolean;
  gapCheck: string;
  /** Seconds to capture once every PV is subscribed; undefined: until stop(). */
  durationS?: number;
  connectTimeoutMs?: number;
  /** Stored in the file's `options` and `environment` attributes. */
  fileOptions?: unknown;
  fileEnvironment?: unknown;
  onWarning?: (message: string) => void;
  onStatus?: (text: string) => void;
  /** The bench's per-client deadline for this run (ms): past it the runner is killed (ClientDeadline). */
  clientDeadlineMs?: number;
}

export interface CaptureHandle {
  /** Ends the capture early (Ctrl-C): the runner writes what is buffered and closes the file. */
  stop(): void;
  done: Promise<CaptureRun>;
}

export function startCapture(o: CaptureRunOptions): CaptureHandle {
  let stopRequested: (() => void) | undefined;
  let stopEarly = false;
  const stop = () => {
    stopEarly = true;
    stopRequested?.();
  };
  return {
    stop,
    done: run(
      o,
      (f) => (stopRequested = f),
      () => stopEarly,
    ),
  };
}

async function run(o: CaptureRunOptions, onStoppable: (f: () => void) => void, stoppedEarly: () => boolean): Promise<CaptureRun> {
  const runner = (o.host ?? new LocalHost(o.python)).startRunner({
    client: o.client,
    task: 'capture',
    names: o.names,
    args: [
      '--out',
      o.out,
      '--flush-ms',
      String(o.flushMs),
      '--gap-check',
      o.gapCheck,
      '--connect-timeout-ms',
      String(o.connectTimeoutMs ?? 5000),
      '--options',
      JSON.stringify(o.fileOptions ?? {}),
      '--environment',
      JSON.stringify(o.fileEnvironment ?? {}),
      ...(o.force ? ['--force'] : []),
    ],
    env: o.env,
  });
  const result: CaptureRun = { client: o.client, ok: false, warnings: [] };
  let status: (text: string) => void = o.onStatus ?? (() => {});
  let stoppedReason: string | undefined;
  let written = 0;
  runner.intercept = (e) => {
    if (e.ev === 'warn') {
      const m = String(e.message);
      if (result.warnings.length < 1000) result.warnings.push(m);
      o.onWarning?.(m);
      return true;
    }
    if (e.ev === 'flush') {
      written += Number(e.updates ?? 0);
      status(`capturing: ${written} updates written`);
      return true;
    }
    if (e.ev === 'stopped') {
      stoppedReason = String(e.reason);
      o.onWarning?.(`the capture stopped: ${stoppedReason}`);
      wakeStop?.();
      return true;
    }
    return false;
  };
  let wakeStop: (() => void) | undefined;
  return runOnce(runner, result, { deadlineMs: o.clientDeadlineMs, onProgress: o.onStatus }, async (progress) => {
    status = progress;
    status('starting');
    await runner.next('ready', 60_000, 'ready');
    runner.send('start');
    status('connecting');
    const capturing = await runner.next('capturing', 30_000 + o.names.length * 20, 'every PV subscribed');
    const missing = Number(capturing.missingCount ?? 0);
    log.info({ client: o.client, pvs: capturing.pvs, out: o.out }, 'capturing');
    if (missing > 0) {
      const list = (capturing.missing as string[]).join(', ');
      o.onWarning?.(`${missing} PV(s) not captured (not connected within the timeout): ${list}${missing > 20 ? ', ...' : ''}`);
    }
    const m0 = runner.meter.read();
    status('capturing');
    await new Promise<void>((resolve) => {
      const timer = o.durationS !== undefined ? setTimeout(resolve, o.durationS * 1000) : undefined;
      const end = () => {
        if (timer) clearTimeout(timer);
        resolve();
      };
      wakeStop = end;
      onStoppable(end);
      if (stoppedEarly()) end();
      void runner.exited.then(end);
    });
    const m1 = runner.meter.read();
    if (m0 && m1 && m1.t > m0.t) result.cpuPercent = ((m1.cpuS - m0.cpuS) / ((m1.t - m0.t) / 1000)) * 100;
    status('closing the file');
    runner.send('stop');
    const shipped = await runner.next('summary', 120_000, 'the summary');
    // The kernel's high-water mark, read before the runner exits.
    const m = runner.meter.read();
    result.summary = JSON.parse((shipped.payload ?? Buffer.from('{}')).toString('utf8')) as CaptureSummary;
    if (m) result.peakRssMb = m.peakKb / 1024;
    const error = result.summary.error ?? stoppedReason;
    result.ok = error === undefined;
    if (error !== undefined) result.error = error;
  });
}
