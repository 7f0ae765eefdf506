// Headless Debian Chromium for the page tests (playwright-core drives it; no browser download).
// A missing Chromium skips those tests loudly, and fails them under CI=true.
import fs from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { chromium, type Browser, type Page } from 'playwright-core';

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

/**
 * The page shows the seeded hostile command (a `<script>` setting the title and `__pwned`, a
 * zero-width space in an IBAN) as inert text with the invisible character as a visible marker.
 */
export async function assertCommandInert(t: ExecutionContext, page: Page): Promise<void> {
  t.false(await page.evaluate(() => document.title.includes('pwned')));
  t.is(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
  t.is(await page.locator('#command script, #command img').count(), 0);
  const command = await page.textContent('#command') ?? '';
  t.true(command.includes('<script>document.title'), 'the script shows as text');
  t.true(command.includes('DE89⟨U+200B⟩3704'), command);
  t.false(command.includes('\u200B'));
}
