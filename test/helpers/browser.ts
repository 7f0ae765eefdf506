// Headless Debian Chromium for the page tests (playwright-core drives it; no browser download).
// A missing Chromium skips those tests loudly, and fails them under CI=true.
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = path.resolve('test/artifacts');

/** `browserTest` (serial, or skipped without Chromium) and the shared browser, launched once per file. */
export function useBrowser(what: string): { browserTest: typeof test.serial; browser(): Browser } {
  const haveChromium = fs.existsSync(CHROMIUM);
  if (!haveChromium) {
    const message = `${CHROMIUM} is missing: the ${what} browser tests are SKIPPED (apt-get install -y chromium)`;
    if (process.env.CI === 'true') throw new Error(`${message} — and CI=true requires them.`);
    process.stderr.write(`\n!!!!! ${message} !!!!!\n\n`);
  }
  let launched: Browser | undefined;
  test.before(async () => {
    if (!haveChromium) return;
    // Without the background-networking flags Chromium keeps dialling hosts this machine cannot reach.
    launched = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  test.after.always(async () => launched?.close());
  return {
    browserTest: (haveChromium ? test.serial : test.skip) as typeof test.serial,
    browser: () => {
      if (!launched) throw new Error('the browser is not running');
      return launched;
    },
  };
}
