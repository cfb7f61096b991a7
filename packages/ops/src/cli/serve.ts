// `serve <file>`: publish every PV of a saved snapshot with its saved value, over Channel Access and
// PV Access, as a stand-in for a machine while screens and scripts are tested. Puts are accepted
// and kept; with --save they are written back to the file (whole or not at all) as they come and
// when the server stops.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { DbrType, type NativeType } from 'epics-client/ca';
import type { SavedPv } from 'epics-client/saveset';
import { Server, type PvDefinition, type ServedValue } from 'epics-client/server';
import { readSaveSet, writeSaveSet } from '../files.js';

interface Opts {
  save?: boolean;
  caPort?: number;
  pvaPort?: number;
}

const port = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('expected a port number (0-65535)');
  return n;
};

export function register(program: Command): void {
  const name = program.name();
  program
    .command('serve')
    .description('publish every PV of a saved snapshot with its saved value (CA and PVA) until stopped; puts are accepted and kept')
    .argument('<file>', "a saved snapshot: this project's, Phoebus CSV, PSI .snap or autosave .sav")
    .option('--save', 'write the values put back to the file (whole or not at all)')
    .addOption(new Option('--ca-port <port>', 'CA TCP and UDP port (default EPICS_CAS_SERVER_PORT, else 5064)').argParser(port))
    .addOption(new Option('--pva-port <port>', 'PVA TCP port (default EPICS_PVAS_SERVER_PORT, else 5075)').argParser(port))
    .action(async (file: string, opts: Opts) => {
      const { set } = readSaveSet(file);
      const server = await Server.start({
        ca: opts.caPort === undefined ? {} : { port: opts.caPort },
        pva: opts.pvaPort === undefined ? {} : { port: opts.pvaPort },
      });
      let served = 0;
      let dirty = false;
      const save = (): void => {
        if (!opts.save || !dirty) return;
        dirty = false;
        writeSaveSet(file, set);
      };
      for (const saved of set.pvs) {
        const def = definitionOf(saved);
        if (!def) continue;
        const pv = server.pv(bareName(saved.name), def);
        if (saved.seconds !== undefined)
          pv.post(def.value, {
            severity: saved.severity ?? 0,
            status: saved.status ?? 0,
            timestamp: saved.seconds * 1000 + Math.floor((saved.nanoseconds ?? 0) / 1e6),
          });
        pv.onPut = ({ value }) => {
          keep(saved, value);
          dirty = true;
          save();
          return { accept: true };
        };
        served++;
      }
      const skipped = set.pvs.length - served;
      process.stderr.write(
        `${name}: serving ${served} PVs of ${file}${skipped ? ` (${skipped} without a saved value left out)` : ''}: CA port ${server.caPort}, PVA port ${server.pvaPort}; Ctrl-C stops\n`,
      );
      await new Promise<void>((resolve) => {
        const stop = (): void => resolve();
        process.once('SIGINT', stop).once('SIGTERM', stop);
      });
      save();
      await server.close();
    });
}

/** The name served for a saved name (its ca:// or pva:// prefix left out: both protocols serve it). */
const bareName = (n: string): string => n.replace(/^(ca|pva):\/\//, '');

/** A served PV's definition from what was saved, or undefined when nothing was. */
function definitionOf(p: SavedPv): (PvDefinition & { value: ServedValue }) | undefined {
  if (!p.ok || p.value === undefined) return undefined;
  const v = p.value;
  const list = Array.isArray(v) ? (v as (number | string | boolean)[]) : undefined;
  const first = list ? list[0] : v;
  const type = nativeOf(p.type, first);
  const conv = (x: number | string | boolean): number | string =>
    type === DbrType.STRING ? String(x) : typeof x === 'boolean' ? Number(x) : typeof x === 'string' ? Number(x) : x;
  const value: ServedValue = list
    ? type === DbrType.STRING
      ? list.map(String)
      : list.map((x) => Number(conv(x)))
    : (conv(v as number | string | boolean) as ServedValue);
  return {
    type,
    value,
    maxCount: Math.max(1, list?.length ?? 1, p.count ?? 1),
    metadata: {
      ...(p.units !== undefined && { units: p.units }),
      ...(p.precision !== undefined && { precision: p.precision }),
      ...(p.enumStrings && { enumStrings: p.enumStrings }),
    },
    readOnly: p.readOnly ?? false,
  };
}

/** The CA native type of a saved type name (CA's or pvData's), or of the value when none was saved. */
function nativeOf(type: string | undefined, v: unknown): NativeType {
  switch (type) {
    case 'string':
      return DbrType.STRING;
    case 'enum':
      return DbrType.ENUM;
    case 'short':
    case 'ushort':
    case 'byte':
      return DbrType.SHORT;
    case 'char':
    case 'ubyte':
    case 'boolean':
      return DbrType.CHAR;
    case 'float':
      return DbrType.FLOAT;
    case 'long':
    case 'int':
      // CA's long and pvData's int are 32-bit; pvData's long is 64-bit: a double where 32 bits do not hold it.
      return typeof v === 'number' && Number.isInteger(v) && Math.abs(v) < 2 ** 31 ? DbrType.LONG : DbrType.DOUBLE;
    case 'double':
    case 'uint':
    case 'ulong':
      return DbrType.DOUBLE;
    default:
      return typeof v === 'string' ? DbrType.STRING : DbrType.DOUBLE;
  }
}

/** A put's value into its saved PV, as it will be written back. */
function keep(saved: SavedPv, value: ServedValue): void {
  saved.value =
    typeof value === 'number' || typeof value === 'string'
      ? value
      : (Array.from(value as ArrayLike<number | string>) as number[] | string[]);
  const now = Date.now();
  saved.seconds = Math.floor(now / 1000);
  saved.nanoseconds = (now % 1000) * 1e6;
}
