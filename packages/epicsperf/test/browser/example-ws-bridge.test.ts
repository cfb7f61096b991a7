// The example app end to end: the built-in IOC, examples/ws-bridge/server.js on the built
// library, and its page in headless Chromium: a counter advancing with its alarm severity, and a
// put typed into the page reaching the IOC (read back with pyepics); the same over PV Access for
// pva:// names.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killOnExit } from '../../src/children.js';
import { startIoc, type Ioc } from '../../src/ioc/index.js';
import { pyepicsRead } from 'epicsperf-testkit/client-helpers';
import { launchBrowser } from '../helpers/browser.js';

const SERVER = fileURLToPath(new URL('../../../../examples/ws-bridge/server.js', import.meta.url));

let ioc: Ioc;
let bridge: ChildProcess;
let url: string;
let browser: Browser;
let page: Page;

/** Start the bridge on a free port and wait for the line that says where it listens. */
function startBridge(env: Record<string, string>): Promise<string> {
  bridge = spawn(process.execPath, [SERVER, '--port', '0'], {
    env: { ...process.env, ...env, EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killOnExit(bridge);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    bridge.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    bridge.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    bridge.once('exit', (code) => reject(new Error(`the bridge exited (${code}): ${err.trim()}`)));
  });
}

beforeAll(async () => {
  ioc = await startIoc({ records: 2, rate: 10, arrayElements: 0 });
  url = await startBridge(ioc.env);
  browser = await launchBrowser();
  page = await browser.newPage();
});

afterAll(async () => {
  await browser?.close();
  if (bridge && bridge.exitCode === null) {
    const gone = new Promise((r) => bridge.once('exit', r));
    bridge.kill('SIGTERM');
    await Promise.race([gone, new Promise((r) => setTimeout(r, 3000))]);
    bridge.kill('SIGKILL');
  }
  await ioc?.stop();
});

const cell = (pv: string, c: string): string => `tr[data-pv="${pv}"] .${c}`;

/** Wait until the text of `sel` on the page satisfies `pred`; returns it. */
async function waitText(sel: string, pred: (t: string) => boolean, ms = 10_000): Promise<string> {
  const end = Date.now() + ms;
  for (;;) {
    const t = (await page.textContent(sel)) ?? '';
    if (pred(t)) return t;
    if (Date.now() > end) throw new Error(`${sel} still reads '${t}'`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('ws-bridge example in Chromium', () => {
  it('shows a counter advancing, connected, in MINOR alarm', async () => {
    await page.goto(`${url}?pv=TEST:CALC1&pv=TEST:KIND:LONG&pv=TEST:KIND:ENUM`);
    const first = Number(await waitText(cell('TEST:CALC1', 'value'), (t) => /^\d+$/.test(t)));
    await waitText(cell('TEST:CALC1', 'value'), (t) => Number(t) >= first + 3);
    expect(await page.textContent(cell('TEST:CALC1', 'connection'))).toBe('connected');
    expect(await page.textContent(cell('TEST:CALC1', 'severity'))).toBe('MINOR');
    expect(await page.textContent('#bridge')).toBe('connected');
    // The enum shows its state once the bridge has read the states.
    await waitText(cell('TEST:KIND:ENUM', 'value'), (t) => t === 'On');
  });

  it('a put typed into the page reaches the IOC and comes back as an update', async () => {
    await page.fill(cell('TEST:KIND:LONG', 'input'), '77');
    await page.click(cell('TEST:KIND:LONG', 'put'));
    await waitText(cell('TEST:KIND:LONG', 'result'), (t) => t === 'done');
    expect((await pyepicsRead(ioc.env, ['TEST:KIND:LONG']))[0]!.value).toBe(77);
    await waitText(cell('TEST:KIND:LONG', 'value'), (t) => t === '77 counts');
    await page.fill(cell('TEST:KIND:ENUM', 'input'), 'Fault');
    await page.click(cell('TEST:KIND:ENUM', 'put'));
    await waitText(cell('TEST:KIND:ENUM', 'value'), (t) => t === 'Fault');
    expect((await pyepicsRead(ioc.env, ['TEST:KIND:ENUM']))[0]!.value).toBe(2);
  });

  it('a bad put is reported on the page, not thrown', async () => {
    await page.fill(cell('TEST:KIND:LONG', 'input'), 'not a number');
    await page.click(cell('TEST:KIND:LONG', 'put'));
    await waitText(cell('TEST:KIND:LONG', 'result'), (t) => t.startsWith('failed:'));
  });
});

describe('ws-bridge example in Chromium, pva:// names', () => {
  const CALC = 'pva://TEST:CALC2',
    LONG = 'pva://TEST:KIND:LONG',
    ENUM = 'pva://TEST:KIND:ENUM';

  it('shows a counter over PV Access advancing, connected, in MINOR alarm, with units and enum states', async () => {
    await page.goto(`${url}?pv=${encodeURIComponent(CALC)}&pv=${encodeURIComponent(LONG)}&pv=${encodeURIComponent(ENUM)}`);
    const first = Number(await waitText(cell(CALC, 'value'), (t) => /^\d+$/.test(t)));
    await waitText(cell(CALC, 'value'), (t) => Number(t) >= first + 3);
    expect(await page.textContent(cell(CALC, 'connection'))).toBe('connected');
    expect(await page.textContent(cell(CALC, 'severity'))).toBe('MINOR');
    // Units and enum states come from the PV Access structure (display.units, the NTEnum's choices).
    await waitText(cell(LONG, 'value'), (t) => / counts$/.test(t));
    await waitText(cell(ENUM, 'value'), (t) => ['Off', 'On', 'Fault'].includes(t));
  });

  it('a put typed into the page goes over PV Access to the IOC and comes back as an update', async () => {
    await page.fill(cell(LONG, 'input'), '55');
    await page.click(cell(LONG, 'put'));
    await waitText(cell(LONG, 'result'), (t) => t === 'done');
    expect((await pyepicsRead(ioc.env, ['TEST:KIND:LONG']))[0]!.value).toBe(55);
    await waitText(cell(LONG, 'value'), (t) => t === '55 counts');
    await page.fill(cell(ENUM, 'input'), 'Off');
    await page.click(cell(ENUM, 'put'));
    await waitText(cell(ENUM, 'value'), (t) => t === 'Off');
    expect((await pyepicsRead(ioc.env, ['TEST:KIND:ENUM']))[0]!.value).toBe(0);
    await page.fill(cell(LONG, 'input'), 'not a number');
    await page.click(cell(LONG, 'put'));
    await waitText(cell(LONG, 'result'), (t) => t.startsWith('failed:'));
  });
});
