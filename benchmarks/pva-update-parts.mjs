// What a PV Access monitor update's CPU off the wire is made of: pva-update-path.mjs on this
// checkout's library and on copies of it that each leave one part of the update path out, in
// fresh processes, in turn; the difference from the full library is that part's cost (with the
// young collections its allocations make). The parts:
//   no-reading  the monitor hands its callback one shared event in place of a PvaReading (the
//               update's structure is still made, and kept reachable as a reading would keep it);
//   no-decode   the session reads no update into the monitor's base and makes no structure: it
//               skips to the update's last byte (its empty overrun set) and hands on one shared
//               structure, from which the reading is made as before;
//   no-acks     the monitor acknowledges nothing.
// A copy is the built JavaScript with one statement replaced: when the library's code no longer
// has that statement, this script says so and stops.
//
//   node benchmarks/pva-update-parts.mjs [BURSTS] [DIST]
//
// Defaults: 300 bursts, this checkout's packages/client/dist; MONITORS (100,000 here by default:
// at scale, where the caches no longer hold the monitors) and ROUNDS as pva-update-path.mjs.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const [burstsArg = '300', distArg] = process.argv.slice(2);
if (!(Number(burstsArg) > 0)) {
  console.error('usage: node benchmarks/pva-update-parts.mjs [BURSTS] [DIST]');
  process.exit(2);
}
const dist = resolve(distArg ?? join(HERE, '../packages/client/dist'));

/** Each part left out: the file and its replacements, [statement, replacement] in turn. */
const PARTS = {
  'no-reading': {
    file: 'client/pva/monitor.js',
    edits: [
      ['this.emit(new PvaReading(this.type, value));', 'LEFT_OUT.raw = value; this.emit(LEFT_OUT);'],
      ['const log =', "const LEFT_OUT = { kind: 'update', raw: undefined };\nconst log ="],
    ],
  },
  'no-decode': {
    file: 'pva/session.js',
    edits: [
      ['? decodeInto(r, type, (e.base ??= updateBase(type)), changed, this.types)', '? ((r.pos = r.end - 1), LEFT_OUT)'],
      [
        'const isData =',
        "const LEFT_OUT = { value: 1.5, alarm: { severity: 0, status: 0, message: '' }, timeStamp: { secondsPastEpoch: 1n, nanoseconds: 0, userTag: 0 } };\nconst isData =",
      ],
    ],
  },
  'no-acks': { file: 'client/pva/monitor.js', edits: [['    consumed() {\n', '    consumed() {\n        return;\n']] },
};

const work = mkdtempSync(join(tmpdir(), 'epicsperf-update-parts-'));
try {
  const builds = [`full=${dist}`];
  for (const [name, part] of Object.entries(PARTS)) {
    const copy = join(work, name);
    cpSync(dist, copy, { recursive: true });
    const path = join(copy, part.file);
    let text = readFileSync(path, 'utf8');
    for (const [from, to] of part.edits) {
      if (!text.includes(from)) throw new Error(`${name}: ${part.file} no longer has \`${from.trim()}\`: update this script`);
      text = text.replace(from, to);
    }
    writeFileSync(path, text);
    builds.push(`${name}=${copy}`);
  }
  const res = spawnSync(process.execPath, [join(HERE, 'pva-update-path.mjs'), '0', burstsArg, ...builds], {
    env: { ...process.env, MONITORS: process.env.MONITORS || '100000' },
    stdio: 'inherit',
  });
  if (res.status !== 0) process.exitCode = 1;
} catch (e) {
  console.error(e.message);
  process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
