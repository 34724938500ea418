// Headless Chromium for the console's tests: Debian's `chromium` package (found or installed by
// scripts/test-tools.sh) driven by playwright-core, which downloads no browser of its own.
import { type Browser, chromium, type Page } from 'playwright-core';
import { testTool } from '../support/test-tools.ts';

/** Chromium, or the test-tools error saying what to install. */
export async function launchChromium(): Promise<Browser> {
  // No sandbox: CI and test containers run as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: await testTool('chromium'), args: ['--no-sandbox'] });
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
