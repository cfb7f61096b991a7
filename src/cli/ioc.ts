// `epicsperf ioc`: run the built-in IOC in the foreground until SIGINT/SIGTERM.
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { startIoc } from '../ioc/index.js';
import { intArg, numberArg, portArg } from './options.js';
import { UsageError } from '../errors.js';

interface IocCliOptions {
  records: number;
  rate: number;
  prefix: string;
  nameStyle: string;
  arrayElements: number;
  arrayRate: string;
  caPort?: number;
  pvaPort?: number;
  envFile?: string;
  writeEnv?: string;
}

export function register(program: Command): void {
  program
    .command('ioc')
    .description("run the built-in EPICS IOC (EPICS base's RSRV and QSRV) until Ctrl-C")
    .option('--records <n>', 'number of counters PREFIX:CALC1..N', intArg(1, 1_000_000), 1000)
    .option('--rate <hz>', 'counter update rate in Hz (0 = frozen)', numberArg(0), 10)
    .option('--prefix <prefix>', 'record name prefix', 'TEST:')
    .option('--name-style <style>', 'plain (CALC1..) or padded (CALC00000.., as EPICSPyClientPerformance)', 'plain')
    .option('--array-elements <n>', 'elements of PREFIX:ARRAY (0 = none)', intArg(0, 100_000_000), 1_000_000)
    .option('--array-rate <hz>', "PREFIX:ARRAY refresh rate in Hz (0 = off, 'max' = as fast as possible)", '1')
    .option('--ca-port <port>', 'CA server port (default: a free one)', portArg)
    .option('--pva-port <port>', 'PVA server port (default: a free one)', portArg)
    .option('--env-file <file>', 'also write the NAME=value lines to this file (Node 20 itself insists this file exists already: use --write-env there)')
    .option('--write-env <file>', 'the same as --env-file')
    .action(async (opts: IocCliOptions) => {
      if (opts.nameStyle !== 'plain' && opts.nameStyle !== 'padded')
        throw new UsageError(`--name-style must be plain or padded, got "${opts.nameStyle}"`);
      const arrayRate = opts.arrayRate === 'max' ? 'max' : Number(opts.arrayRate);
      if (arrayRate !== 'max' && !(Number.isFinite(arrayRate) && arrayRate >= 0))
        throw new UsageError(`--array-rate must be a number >= 0 or max, got "${opts.arrayRate}"`);
      const ioc = await startIoc({
        records: opts.records,
        rate: opts.rate,
        prefix: opts.prefix,
        nameStyle: opts.nameStyle,
        arrayElements: opts.arrayElements,
        arrayRate,
        ...(opts.caPort !== undefined && { caPort: opts.caPort }),
        ...(opts.pvaPort !== undefined && { pvaPort: opts.pvaPort }),
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
