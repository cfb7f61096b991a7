// What ca-update-path.mjs and pva-update-path.mjs share: the command line, and each build (a dist
// directory) measured in fresh processes, in turn, at each MB of memory read between bursts; the
// median ns per update of each as a Markdown table.
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
/** Processes of each build (ROUNDS in the environment; default 3). */
const ROUNDS = Number(process.env.ROUNDS) || 3;

/**
 * The script `script` (an import.meta.url) as its own command: with `--one DIST MB BURSTS` it
 * runs `one(dist, mb, bursts)`, which prints `{"ns": ...}`; otherwise it measures the builds of
 * its command line, `title` heading the table.
 */
export async function updatePathMain(script, title, one) {
  const [, , first, ...rest] = process.argv;
  if (first === '--one') return one(rest[0], Number(rest[1]), Number(rest[2]));
  const [mbArg = '0,16', burstsArg = '1500', ...dists] = process.argv.slice(2);
  const mbs = mbArg.split(',').map(Number);
  const bursts = Number(burstsArg);
  const self = fileURLToPath(script);
  if (mbs.some((x) => !Number.isFinite(x) || x < 0) || !(bursts > 0)) {
    console.error(`usage: node benchmarks/${self.split('/').pop()} [MB,...] [BURSTS] [DIST ...]`);
    process.exit(2);
  }
  const builds = dists.length ? dists.map((d) => resolve(d)) : [resolve(HERE, '../packages/client/dist')];
  const rows = builds.map(() => mbs.map(() => []));
  for (let r = 0; r < ROUNDS; r++)
    for (let m = 0; m < mbs.length; m++)
      for (let d = 0; d < builds.length; d++) {
        const res = spawnSync(process.execPath, [self, '--one', builds[d], String(mbs[m]), String(bursts)], { encoding: 'utf8' });
        if (res.status !== 0) {
          console.error(`${builds[d]}: ${res.stderr.trim().split('\n').slice(-3).join(' | ')}`);
          process.exit(1);
        }
        rows[d][m].push(JSON.parse(res.stdout.trim().split('\n').pop()).ns);
      }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`${title(bursts)}, ${ROUNDS} processes of each build in turn\n`);
  console.log(`| build | ${mbs.map((mb) => `ns per update, ${mb} MB read between bursts`).join(' | ')} |`);
  console.log(`|---|${mbs.map(() => '---:').join('|')}|`);
  for (let d = 0; d < builds.length; d++) {
    const commit = spawnSync('git', ['-C', builds[d], 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim() || '?';
    const cells = rows[d].map((xs) => `${med(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})`);
    console.log(`| ${commit} | ${cells.join(' | ')} |`);
  }
}
