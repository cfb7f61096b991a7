// `epicsperf capture <pvs.txt> --out run.h5`: monitor every PV of a list with one client and write
// every update to an HDF5 file (docs/capture-format.md) until the duration ends or Ctrl-C.
import { accessSync, closeSync, constants, existsSync, openSync, statfsSync, unlinkSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { hostname } from 'node:os';
import { Option, type Command } from 'commander';
import { readPvList } from 'epics-ops';
import { UsageError } from '../errors.js';
import { packageVersion } from '../doctor.js';
import { DEFAULT_GAP_CHECK, startCapture, type CaptureClient } from '../capture/orchestrate.js';
import { captureSummaryText } from '../report/capture.js';
import { DEFAULTS } from '../defaults.js';
import { Progress, prepareClients, target } from './common.js';
import { captureClients, findClient } from '../clients/index.js';
import { CAPTURE_FORMAT, type CaptureDocument } from '../results/index.js';
import {
  arrayElementsOption,
  arrayRateOption,
  formatOption,
  intArg,
  iocOption,
  numberArg,
  rateOption,
  recordsOption,
  type IocMode,
  serverOption,
} from '../options.js';
import type { IocServer } from '../ioc/index.js';

interface Opts {
  out?: string;
  duration?: number;
  flushPeriod: number;
  client: string;
  ioc: IocMode;
  server: IocServer;
  force?: boolean;
  format: 'table' | 'json';
  gapCheck: string;
  connectTimeout: number;
  records: number;
  rate: number;
  arrayElements: number;
  arrayRate: number | 'max';
}

/** A path we can create (or replace, with force), on a disk with room: checked before anything starts. */
export function checkOutput(path: string, force: boolean): string {
  const abs = resolve(path);
  if (existsSync(abs)) {
    if (!force) throw new UsageError(`${abs} exists (use --force to replace it)`);
    try {
      accessSync(abs, constants.W_OK);
    } catch (err) {
      throw new UsageError(`cannot write ${abs}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
  } else {
    try {
      closeSync(openSync(abs, 'wx'));
      unlinkSync(abs);
    } catch (err) {
      throw new UsageError(`cannot write ${abs}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
  }
  try {
    const fs = statfsSync(dirname(abs));
    const free = fs.bavail * fs.bsize;
    if (free < 1024 * 1024) throw new UsageError(`no room for ${abs}: ${(free / 1024).toFixed(0)} KiB free on its disk`);
  } catch (err) {
    if (err instanceof UsageError) throw err;
  }
  return abs;
}

export function register(program: Command): void {
  program
    .command('capture')
    .description('monitor every PV of a list and write every update to an HDF5 file (docs/capture-format.md)')
    .argument('<pvs>', 'PV list file (one name per line, - for stdin)')
    .option('--out <file>', 'the HDF5 file to write (required)')
    .addOption(
      new Option('--duration <s>', 'seconds to capture once every PV is subscribed (default: until Ctrl-C)').argParser(
        numberArg(0, { exclusiveMin: true }),
      ),
    )
    .addOption(
      new Option('--flush-period <ms>', 'write the buffered updates and flush the file this often')
        .argParser(intArg(10, 600_000))
        .default(1000),
    )
    .addOption(new Option('--client <name>', 'client that monitors and writes').choices(captureClients()).default(DEFAULTS.client))
    .addOption(iocOption('env'))
    .addOption(serverOption())
    .option('--force', 'replace an existing output file')
    .addOption(formatOption(['table', 'json'] as const))
    .option('--gap-check <regex>', 'PVs that count up by 1 per update, checked for lost updates ("" = none)', DEFAULT_GAP_CHECK)
    .addOption(new Option('--connect-timeout <ms>', 'time each PV has to connect').argParser(intArg(1, 3_600_000)).default(5000))
    .addOption(recordsOption())
    .addOption(rateOption())
    .addOption(arrayElementsOption(DEFAULTS.iocArrayElements, 0, 50_000_000, 'built-in IOC: elements of PREFIX:ARRAY'))
    .addOption(arrayRateOption(DEFAULTS.iocArrayRate, true, "built-in IOC: PREFIX:ARRAY's refresh rate in Hz, or max"))
    .action(async (pvs: string, opts: Opts) => {
      if (!opts.out) throw new UsageError('--out <file> is required');
      try {
        new RegExp(opts.gapCheck);
      } catch {
        throw new UsageError(`--gap-check is not a regular expression: ${opts.gapCheck}`);
      }
      const names = readPvList(pvs);
      const out = checkOutput(opts.out, opts.force === true);
      const client = opts.client as CaptureClient;
      const python = await prepareClients([findClient(client)!], opts.ioc === 'builtin');
      const t = await target(opts.ioc, {
        records: opts.records,
        rate: opts.rate,
        arrayElements: opts.arrayElements,
        arrayRate: opts.arrayRate,
        server: opts.server,
      });
      const progress = new Progress();
      const fileOptions = {
        pvList: pvs,
        pvs: names.length,
        client,
        flushPeriodMs: opts.flushPeriod,
        durationS: opts.duration ?? null,
        ioc: opts.ioc,
        gapCheck: opts.gapCheck,
      };
      const handle = startCapture({
        client,
        python,
        env: t.env,
        names,
        out,
        flushMs: opts.flushPeriod,
        force: opts.force === true,
        gapCheck: opts.gapCheck,
        connectTimeoutMs: opts.connectTimeout,
        ...(opts.duration !== undefined && { durationS: opts.duration }),
        fileOptions,
        fileEnvironment: { host: hostname(), node: process.version, platform: process.platform, epicsperf: packageVersion() },
        onWarning: (m) => {
          progress.done();
          process.stderr.write(`epicsperf: warning: ${m}\n`);
        },
        onStatus: (s) => progress.update(`capture ${client}: ${s}`),
      });
      // Ctrl-C or SIGTERM: the runner writes what is buffered and closes the file; a second one leaves now.
      let signals = 0;
      const onSignal = () => {
        if (++signals > 1) {
          process.stderr.write('\nepicsperf: interrupted again: leaving without waiting for the file to close\n');
          process.exit(130);
        }
        process.stderr.write('\nepicsperf: stopping: writing what is buffered and closing the file\n');
        handle.stop();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        const run = await handle.done;
        progress.done();
        const doc: CaptureDocument = { schema: CAPTURE_FORMAT, options: { ...opts, pvs, out }, run };
        if (opts.format === 'json') process.stdout.write(JSON.stringify(doc, null, 2) + '\n');
        else process.stdout.write(captureSummaryText(run));
        if (!run.summary) process.stderr.write(`epicsperf: error: ${run.error ?? 'the capture failed'}\n`);
        else if (run.summary.error)
          process.stderr.write(`epicsperf: error: the capture stopped early: ${run.summary.error} (what was flushed is kept in ${out})\n`);
        const lost = run.summary?.pvs.some((p) => p.lost > 0) ?? false;
        process.exitCode = run.ok && !lost ? 0 : 1;
      } finally {
        progress.done();
        await t.stop();
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
}
