// The servers' headroom (`bench headroom --servers`): at each (counters x rate) step, a server's app
// posts every counter at the rate (its ticker, docs/runners.md "Server runners"), or the built-in
// IOC's records count (`ioc`, the RSRV and QSRV reference), and one or N reference clients
// monitor all of them at once. A server holds a step when it posted 90% of the offered rate or
// more and every client received every update without falling behind; the figure is the rate it
// published there, its CPU beside it.
import type { ClientSpec } from '../clients/index.js';
import { stealMeter } from '../procstat.js';
import {
  headroomStepLabel,
  type HeadroomResults,
  type HeadroomStep,
  type HeadroomStepResult,
  type HeadroomWorkload,
} from '../results/index.js';
import type { ServerProtocol, ServerStats } from '../servers/index.js';
import { type Counting, startCounting } from './counting.js';
import { headroomClient, iocRate, judge } from './headroom.js';
import { DEFAULT_MAX_RSS_MB, runMonitor } from './monitor.js';
import { climb } from './ramp.js';
import type { Sample } from './samples.js';

/** One row of the ramp: a server over one protocol to `fanout` clients at once. */
export interface ServerRow {
  server: string;
  protocol: ServerProtocol;
  client: ClientSpec;
  fanout: number;
}

export const serverRowLabel = (r: { server: string; protocol: string; fanout: number }): string =>
  `${r.server} (${r.protocol})${r.fanout > 1 ? ` x ${r.fanout}` : ''}`;

export interface ServerHeadroomOptions {
  rows: readonly ServerRow[];
  python: string;
  workload: HeadroomWorkload;
  maxRssMb?: number;
  clientDeadlineMs?: number;
  onProgress?: (text: string) => void;
  runStep?: (label: string, row: string, body: () => Promise<HeadroomStepResult>) => Promise<HeadroomStepResult>;
  onSkip?: (n: number) => void;
}

export async function runServerHeadroom(o: ServerHeadroomOptions): Promise<HeadroomResults> {
  const progress = o.onProgress ?? (() => {});
  const runStep = o.runStep ?? ((_l, _c, body) => body());
  const steal = stealMeter();
  const runs = await climb<HeadroomStep, ServerRow, HeadroomStepResult>({
    steps: o.workload.steps,
    clients: o.rows,
    held: (r) => r.held,
    ...(o.onSkip && { onSkip: o.onSkip }),
    // A server of its own for each row: the rows do not share one.
    open: (step) =>
      Promise.resolve({
        close: () => Promise.resolve(),
        run: (row) => runStep(headroomStepLabel(step), serverRowLabel(row), () => runRow(o, row, step, progress)),
      }),
  });
  return {
    workload: o.workload,
    runs,
    clients: o.rows.map((r) => headroomClient(serverRowLabel(r), runs, o.workload.steps.length)),
    stealPercent: steal(),
  };
}

async function runRow(
  o: ServerHeadroomOptions,
  row: ServerRow,
  step: HeadroomStep,
  progress: (t: string) => void,
): Promise<HeadroomStepResult> {
  const label = serverRowLabel(row);
  const server = { name: row.server, protocol: row.protocol, fanout: row.fanout };
  progress(`starting the ${row.server} server`);
  let counting: Counting;
  try {
    counting = await startCounting(row.server, o.python, step.records, step.rateHz);
  } catch (e) {
    const text = `the server did not start: ${(e as Error).message}`;
    return {
      client: label,
      server,
      step,
      run: { client: row.client.name, ok: false, error: text },
      held: false,
      iocLimited: false,
      failure: { mode: 'failed', text },
    };
  }
  try {
    const marks: Promise<ServerStats | undefined>[] = [];
    const samples: (readonly Sample[])[] = [];
    const runs = await Promise.all(
      Array.from({ length: row.fanout }, (_, i) =>
        runMonitor({
          client: row.client,
          python: o.python,
          env: counting.env,
          names: counting.names,
          rate: step.rateHz,
          iocMeter: counting.meter,
          samples: Math.max(5, Math.round(step.rateHz * o.workload.seconds)),
          ...(o.maxRssMb !== undefined && { maxRssMb: o.maxRssMb }),
          ...(o.clientDeadlineMs !== undefined && { clientDeadlineMs: o.clientDeadlineMs }),
          onSamples: (s) => (samples[i] = s),
          onProgress: (text) => {
            if (i > 0) return;
            progress(text);
            // The server's counts when the first client starts collecting and when it ends.
            if (text === 'collecting' || text === 'checking') marks.push(counting.stats());
          },
        }),
      ),
    );
    const [a, b] = await Promise.all(marks);
    const rate = iocRate(a, b, step.records);
    const judged = runs.map((run, i) => judge(label, step, run, samples[i] ?? [], rate, o.maxRssMb ?? DEFAULT_MAX_RSS_MB));
    // The ticks the app completed over the window, against those its schedule asked for.
    const ticks =
      a?.ticks !== undefined && b?.ticks !== undefined ? { done: b.ticks - a.ticks, asked: (b.time - a.time) * step.rateHz } : undefined;
    return judgeServer(judged, { ...server, ...(counting.version !== undefined && { version: counting.version }) }, ticks);
  } finally {
    await counting.stop();
  }
}

/** A server's step from its clients' (each judged as a client's step, with the server's published
 *  rate): held when every client held it and the app completed 90% of the ticks its schedule
 *  asked for over the window or more (one tick of slack: the window's ends fall between ticks). The
 *  row's run is the first client's that did not hold, else the first's. */
export function judgeServer(
  clients: readonly HeadroomStepResult[],
  server: NonNullable<HeadroomStepResult['server']>,
  ticks: { done: number; asked: number } | undefined,
): HeadroomStepResult {
  const r: HeadroomStepResult = { ...(clients.find((x) => !x.held) ?? clients[0]!), server };
  // Here the server is what is measured: the clients' IOC-limited mark does not apply, and an app
  // that posted short of the offered rate gave way, even if its clients received all it posted.
  r.iocLimited = false;
  if (r.held && ticks && ticks.done + 1 < 0.9 * ticks.asked) {
    r.held = false;
    const rate = r.iocUpdatesS ?? (ticks.done / ticks.asked) * r.step.offeredUpdatesS;
    r.failure = {
      mode: 'short',
      text: `posted ${Math.round(rate).toLocaleString('en-US')} of ${r.step.offeredUpdatesS.toLocaleString('en-US')} updates/s`,
    };
  }
  return r;
}
