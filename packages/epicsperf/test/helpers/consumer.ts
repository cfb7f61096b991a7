// A fresh consumer project of packed workspace packages: `npm pack` of each, then `npm ci` in a new
// folder from a lockfile made of this repository's own (the same versions, served from npm's
// cache, so it works offline), the way a user's project installs them.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../../..', import.meta.url));

interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  [k: string]: unknown;
}

/** Where npm finds `name` required from the package at `from` (nested node_modules first). */
function lookup(pkgs: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const p = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (pkgs[p]) return p;
    if (!base) return undefined;
    const i = base.lastIndexOf('/node_modules/');
    base = i < 0 ? '' : base.slice(0, i);
  }
}

/** The lock entries of `names` and everything they depend on, as this repository resolved them. */
function closure(pkgs: Record<string, LockEntry>, names: string[]): Record<string, LockEntry> {
  const out: Record<string, LockEntry> = {};
  const add = (path: string | undefined): void => {
    if (!path || out[path]) return;
    const { dev: _d, devOptional: _o, peer: _p, ...entry } = pkgs[path]!;
    out[path] = entry;
    for (const d of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) add(lookup(pkgs, path, d));
  };
  for (const n of names) add(lookup(pkgs, '', n));
  return out;
}

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
}

/** The workspace packages, by the folder under packages/ that holds each. */
export type Workspace = 'client' | 'ops' | 'epicsperf';

/**
 * Pack `workspaces` (their built dist/) into `dir` and install them into `dir/app` with what
 * they depend on from this repository's lockfile; returns the app folder.
 */
export function makeConsumer(dir: string, workspaces: Workspace[], files: Record<string, string>): string {
  const repoLock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const pkgs = repoLock.packages;
  const app = join(dir, 'app');
  mkdirSync(app, { recursive: true });
  const dependencies: Record<string, string> = {
    '@types/node': pkgs['node_modules/@types/node']!.version!,
    typescript: pkgs['node_modules/typescript']!.version!,
  };
  const packedEntries: Record<string, LockEntry> = {};
  const external: string[] = ['@types/node', 'typescript'];
  for (const w of workspaces) {
    const out = npm(['pack', '--ignore-scripts', '--json', '--pack-destination', dir], join(REPO, 'packages', w));
    const tgzName = (JSON.parse(out) as Array<{ filename: string }>)[0]!.filename;
    const tgz = `file:../${tgzName}`;
    const packed = JSON.parse(
      execFileSync('tar', ['-xzOf', join(dir, tgzName), 'package/package.json'], { encoding: 'utf8' }),
    ) as LockEntry & {
      name: string;
      dependencies?: Record<string, string>;
    };
    dependencies[packed.name] = tgz;
    packedEntries[`node_modules/${packed.name}`] = {
      version: packed.version,
      resolved: tgz,
      license: packed.license,
      dependencies: packed.dependencies,
      bin: packed.bin,
      engines: packed.engines,
    };
    external.push(...Object.keys(packed.dependencies ?? {}).filter((d) => !pkgs[`node_modules/${d}`]?.link));
  }
  const pj = { name: 'consumer', private: true, type: 'module', dependencies };
  const lock = {
    name: 'consumer',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name: 'consumer', dependencies }, ...packedEntries, ...closure(pkgs, external) },
  };
  writeFileSync(join(app, 'package.json'), JSON.stringify(pj, null, 2));
  writeFileSync(join(app, 'package-lock.json'), JSON.stringify(lock, null, 2));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(app, name, '..'), { recursive: true });
    writeFileSync(join(app, name), text);
  }
  try {
    npm(['ci', '--offline', '--no-audit', '--no-fund'], app);
  } catch {
    // A cache without some tarball: the same lockfile, fetched where needed.
    npm(['ci', '--prefer-offline', '--no-audit', '--no-fund'], app);
  }
  return app;
}
