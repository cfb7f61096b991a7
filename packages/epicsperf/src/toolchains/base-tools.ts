// EPICS base's own command-line CA tools (caget, caput, camonitor, cainfo), for checking a server
// as operators do: neither the epicscorelibs wheel nor any registry here ships them, so their C
// sources come from Debian's epics-base source package (pinned by its SHA-256) and are compiled on
// first use against the wheel's libca, as the C runner is, into EPICSPERF_HOME.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { epicsperfHome } from '../home.js';
import { buildIfChanged, takesHere } from './built.js';
import { coreLibs, platformIncludes } from './clib.js';

const DEBIAN_SOURCE = 'http://deb.debian.org/debian/pool/main/e/epics-base/epics-base_7.0.3.1.orig.tar.gz';
const DEBIAN_SHA256 = '1de65638a806be6c0eebc0b7840ed9dd1a1a7879bcb6ab0da88a1e8e456b709c';
/** The tools' folder inside the tarball (5 levels: base-7.0.3.1/modules/ca/src/tools). */
const TOOLS_DIR = 'base-7.0.3.1/modules/ca/src/tools';

/** Node's script that downloads argv[1] to argv[3], checking its SHA-256 (argv[2]). */
const DOWNLOAD = `
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
const [url, sha, to] = process.argv.slice(1);
const r = await fetch(url).catch((e) => ({ ok: false, status: e.cause?.code ?? e.message }));
if (!r.ok) { console.error('error: cannot download ' + url + ': ' + r.status); process.exit(1); }
const body = Buffer.from(await r.arrayBuffer());
if (createHash('sha256').update(body).digest('hex') !== sha) { console.error('error: ' + url + ' is not the pinned file (SHA-256)'); process.exit(1); }
writeFileSync(to, body);
`;

export const BASE_TOOLS = ['caget', 'caput', 'camonitor', 'cainfo'] as const;
export type BaseTool = (typeof BASE_TOOLS)[number];

/**
 * Build the tools into `<epicsperfHome()>/bin/base-tools/` unless they are there, built from the
 * same source and epicscorelibs. Resolves to the folder, or to a one-line reason (no C compiler,
 * no network to Debian's archive, a checksum that does not match).
 */
export async function buildBaseTools(python: string): Promise<{ path: string } | { error: string }> {
  const libs = await coreLibs(python);
  if ('error' in libs) return libs;
  const cc = process.env.CC || 'cc';
  const flags = platformIncludes(libs.include).map((dir) => `-I${dir}`);
  return buildIfChanged({
    what: "EPICS base's CA tools (caget, caput, camonitor, cainfo)",
    path: join(epicsperfHome(), 'bin', 'base-tools'),
    folder: true,
    inputs: [fileURLToPath(import.meta.url)],
    key: { source: DEBIAN_SOURCE, sha256: DEBIAN_SHA256, version: libs.version, lib: libs.lib, cc, platform: process.platform },
    takes: takesHere(5),
    steps: (out) => [
      {
        tool: 'Node',
        command: process.execPath,
        args: ['--input-type=module', '-e', DOWNLOAD, DEBIAN_SOURCE, DEBIAN_SHA256, join(out, 'source.tar.gz')],
      },
      { tool: 'tar', command: 'tar', args: ['xzf', 'source.tar.gz', '--strip-components=5', TOOLS_DIR], cwd: out },
      ...BASE_TOOLS.map((tool) => ({
        tool: 'C compiler',
        command: cc,
        args: ['-O2', ...flags, '-o', tool, `${tool}.c`, 'tool_lib.c', `-L${libs.lib}`, '-lca', '-lCom', `-Wl,-rpath,${libs.lib}`],
        cwd: out,
      })),
    ],
  });
}
