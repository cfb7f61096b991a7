// The connect storm for one server and protocol (`bench storm`): a fresh server serving N still
// counters, and one reference client asking for all of them at once with its snapshot task (every
// channel created, connected and read, each against its own timeout). Every answer must be the
// counter's value (1); the server's process is read from outside over the storm.
import type { ClientSpec } from '../clients/index.js';
import type { StormRun, StormWorkload } from '../results/index.js';
import type { ServerProtocol } from '../servers/index.js';
import { type Counting, startCounting } from './counting.js';
import { runSnapshot } from './snapshot.js';

export interface StormOptions {
  server: string;
  protocol: ServerProtocol;
  client: ClientSpec;
  python: string;
  workload: StormWorkload;
  clientDeadlineMs?: number;
  onProgress?: (text: string) => void;
}

export async function runStorm(o: StormOptions): Promise<StormRun> {
  const run: StormRun = { server: o.server, protocol: o.protocol, client: o.client.name, answered: 0, wrong: 0, ok: false };
  o.onProgress?.(`starting the ${o.server} server with ${o.workload.channels.toLocaleString('en-US')} channels`);
  let counting: Counting;
  try {
    counting = await startCounting(o.server, o.python, o.workload.channels, 0);
  } catch (e) {
    return { ...run, unsupported: true, error: `the server did not start: ${(e as Error).message}` };
  }
  try {
    if (counting.version !== undefined) run.version = counting.version;
    const before = counting.meter.read();
    const snap = await runSnapshot({
      client: o.client,
      python: o.python,
      env: counting.env,
      names: counting.names,
      timeoutMs: o.workload.timeoutMs,
      // The values are checked here: every counter is still at 1 (the CA referee cannot read a PVA-only server).
      verify: false,
      ...(o.clientDeadlineMs !== undefined && { clientDeadlineMs: o.clientDeadlineMs }),
      ...(o.onProgress && { onProgress: o.onProgress }),
    });
    const after = counting.meter.read();
    if (before && after) {
      run.serverCpuS = after.cpuS - before.cpuS;
      run.serverPeakRssMb = after.peakKb / 1024;
    }
    run.answered = snap.answered;
    run.wrong = snap.rows.filter((r) => r.ok && Number(r.value) !== 1).length;
    if (snap.wallMs !== undefined) run.wallMs = snap.wallMs;
    if (snap.cpuS !== undefined) run.clientCpuS = snap.cpuS;
    if (snap.peakRssMb !== undefined) run.clientPeakRssMb = snap.peakRssMb;
    run.ok = snap.error === undefined && run.answered === o.workload.channels && run.wrong === 0;
    if (!run.ok)
      run.error =
        snap.error ??
        (run.wrong
          ? `${run.wrong.toLocaleString('en-US')} answers not the counter's value`
          : `${run.answered.toLocaleString('en-US')} of ${o.workload.channels.toLocaleString('en-US')} channels answered within ${o.workload.timeoutMs} ms`);
    return run;
  } finally {
    await counting.stop();
  }
}
