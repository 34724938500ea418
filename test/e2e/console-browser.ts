// Headless Chromium for the console's tests: Debian's `chromium` package driven by playwright-core,
// which downloads no browser of its own.
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Chromium, or an error saying how to install it (as .ci/run does). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `the console's browser tests need Debian's chromium at ${CHROMIUM}: run "apt-get install -y chromium" as root (.ci/run does)`,
    );
  }
  // No sandbox: CI and test containers run as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/** A fresh browser session at 1280 px, signed in to the console at `url` with `token` (through its form). */
export async function signedInPage(
  browser: Browser,
  url: string,
  token: string,
  options: { javaScriptEnabled?: boolean } = {},
): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  const page = await context.newPage();
  await page.goto(`${url}/ui/sign-in`);
  await page.fill('#token', token);
  await Promise.all([page.waitForURL(/\/ui\/tree$/), page.click('button[type=submit]')]);
  return page;
}
