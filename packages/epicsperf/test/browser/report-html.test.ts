// The HTML report of stored fixture runs, opened in headless Chromium: no console error, every
// chart has its marks, the summary names the best client that passed every check, incomplete
// results are marked, and a screenshot is kept under test-artifacts/.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.js';
import { benchHtml } from '../../src/workloads/index.js';
import { loadResults } from '../../src/results/store.js';

const FIXTURES = join(import.meta.dirname, '..', '..', '..', '..', 'fixtures', 'results');
const ARTIFACTS = join(import.meta.dirname, '..', '..', '..', '..', 'test-artifacts');
const runA = loadResults(join(FIXTURES, 'run-a.json'));
const runB = loadResults(join(FIXTURES, 'run-b.json'));

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
  mkdirSync(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
});

/** Opens `html` from a file with every request that leaves the page refused (it must need none). */
async function open(html: string, name: string): Promise<{ page: Page; errors: string[]; requests: string[] }> {
  const file = join(ARTIFACTS, `${name}.html`);
  writeFileSync(file, html);
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:')) return route.continue();
    requests.push(url);
    return route.abort();
  });
  await page.goto(`file://${file}`);
  return { page, errors, requests };
}

describe('HTML report in a browser', () => {
  it('one run: summary on top with the best complete client, charts with their marks, incomplete results marked', async () => {
    const html = await benchHtml(runA);
    expect(html).not.toMatch(/<script/i);
    const { page, errors, requests } = await open(html, 'report-run-a');
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);

    // The summary comes first and names, per workload, the best client that passed every check.
    const firstSection = await page.locator('section').first().getAttribute('id');
    expect(firstSection).toBe('summary');
    const best = await page
      .locator('table.summary tr')
      .evaluateAll((rows) =>
        rows
          .slice(1)
          .map((r) => [
            r.querySelector('th a')?.textContent,
            r.querySelector('.best b')?.textContent ?? r.querySelector('td .fail')?.textContent,
          ]),
      );
    expect(best).toEqual([
      ['snapshot 97+15', 'c-libca'],
      ['snapshot 1000+95', 'node'], // pyepics's wall time is shorter, but it left 400 names unanswered
      ['monitor', 'c-libca'],
      ['array', 'c-libca'],
      ['latency', 'c-libca'],
    ]);
    // Failed checks in red in the summary.
    const failText = await page.locator('table.summary .fail').allTextContents();
    expect(failText.some((t) => /400 PVs that exist unanswered/.test(t))).toBe(true);
    expect(failText.some((t) => /12 updates missed/.test(t))).toBe(true);
    const red = await page
      .locator('table.summary .fail')
      .first()
      .evaluate((e) => (globalThis as unknown as { getComputedStyle(x: unknown): { color: string } }).getComputedStyle(e).color);
    expect(red).toBe('rgb(198, 40, 40)');

    // Every chart has a bar per client; the latency chart a line per client and percentile.
    const charts = page.locator('figure.chart');
    expect(await charts.count()).toBe(6);
    for (const key of ['snapshot 97+15', 'snapshot 1000+95', 'monitor', 'array', 'latency']) {
      const bars = await page.locator(`figure.chart[data-workload="${key}"] svg g.mark-rect path`).count();
      expect(bars, key).toBe(3);
    }
    expect(await page.locator('figure.latency svg g.mark-line path').count()).toBe(6);
    expect(await page.locator('figure.latency svg g.mark-symbol.role-mark path').count()).toBe(2 * (3 + 3 + 2));

    // pyepics's incomplete 1000+95 result: a grey dashed bar labelled in red, drawn after the complete ones.
    const snap = page.locator('figure.chart[data-workload="snapshot 1000+95"] svg');
    const fills = await snap
      .locator('g.mark-rect path')
      .evaluateAll((ps) => ps.map((p) => [p.getAttribute('fill'), p.getAttribute('stroke-dasharray')]));
    expect(fills.filter(([f]) => f === '#c8c8c8')).toHaveLength(1);
    expect(fills.find(([f]) => f === '#c8c8c8')![1]).toBe('4,2');
    const labels = await snap.locator('g.mark-text text').allTextContents();
    expect(labels.find((t) => t.includes('✗'))).toMatch(/0\.925 ✗ stopped after 30 s/);
    const yLabels = (await snap.locator('g.role-axis-label text').allTextContents()).filter((t) => !/^[\d.,]+$/.test(t));
    expect(yLabels).toEqual(['node', 'c-libca', 'pyepics']);

    // The environment as a table, with every library's version or why it is missing.
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's locator, the text as shown
    const env = await page.locator('#environment table').innerText();
    expect(env).toMatch(/pyepics\s+3\.5\.7/);
    expect(env).toMatch(/caproto\s+missing: not installed/);
    expect(env).toMatch(/CPU steal, snapshot 1000\+95\s+0\.3 %/);

    await page.screenshot({ path: join(ARTIFACTS, 'report-run-a.png'), fullPage: true });
    expect(readFileSync(join(ARTIFACTS, 'report-run-a.png')).length).toBeGreaterThan(10_000);
    await page.close();
  });

  it('two runs side by side: one summary column per run, a bar per client and run', async () => {
    const { page, errors } = await open(await benchHtml([runA, runB]), 'report-run-a-b');
    expect(errors).toEqual([]);
    expect(await page.locator('table.summary tr').first().locator('th').allTextContents()).toEqual([
      'workload',
      '#1 2026-11-20 10:00 lab-a',
      '#2 2026-11-21 10:00 lab-b',
    ]);
    expect(await page.locator('figure.chart[data-workload="monitor"] svg g.mark-rect path').count()).toBe(6);
    // In B, c-libca's monitor CPU doubled: node is now the best.
    const monitor = await page
      .locator('table.summary tr', { has: page.locator('a', { hasText: /^monitor$/ }) })
      .locator('.best b')
      .allTextContents();
    expect(monitor).toEqual(['c-libca', 'node']);
    await page.screenshot({ path: join(ARTIFACTS, 'report-run-a-b.png'), fullPage: true });
    await page.close();
  });
});
