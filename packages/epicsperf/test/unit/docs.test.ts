// The documentation: docs/results.md and the README's headline table are what
// benchmarks/results-doc.mjs makes of the result files (nobody edits them by hand), and every
// relative link of the Markdown pages resolves, to a file and, with a #fragment, to a heading.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { renderDocs } from '../../../../benchmarks/results-doc.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** The pages whose links are checked: the README, the changelog, docs/ and the packages' READMEs. */
function pages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  return ['README.md', 'CHANGELOG.md', 'packages/client/README.md', 'packages/epicsperf/README.md', ...docs];
}

/** Markdown without fenced code blocks and inline code, where nothing is a link. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every relative link of a page that does not resolve, as "target: why". */
function brokenLinks(page: string): string[] {
  const file = join(ROOT, page);
  const broken: string[] = [];
  for (const m of prose(readFileSync(file, 'utf8')).matchAll(/\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [path, fragment] = target.split('#') as [string, string | undefined];
    const dest = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
    if (!dest.startsWith(ROOT) || !existsSync(dest)) {
      broken.push(`${target}: no such file`);
      continue;
    }
    if (fragment !== undefined) {
      if (!statSync(dest).isFile() || !dest.endsWith('.md')) broken.push(`${target}: a fragment of something not a Markdown page`);
      else if (!anchors(dest).has(fragment)) broken.push(`${target}: no heading #${fragment} in ${relative(ROOT, dest)}`);
    }
  }
  return broken;
}

describe('documentation', () => {
  it('docs/results.md and the README headline table are what benchmarks/results-doc.mjs writes', () => {
    for (const [path, text] of Object.entries(renderDocs(ROOT))) {
      expect(readFileSync(join(ROOT, path), 'utf8'), `${path} is out of date: run node benchmarks/results-doc.mjs`).toBe(text);
    }
  });

  it('README.md stays under 250 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThan(250);
  });

  it.each(pages())('every relative link of %s resolves', (page) => {
    expect(brokenLinks(page)).toEqual([]);
  });

  it('the link check finds a missing file and a missing heading', () => {
    expect(slug('`epicsperf bench [snapshot|monitor]`')).toBe('epicsperf-bench-snapshotmonitor');
    expect(slug('An example app: a WebSocket bridge')).toBe('an-example-app-a-websocket-bridge');
    const readme = anchors(join(ROOT, 'README.md'));
    expect(readme.has('quick-start')).toBe(true);
    expect(readme.has('no-such-heading')).toBe(false);
  });
});
