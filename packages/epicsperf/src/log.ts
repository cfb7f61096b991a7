// The tool's logger: pino to stderr, human-readable by default, JSON on request. The client
// library's records (its diagnostics channels) come here too, at the levels enabled.
// Nothing but the CLI writes to stdout; every module logs through here.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { LOG_LEVELS, logChannelName, type LogRecord } from 'epics-client';
import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

const LEVEL_NAMES: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/** A synchronous stderr destination that turns pino's JSON lines into short readable lines. */
const prettyStderr = {
  write(line: string): void {
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      process.stderr.write(line);
      return;
    }
    const { level, time, msg, pid: _pid, hostname: _host, name, ...rest } = rec;
    const t = new Date(typeof time === 'number' ? time : Date.now()).toISOString().slice(11, 23);
    const lvl = (LEVEL_NAMES[level as number] ?? String(level)).toUpperCase().padEnd(5);
    const extras = Object.entries(rest)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    const who = typeof name === 'string' ? `[${name}] ` : '';
    process.stderr.write(`${t} ${lvl} ${who}${String(msg ?? '')}${extras ? ' ' + extras : ''}\n`);
  },
};

let root: Logger = makeLogger({});
let generation = 0;
const clientLoggers = new Map<string, Logger>();

/** A record of the client library, logged by pino under the library's logger name. */
function fromClient(message: unknown): void {
  const r = message as LogRecord;
  let l = clientLoggers.get(r.logger);
  if (!l) clientLoggers.set(r.logger, (l = getLogger(r.logger)));
  if (r.fields) l[r.level](r.fields, r.msg);
  else l[r.level](r.msg);
}

/** Take the client library's records at the levels `root` logs (and only those: the rest cost it nothing). */
function listenToClient(): void {
  for (const level of LOG_LEVELS) {
    unsubscribe(logChannelName(level), fromClient);
    if (root.isLevelEnabled(level)) subscribe(logChannelName(level), fromClient);
  }
}
listenToClient();

export interface LogOptions {
  level?: LevelWithSilent;
  json?: boolean;
}

function makeLogger(opts: LogOptions): Logger {
  const level = opts.level ?? (process.env.EPICSPERF_LOG_LEVEL as LevelWithSilent | undefined) ?? 'warn';
  const json = opts.json ?? process.env.EPICSPERF_LOG_JSON === '1';
  return pino({ level, base: { pid: process.pid } }, json ? pino.destination({ dest: 2, sync: true }) : prettyStderr);
}

/** Reconfigure the process-wide logger (the CLI calls this once, from --log-level/--log-json). */
export function configureLogging(opts: LogOptions): Logger {
  root = makeLogger(opts);
  generation++;
  listenToClient();
  return root;
}

/** A child logger for one module. Resolved lazily so configureLogging() applies to loggers made earlier. */
export function getLogger(name: string): Logger {
  let child = root.child({ name });
  let gen = generation;
  return new Proxy({} as Logger, {
    get(_t, prop) {
      if (gen !== generation) {
        child = root.child({ name });
        gen = generation;
      }
      const v = (child as unknown as Record<string | symbol, unknown>)[prop];
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(child) : v;
    },
  });
}
