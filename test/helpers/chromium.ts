import { accessSync, constants } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import type { Test } from 'tap';

/** Where the browser tests look for Chromium; `scripts/bootstrap.sh test` installs it there when run as root. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Why the browser tests cannot run here, or `false` when Chromium is installed. Nothing is installed from
 * here: a missing browser is a skip with instructions, any other problem a failure.
 */
export function chromiumMissing(): string | false {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return false;
  } catch {
    return `Chromium is not installed at ${CHROMIUM_PATH} (install it: sudo apt-get install -y chromium, or run npm test as root)`;
  }
}

/** A headless Chromium, closed at teardown. */
export async function launchChromium(t: Test): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  return browser;
}
