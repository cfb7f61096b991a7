// Logging without a dependency: every record goes to the diagnostics channel of its level,
// `epics-client:log:<level>`, where an application subscribes to the levels it wants. With
// NODE_DEBUG=epics-client, util.debuglog prints every record to stderr too. A warning or an error
// that no one subscribed to becomes a process warning (printed by Node once, on stderr).
import { channel, type Channel } from 'node:diagnostics_channel';
import { debuglog } from 'node:util';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/** What a subscriber of `epics-client:log:<level>` receives. */
export interface LogRecord {
  level: LogLevel;
  /** The part of the library that logged it: "search", "ca.context", "beacons"... */
  logger: string;
  msg: string;
  /** Details as key-value pairs (a server, a reason, an error code). */
  fields: Record<string, unknown> | undefined;
  /** Date.now() when logged. */
  time: number;
}

export const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error'];

/** The channel of one level's records: `epics-client:log:<level>`. */
export function logChannelName(level: LogLevel): string {
  return `epics-client:log:${level}`;
}

const channels = Object.fromEntries(LOG_LEVELS.map((l) => [l, channel(logChannelName(l))])) as Record<LogLevel, Channel>;
const debug = debuglog('epics-client');

export interface Logger {
  /** Whether a record of `level` would reach anyone (check before building costly details). */
  isLevelEnabled(level: LogLevel): boolean;
  trace(fieldsOrMsg: Record<string, unknown> | string, msg?: string): void;
  debug(fieldsOrMsg: Record<string, unknown> | string, msg?: string): void;
  info(fieldsOrMsg: Record<string, unknown> | string, msg?: string): void;
  warn(fieldsOrMsg: Record<string, unknown> | string, msg?: string): void;
  error(fieldsOrMsg: Record<string, unknown> | string, msg?: string): void;
}

function emit(logger: string, level: LogLevel, fieldsOrMsg: Record<string, unknown> | string, msg?: string): void {
  const fields = typeof fieldsOrMsg === 'string' ? undefined : fieldsOrMsg;
  const text = typeof fieldsOrMsg === 'string' ? fieldsOrMsg : (msg ?? '');
  const ch = channels[level];
  if (ch.hasSubscribers) ch.publish({ level, logger, msg: text, fields, time: Date.now() } satisfies LogRecord);
  else if (level === 'warn' || level === 'error')
    process.emitWarning(text, { type: 'EpicsClientWarning', detail: fields ? JSON.stringify(fields) : undefined });
  if (debug.enabled) debug('%s %s %s%s', level.toUpperCase(), logger, text, fields ? ' ' + JSON.stringify(fields) : '');
}

/** The logger of one part of the library. */
export function getLogger(name: string): Logger {
  const at = (level: LogLevel) => (f: Record<string, unknown> | string, m?: string) => emit(name, level, f, m);
  return {
    isLevelEnabled: (level) => channels[level].hasSubscribers || debug.enabled || level === 'warn' || level === 'error',
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
  };
}
