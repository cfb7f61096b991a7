// `epicsperf ioc`: run the built-in IOC in the foreground until SIGINT/SIGTERM.
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { startIoc, type ArrayType, type IocServer } from '../ioc/index.js';
import { DEFAULTS } from '../defaults.js';
import { UsageError } from '../errors.js';
import {
  arrayElementsOption,
  arrayRateOption,
  arrayTypeOption,
  intArg,
  ipv4Arg,
  nameStyleOption,
  portArg,
  prefixOption,
  rateOption,
  recordsOption,
  serverOption,
} from '../options.js';

interface IocCliOptions {
  records: number;
  rate: number;
  prefix: string;
  nameStyle: 'plain' | 'padded';
  arrayElements: number;
  arrayRate: number | 'max';
  arrayType: ArrayType;
  server: IocServer;
  settings: number;
  latencyElements: number;
  caPort?: number;
  pvaPort?: number;
  pvaBroadcastPort?: number;
  listen?: string;
  envFile?: string;
  writeEnv?: string;
}

export function register(program: Command): void {
  program
    .command('ioc')
    .description("run the built-in EPICS IOC (EPICS base's RSRV and QSRV, or --server node) until Ctrl-C")
    .addOption(serverOption())
    .addOption(recordsOption(1_000_000))
    .addOption(rateOption(true))
    .addOption(prefixOption())
    .addOption(nameStyleOption())
    .addOption(arrayElementsOption(DEFAULTS.iocArrayElements, 0, 100_000_000, 'elements of PREFIX:ARRAY (0 = none)'))
    .addOption(arrayRateOption(DEFAULTS.iocArrayRate, true, "PREFIX:ARRAY refresh rate in Hz (0 = off, 'max' = as fast as possible)"))
    .addOption(
      arrayTypeOption('element type of PREFIX:ARRAY: double, float, int64, int32, int16 or int8 (update k holds k, wrapped to the type)'),
    )
    .option(
      '--settings <n>',
      'settings PREFIX:SET:1..N of mixed types (ao, longout, mbbo, stringout, waveform), unscanned (0 = none)',
      intArg(0, 1_000_000),
      0,
    )
    .option(
      '--latency-elements <n>',
      'elements of PREFIX:LATENCY:DOUBLE and PREFIX:LATENCY:CHAR, the waveforms the latency workload puts to (0 = none)',
      intArg(0, 100_000_000),
      0,
    )
    .option('--ca-port <port>', 'CA server port (default: a free one)', portArg)
    .option('--pva-port <port>', 'PVA server port (default: a free one)', portArg)
    .option(
      '--pva-broadcast-port <port>',
      'PVA search (UDP) port (default: the PVA port + 1 when --pva-port is given, else a free one)',
      portArg,
    )
    .option(
      '--listen <address>',
      "serve on this address: 127.0.0.1 (default, this host only), an interface's address, or 0.0.0.0 for every interface (other hosts then find it by broadcast; ports default to the EPICS ones, 5064, 5075 and 5076)",
      ipv4Arg,
    )
    .option(
      '--env-file <file>',
      'also write the NAME=value lines to this file (Node 20 itself insists this file exists already: use --write-env there)',
    )
    .option('--write-env <file>', 'the same as --env-file')
    .action(async (opts: IocCliOptions) => {
      const ioc = await startIoc({
        records: opts.records,
        rate: opts.rate,
        prefix: opts.prefix,
        nameStyle: opts.nameStyle,
        arrayElements: opts.arrayElements,
        arrayRate: opts.arrayRate,
        arrayType: opts.arrayType,
        server: opts.server,
        settings: opts.settings,
        latencyElements: opts.latencyElements,
        ...(opts.caPort !== undefined && { caPort: opts.caPort }),
        ...(opts.pvaPort !== undefined && { pvaPort: opts.pvaPort }),
        ...(opts.pvaBroadcastPort !== undefined && { pvaBroadcastPort: opts.pvaBroadcastPort }),
        ...(opts.listen !== undefined && { listen: opts.listen }),
      });
      const lines = Object.entries(ioc.env).map(([k, v]) => `${k}=${v}`);
      const envFile = opts.writeEnv ?? opts.envFile;
      if (envFile) {
        try {
          writeFileSync(envFile, lines.join('\n') + '\n');
        } catch (err) {
          await ioc.stop();
          throw new UsageError(`cannot write ${envFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
        }
      }
      process.stdout.write(lines.join('\n') + '\nready\n');
      await new Promise<void>((resolve) => {
        const done = () => resolve();
        process.once('SIGINT', done);
        process.once('SIGTERM', done);
        void ioc.exited.then(done);
      });
      await ioc.stop();
      const code = await ioc.exited;
      if (code !== 0 && code !== null) throw new Error(`the IOC exited with code ${code}`);
    });
}
