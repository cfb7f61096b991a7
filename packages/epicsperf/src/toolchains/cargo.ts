// The Rust runners (rust/): built with cargo in release mode (or the profile
// $EPICSPERF_RUST_PROFILE names: the test suite's `quick`) from the committed lock file, the
// crates fetched from crates.io into cargo's own cache, the build kept in EPICSPERF_HOME; built
// on first use, again only when a source, the lock file or the toolchain changes. cargo is
// $CARGO's, else the one on PATH, else rustup's (~/.cargo/bin), which is not always on PATH. It
// runs in rust/, whose rust-toolchain.toml has rustup's proxies take the toolchain the crates
// need (a nightly until Rust 1.97 is stable: see that file).
import { copyFileSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { epicsperfHome, PACKAGE_ROOT } from '../home.js';
import type { LibraryStatus } from '../results/index.js';
import { watch } from '../progress.js';
import { buildError, buildIfChanged, capture, findCommand, listFiles, takesHere, toolVersion } from './built.js';

const SOURCES = join(PACKAGE_ROOT, 'rust');
const MANIFEST = join(SOURCES, 'Cargo.toml');
const LOCK = join(SOURCES, 'Cargo.lock');

/**
 * The cargo profile of the runners: release, else $EPICSPERF_RUST_PROFILE. The test suite sets
 * `quick` (rust/Cargo.toml: unoptimised, built in about a third of the time), since it checks
 * what the runners do, not how fast; a bench row of such a build says so (clientStatuses).
 */
export function rustProfile(): string {
  return process.env.EPICSPERF_RUST_PROFILE || 'release';
}

/** Where the built Rust runners of `rustProfile()` live (it may not exist yet): a folder per profile. */
export function rustRunnersDir(): string {
  const profile = rustProfile();
  return join(epicsperfHome(), 'rust', profile === 'release' ? 'bin' : `bin-${profile}`);
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

/** What rustup says while it installs the toolchain rust-toolchain.toml names, as a progress line. */
function rustupProgress(line: string): string | undefined {
  const m = /^info: (?:syncing channel updates for '([^']+)'|(downloading|installing) component '([^']+)')/.exec(line.trim());
  if (!m) return undefined;
  return m[1] ? `rustup is installing ${m[1]} (rust/rust-toolchain.toml)` : `rustup ${m[2]} ${m[3]}`;
}

/** A crate as cargo names it in its lines and its tree: `tokio v1.40.0`. */
const crateOf = (line: string): string | undefined => /^\s*(?:Compiling )?(\S+ v\S+)/.exec(line)?.[1];

/**
 * cargo's lines as progress: a crate fetched or compiled, with the count of those compiled of
 * those the build of `manifest` compiles, which `cargo tree` (started here, about a second)
 * tells (without one, the count alone).
 */
function cargoProgress(command: string, env: Record<string, string>, manifest?: string): (line: string) => string | undefined {
  let total: number | undefined;
  if (manifest)
    void capture(
      command,
      ['tree', '--locked', '--edges', 'normal,build', '--prefix', 'none', '--format', '{p}', '--manifest-path', manifest],
      { cwd: SOURCES, env },
    ).then((r) => {
      const crates = new Set(r.stdout.split('\n').map(crateOf).filter(Boolean));
      if (r.code === 0 && crates.size > 0) total = crates.size;
    });
  const compiled = new Set<string>();
  return (line) => {
    const m = /^\s*(Compiling|Downloaded) (\S+) v(\S+)/.exec(line);
    if (!m) return rustupProgress(line);
    if (m[1] === 'Downloaded') return `downloaded ${m[2]} ${m[3]}`;
    compiled.add(`${m[2]} v${m[3]}`);
    return `compiling ${m[2]} (${compiled.size}${total ? `/${total}` : ''})`;
  };
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

/** The binaries of the manifest (`src/bin/*.rs`), the clients' and the servers': one cargo build makes them all. */
const rustBinaries = (): string[] =>
  readdirSync(join(SOURCES, 'src', 'bin'))
    .filter((f) => f.endsWith('.rs'))
    .map((f) => f.slice(0, -3))
    .sort();

/**
 * Build the Rust runners (every binary of the manifest) into `rustRunnersDir()` unless the ones
 * there are current. Resolves to the folder or a one-line reason (no cargo, a crate it cannot
 * fetch, a failed build), also kept for `clients` and the bench rows.
 */
export async function buildRustRunners(): Promise<{ path: string } | { error: string }> {
  const binaries = rustBinaries();
  const { c, version, env } = await cargoTool();
  const target = join(epicsperfHome(), 'rust', 'target');
  const profile = rustProfile();
  return buildIfChanged({
    what: 'the Rust runners',
    path: rustRunnersDir(),
    folder: true,
    inputs: listFiles(SOURCES, ['target']),
    key: { cargo: version, binaries, profile },
    takes: `${takesHere(280, true)}, more when cargo fetches the crates`,
    steps: () => [
      {
        tool: 'cargo',
        command: c,
        args: ['build', '--profile', profile, '--locked', '--manifest-path', MANIFEST, '--target-dir', target],
        cwd: SOURCES,
        env,
        progress: cargoProgress(c, env, MANIFEST),
        // Its other lines of progress: what it fetches, what it waits for, when it is done.
        chatter: /^\s*(Updating|Downloading|Locking|Blocking|Finished|Fresh)\b|^info: /,
      },
    ],
    finish: (out) => {
      for (const b of binaries) {
        // cargo keeps the dev profile's output in debug/, every other in a folder of its name.
        const built = join(target, profile === 'dev' ? 'debug' : profile, b);
        if (!existsSync(built)) return `the Rust runners did not build ${b}`;
        copyFileSync(built, join(out, b));
      }
      return undefined;
    },
  });
}

/**
 * cargo, its version (rustup installs the toolchain rust/rust-toolchain.toml names when it is
 * missing, a minute or two: said meanwhile) and the environment it runs in (rustup's cargo finds
 * its rustc through PATH).
 */
async function cargoTool(): Promise<{ c: string; version: string; env: Record<string, string> }> {
  const c = cargo();
  const w = watch('checking the Rust toolchain');
  const version = await toolVersion(c, ['-V'], SOURCES, (line) => {
    const p = rustupProgress(line);
    if (p) w.progress(`Rust toolchain: ${p}`);
  });
  w.stop();
  return { c, version: version.version ?? version.error ?? '', env: { PATH: [dirname(c), process.env.PATH ?? ''].join(delimiter) } };
}

/**
 * The gateways installed from crates.io (the servers `ca-gateway-rs` and `pva-gateway-rs`):
 * epics-rs's, in the crate epics-bridge-rs of the release the runners' epics-rs crates are of,
 * built from its own lock file with the features of the two gateways' binaries, as a site
 * installs it (`cargo install`).
 */
export const RUST_GATEWAYS = { crate: 'epics-bridge-rs', version: '0.33.0', features: ['ca-gateway-bin', 'pva-gateway-bin'] } as const;

/** Where the installed gateways of `rustProfile()` live (`<dir>/bin/ca-gateway-rs`; it may not exist yet). */
export function rustGatewaysDir(): string {
  const profile = rustProfile();
  return join(epicsperfHome(), 'rust', profile === 'release' ? 'gateways' : `gateways-${profile}`);
}

/**
 * Install the gateways of RUST_GATEWAYS into `rustGatewaysDir()` unless they are there: `cargo
 * install --locked`, in release mode, or for any other profile unoptimised, without debug
 * information and in four codegen units a crate (the test suite's, which checks what they do, not
 * how fast). Resolves to the folder or a one-line reason.
 */
export async function buildRustGateways(): Promise<{ path: string } | { error: string }> {
  const { c, version, env } = await cargoTool();
  const { crate, features } = RUST_GATEWAYS;
  const release = rustProfile() === 'release';
  // As the runners' quick profile (rust/Cargo.toml): dev's, without debug information, in four
  // codegen units a crate (about a fifth less CPU than dev's 256, measured on 2 cores).
  const buildEnv = release ? env : { ...env, CARGO_PROFILE_DEV_DEBUG: '0', CARGO_PROFILE_DEV_CODEGEN_UNITS: '4' };
  return buildIfChanged({
    what: `the Rust gateways (${crate})`,
    path: rustGatewaysDir(),
    folder: true,
    inputs: [join(SOURCES, 'rust-toolchain.toml')],
    key: { cargo: version, ...RUST_GATEWAYS, release },
    takes: `${takesHere(release ? 370 : 140, true)}, more when cargo fetches the crates`,
    steps: (out) => [
      {
        tool: 'cargo',
        command: c,
        args: [
          'install',
          `${crate}@${RUST_GATEWAYS.version}`,
          '--locked',
          '--no-default-features',
          '--features',
          features.join(','),
          ...(release ? [] : ['--debug']),
          '--root',
          out,
          '--target-dir',
          join(epicsperfHome(), 'rust', 'gateways-target'),
        ],
        cwd: SOURCES,
        env: buildEnv,
        progress: cargoProgress(c, buildEnv),
        chatter:
          /^\s*(Updating|Downloading|Downloaded|Locking|Blocking|Finished|Fresh|Installing|Installed|Replacing|Replaced)\b|^info: |^warning: be sure to add/,
      },
    ],
  });
}

/** The program of an installed Rust gateway (`ca-gateway-rs`). */
export function rustGatewayCommand(binary: string): string {
  return join(rustGatewaysDir(), 'bin', binary);
}

/** Why the Rust runners are not built, or undefined when they are. */
export function rustBuildError(): string | undefined {
  return buildError(rustRunnersDir());
}

/** The command line of a Rust runner. */
export function rustRunnerCommand(binary: string): { command: string; args: string[] } {
  return { command: join(rustRunnersDir(), binary), args: [] };
}
