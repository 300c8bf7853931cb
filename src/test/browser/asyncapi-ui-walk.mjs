// A person reading the ledger's message interface at /q/asyncapi-ui, in Debian's Chromium driven by
// playwright-core: every channel of the AsyncAPI document is shown with its address, the operations on
// it and its messages (headers, payload); the links to the document work; no script error. Saves a
// screenshot of the page and of each channel.
//
// Usage: node asyncapi-ui-walk.mjs <baseUrl> <screenshotDir> <channelId=address>...
//   the channels to expect, as the test reads them from src/main/resources/asyncapi.yaml
// Exit code 0 when every check passed; 1 with the failed check named (and failure.png saved) otherwise.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openBrowser } from './browser.mjs';

const [baseArg, shotDir, ...expected] = process.argv.slice(2);
if (!baseArg || !shotDir || expected.length === 0) {
  console.error('usage: node asyncapi-ui-walk.mjs <baseUrl> <screenshotDir> <channelId=address>...');
  process.exit(2);
}
const base = new URL(baseArg);
mkdirSync(shotDir, { recursive: true });
// The page needs the application and nothing else (no CDN).
const { page, refused, pageErrors, close } = await openBrowser(base, 'asyncapi-ui-walk');
const check = (condition, message) => { if (!condition) throw new Error(message); };

let step = 'load';
try {
  const response = await page.goto(new URL('/q/asyncapi-ui', base).href);
  check(response.status() === 200, `/q/asyncapi-ui answered ${response.status()}`);
  await page.locator('#title', { hasText: /AsyncAPI 3\./ }).waitFor();
  await page.screenshot({ path: join(shotDir, '00-page.png') });
  for (const pair of expected) {
    const [id, address] = pair.split(/=(.*)/s);
    step = `channel ${id}`;
    const section = page.locator(`section#${id}`);
    await section.waitFor();
    const text = await section.innerText();
    check(text.includes(address), `${id}: address ${address} not shown, the section shows: ${text.slice(0, 300)}`);
    check(/\b(SEND|RECEIVE|send|receive)\b/.test(text), `${id}: no operation shown`);
    check(/Payload|Headers/.test(text), `${id}: no message shown`);
    await section.screenshot({ path: join(shotDir, `channel-${id}.png`) });
  }
  step = 'the links to the document';
  const yaml = await page.request.get(new URL('/q/asyncapi', base).href);
  check(yaml.status() === 200 && (await yaml.text()).startsWith('asyncapi: 3.'), '/q/asyncapi is not the YAML document');
  const navLinks = await page.locator('nav a').count();
  check(navLinks === expected.length, `the page lists ${navLinks} channels, the document has ${expected.length}`);
  check(pageErrors.length === 0, `the page had script errors: ${pageErrors.join('; ')}`);
  check(refused.length === 0, `the page asked other hosts: ${refused.join(', ')}`);
  console.log(`asyncapi-ui walk: ${expected.length} channels shown, screenshots in ${shotDir}`);
  await close();
} catch (e) {
  console.error(`FAIL ${step}: ${e.message}`);
  if (pageErrors.length) console.error(`page script errors: ${pageErrors.join('; ')}`);
  await page.screenshot({ path: join(shotDir, 'failure.png'), fullPage: true }).catch(() => {});
  await close();
  process.exitCode = 1;
}
