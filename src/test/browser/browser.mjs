// What both walks share: Debian's Chromium (CHROMIUM overrides the binary), headless, in a fresh profile,
// that talks to the application under test and nothing else, collecting page script errors.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Opens a page for `base` (a URL); answers { page, context, refused, pageErrors, close }. */
export async function openBrowser(base, name, stepTimeoutMs = 15_000) {
  const profile = mkdtempSync(join(tmpdir(), `${name}-`));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run'],
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] ?? await context.newPage();
  page.setDefaultTimeout(stepTimeoutMs);
  const refused = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.origin === base.origin) return route.continue();
    refused.push(url.href);
    return route.abort('blockedbyclient');
  });
  const pageErrors = [];
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  const close = async () => {
    await context.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
  };
  return { page, context, refused, pageErrors, close };
}
