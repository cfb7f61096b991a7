// Every option the commands share, defined once (parser, choices, default from src/defaults.ts);
// a bad value is commander's one-line usage error.
import { isIPv4 } from 'node:net';
import { InvalidArgumentError, Option } from 'commander';
import { intArg, numberArg } from 'epics-ops';
import { DEFAULTS } from './defaults.js';
import { ARRAY_TYPES, IOC_SERVERS } from './results/index.js';

// The numbers, the output format and the per-PV timeout are epics-ops's, as its commands are.
export { formatOption, intArg, numberArg, timeoutOption } from 'epics-ops';

/** A comma-separated list's items, trimmed, the empty ones dropped. */
export const listArg = (v: string): string[] =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function portArg(v: string): number {
  return intArg(1, 65535)(v);
}

export function ipv4Arg(v: string): string {
  if (!isIPv4(v)) throw new InvalidArgumentError('expected an IPv4 address such as 127.0.0.1 or 0.0.0.0.');
  return v;
}

/** A refresh rate in Hz or `max`; `allowZero` (0 = off) for the IOC itself. */
function rateOrMax(allowZero: boolean): (v: string) => number | 'max' {
  return (v: string) => {
    if (v === 'max') return 'max';
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < 0 || (!allowZero && n === 0))
      throw new InvalidArgumentError(`expected a number ${allowZero ? '>=' : '>'} 0 or max.`);
    return n;
  };
}

export type IocMode = 'env' | 'builtin';

/** `--ioc env|builtin`; `external`, its former spelling on `monitor`, still means env. */
export function iocOption(defaultMode: IocMode): Option {
  return new Option('--ioc <ioc>', 'builtin: start the built-in IOC for the run; env: the IOC the EPICS_* environment names')
    .default(defaultMode)
    .argParser((v: string): IocMode => {
      if (v === 'external') {
        process.stderr.write('epicsperf: note: --ioc external is now spelled --ioc env\n');
        return 'env';
      }
      if (v !== 'env' && v !== 'builtin') throw new InvalidArgumentError('Allowed choices are env, builtin.');
      return v;
    });
}

/** `--client <name>`, DEFAULTS.client by default (`null`: no default, the command tells the option's absence). */
export const clientOption = (what: string, byDefault: string | null = DEFAULTS.client): Option => {
  const o = new Option('--client <name>', `${what} (see \`epicsperf clients\`)`);
  return byDefault === null ? o : o.default(byDefault);
};
export const recordsOption = (max = 100_000): Option =>
  new Option('--records <n>', 'number of counters PREFIX:CALC1..N').argParser(intArg(1, max)).default(DEFAULTS.records);
export const samplesOption = (): Option =>
  new Option('--samples <n>', 'samples to collect per counter').argParser(intArg(2, 100_000)).default(DEFAULTS.samples);
export const rateOption = (allowZero = false): Option =>
  new Option('--rate <hz>', `counter update rate in Hz${allowZero ? ' (0 = frozen)' : ''}`)
    .argParser(numberArg(0, { exclusiveMin: !allowZero }))
    .default(DEFAULTS.rate);
export const prefixOption = (): Option => new Option('--prefix <prefix>', 'record name prefix').default(DEFAULTS.prefix);
export const nameStyleOption = (): Option =>
  new Option('--name-style <style>', 'plain (CALC1..) or padded (CALC00000.., as EPICSPyClientPerformance)')
    .choices(['plain', 'padded'])
    .default(DEFAULTS.nameStyle);
export const arrayElementsOption = (defaultValue: number, min: number, max: number, help: string): Option =>
  new Option('--array-elements <n>', help).argParser(intArg(min, max)).default(defaultValue);
export const arrayTypeOption = (help: string): Option =>
  new Option('--array-type <type>', help).choices([...ARRAY_TYPES]).default('double');
export const arrayRateOption = (defaultValue: number | 'max', allowZero: boolean, help: string): Option =>
  new Option('--array-rate <hz>', help).argParser(rateOrMax(allowZero)).default(defaultValue);

/** The built-in IOC's server. */
export const serverOption = (): Option =>
  new Option(
    '--server <server>',
    "the built-in IOC's server: softioc (EPICS base's RSRV and QSRV), node (this project's server, epics-client/server, the same PVs), or softioc behind a gateway, whose CPU is then the server's: pvagw (p4p's PV Access gateway) or pva-gateway-rs (epics-rs's), PVA clients only, or ca-gateway-rs (epics-rs's CA gateway), CA clients only",
  )
    .choices(IOC_SERVERS)
    .default('softioc');

/** Where clients and the IOC run: other hosts through their agents (docs/agents.md). */
export const hostsOption = (): Option =>
  new Option('--hosts <list>', 'run on other hosts too, through their agents: name=tcp://ADDR:PORT,... (see docs/agents.md)');
export const placeOption = (): Option =>
  new Option(
    '--place <list>',
    'what runs where with --hosts: client=host,...,ioc=host (host: a name of --hosts, or local); clients not placed are spread over the hosts in turn, the IOC runs here',
  );
export const keysOption = (): Option =>
  new Option(
    '--keys <dir>',
    "the CURVE keys with --hosts: this orchestrator's orchestrator.key and each host's NAME.pub (default: $EPICSPERF_HOME/keys)",
  );
