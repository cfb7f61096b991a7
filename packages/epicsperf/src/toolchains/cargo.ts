// The Rust runners (rust/): built with cargo in release mode from the committed lock file, the
// crates fetched from crates.io into cargo's own cache, the build kept in EPICSPERF_HOME; built
// on first use, again only when a source, the lock file or the toolchain changes. cargo is
// $CARGO's, else the one on PATH, else rustup's (~/.cargo/bin), which is not always on PATH. It
// runs in rust/, whose rust-toolchain.toml has rustup's proxies take the toolchain the crates
// need (a nightly until Rust 1.97 is stable: see that file).
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { epicsperfHome, PACKAGE_ROOT } from '../home.js';
import type { LibraryStatus } from '../results/index.js';
import { buildError, buildIfChanged, findCommand, listFiles, toolVersion } from './built.js';

const SOURCES = join(PACKAGE_ROOT, 'rust');
const MANIFEST = join(SOURCES, 'Cargo.toml');
const LOCK = join(SOURCES, 'Cargo.lock');

/** Where the built Rust runners live (it may not exist yet). */
export function rustRunnersDir(): string {
  return join(epicsperfHome(), 'rust', 'bin');
}

function cargo(): string {
  if (process.env.CARGO) return process.env.CARGO;
  const rustup = join(process.env.CARGO_HOME ?? join(homedir(), '.cargo'), 'bin', 'cargo');
  return findCommand('cargo', [rustup]);
}

/** The crates rust/Cargo.toml depends on, at the versions its lock file pins (`epics-ca-rs` -> `0.33.0`); none without them. */
export function rustLibraries(): Record<string, string> {
  let manifest: string;
  let lock: string;
  try {
    manifest = readFileSync(MANIFEST, 'utf8');
    lock = readFileSync(LOCK, 'utf8');
  } catch {
    return {};
  }
  const section = /^\[dependencies\]\s*$([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(manifest)?.[1] ?? '';
  const direct = [...section.matchAll(/^([A-Za-z0-9_-]+)\s*=/gm)].map((m) => m[1]!);
  const out: Record<string, string> = {};
  for (const m of lock.matchAll(/\[\[package\]\]\s*name = "([^"]+)"\s*version = "([^"]+)"/g))
    if (direct.includes(m[1]!)) out[m[1]!] = m[2]!;
  return out;
}

/** cargo and rustc, as `doctor` reports them. */
export async function rustToolchain(): Promise<Record<string, LibraryStatus>> {
  const c = cargo();
  const [cargoV, rustc] = await Promise.all([
    toolVersion(c, ['-V'], SOURCES),
    toolVersion(findCommand('rustc', [join(dirname(c), 'rustc')]), ['-V'], SOURCES),
  ]);
  return { cargo: cargoV, rustc };
}

/**
 * Build the Rust runners `binaries` into `rustRunnersDir()` unless the ones there are current.
 * Resolves to the folder or a one-line reason (no cargo, a crate it cannot fetch, a failed
 * build), also kept for `clients` and the bench rows.
 */
export async function buildRustRunners(binaries: readonly string[]): Promise<{ path: string } | { error: string }> {
  const c = cargo();
  const version = await toolVersion(c, ['-V'], SOURCES);
  const target = join(epicsperfHome(), 'rust', 'target');
  return buildIfChanged({
    what: 'the Rust runners',
    path: rustRunnersDir(),
    folder: true,
    inputs: listFiles(SOURCES, ['target']),
    key: { cargo: version.version ?? version.error, binaries },
    steps: () => [
      {
        tool: 'cargo',
        command: c,
        args: ['build', '--release', '--locked', '--quiet', '--manifest-path', MANIFEST, '--target-dir', target],
        cwd: SOURCES,
        // rustup's cargo finds its rustc through PATH.
        env: { PATH: [dirname(c), process.env.PATH ?? ''].join(delimiter) },
      },
    ],
    finish: (out) => {
      for (const b of binaries) {
        const built = join(target, 'release', b);
        if (!existsSync(built)) return `the Rust runners did not build ${b}`;
        copyFileSync(built, join(out, b));
      }
      return undefined;
    },
  });
}

/** Why the Rust runners are not built, or undefined when they are. */
export function rustBuildError(): string | undefined {
  return buildError(rustRunnersDir());
}

/** The command line of a Rust runner. */
export function rustRunnerCommand(binary: string): { command: string; args: string[] } {
  return { command: join(rustRunnersDir(), binary), args: [] };
}
