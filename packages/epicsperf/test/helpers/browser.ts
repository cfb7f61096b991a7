// A headless Chromium for tests that open pages: Debian's /usr/bin/chromium (or
// EPICSPERF_CHROMIUM), driven by playwright-core (which gives it a new empty profile), with the
// flags a closed network needs.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.EPICSPERF_CHROMIUM ?? '/usr/bin/chromium';

/** Launches Chromium headless. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's chromium package (.ci/run does) or set EPICSPERF_CHROMIUM`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
