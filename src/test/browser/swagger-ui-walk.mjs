// A person's path through the ledger's Swagger UI, in Debian's Chromium driven by playwright-core:
// authorize, open an account, post a credit, execute it again and see the replay, read each error,
// log out. Every step asserts what is shown on the page and saves a screenshot.
//
// Usage: node swagger-ui-walk.mjs <baseUrl> <apiKey> <screenshotDir>
//   e.g. node swagger-ui-walk.mjs http://localhost:8080 dev-ledger-key-0123456789abcdef target/swagger-ui-walk
// Exit code 0 when every step passed; 1 with the failed step named (and failure.png saved) otherwise.
// CHROMIUM overrides the browser binary (default /usr/bin/chromium); .ci/browser installs both.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openBrowser } from './browser.mjs';

const [baseArg, apiKey, shotDir] = process.argv.slice(2);
if (!baseArg || !apiKey || !shotDir) {
  console.error('usage: node swagger-ui-walk.mjs <baseUrl> <apiKey> <screenshotDir>');
  process.exit(2);
}
const base = new URL(baseArg);
const STEP_TIMEOUT_MS = 15_000;
const FRESH_KEY = /^[0-9a-f]{32}$/;

mkdirSync(shotDir, { recursive: true });
// The browser talks to the application under test and nothing else.
const { page, refused, pageErrors, close } = await openBrowser(base, 'swagger-ui-walk', STEP_TIMEOUT_MS);

let shots = 0;
let step = 'start';
const started = Date.now();

/** Saves the next numbered screenshot: the region from the top of `from` to the bottom of `to`, or the viewport. */
async function screenshot(name, from, to = from) {
  const path = join(shotDir, `${String(++shots).padStart(2, '0')}-${name}.png`);
  if (!from) {
    await page.screenshot({ path });
  } else {
    const box = async (locator) => locator.evaluate((el) => {
      const r = el.getBoundingClientRect();
      return { x: r.left + window.scrollX, y: r.top + window.scrollY, bottom: r.bottom + window.scrollY, width: r.width };
    });
    const top = await box(from);
    const bottom = await box(to);
    await page.screenshot({ path, fullPage: true,
      clip: { x: top.x, y: top.y, width: top.width, height: Math.max(1, bottom.bottom - top.y) } });
  }
  console.log(`  screenshot ${path}`);
}

/** Waits until `locator` shows text matching `pattern`; fails naming what was expected and what is shown. */
async function expectText(locator, pattern, what) {
  try {
    await locator.filter({ hasText: pattern }).first().waitFor();
  } catch (e) {
    const shown = await locator.allInnerTexts().catch(() => []);
    throw new Error(`${what}: expected ${pattern}, the page shows ${JSON.stringify(shown)}`);
  }
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

/** An operation block, by Swagger UI's DOM id (tag + operationId), expanded. */
async function operation(tag, operationId) {
  const op = page.locator(`#operations-${tag}-${operationId}`);
  await op.waitFor();
  if (!(await op.locator('.opblock-body').count())) await op.locator('.opblock-summary-control').click();
  await op.locator('button.execute').waitFor();
  return op;
}

async function setParameter(op, name, value) {
  await op.locator(`tr[data-param-name="${name}"] input`).fill(value);
}

async function setBody(op, json) {
  await op.locator('textarea.body-param__text').fill(JSON.stringify(json, null, 2));
}

/**
 * Clicks Execute after clearing the previous answer (so the answer read is this request's) and
 * answers what Swagger UI shows: status, parsed body, response headers (lower-case) and the curl
 * command of the request as sent.
 */
async function execute(op) {
  const live = op.locator('.live-responses-table');
  const clear = op.locator('button.btn-clear');
  if (await clear.count()) {
    await clear.click();
    await live.waitFor({ state: 'detached' });
  }
  await op.locator('button.execute').click();
  try {
    await live.waitFor();
  } catch (e) {
    // Swagger UI refuses to send a request whose fields fail its own validation: say which.
    const invalid = await op.locator('.invalid, .validation-errors').allInnerTexts().catch(() => []);
    throw new Error(`no answer shown after Execute${invalid.length ? `; Swagger UI marks invalid: ${JSON.stringify(invalid)}` : ''}`);
  }
  const status = (await live.locator('tbody .response-col_status').first().innerText()).trim();
  const bodyText = await live.locator('.response-col_description .highlight-code code').first().innerText().catch(() => '');
  let body = null;
  try { body = bodyText ? JSON.parse(bodyText) : null; } catch (e) { body = bodyText; }
  const headers = {};
  for (const line of await live.locator('.headerline').allInnerTexts()) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const curl = await op.locator('.curl-command code').innerText();
  const key = /Idempotency-Key: ([^'\s]+)/i.exec(curl)?.[1] ?? null;
  return { status, body, headers, curl, key, live };
}

/** Expects the shown status and, for a problem, the shown body's type slug. */
async function expectAnswer(answer, status, slug) {
  await expectText(answer.live.locator('tbody .response-col_status').first(), new RegExp(`^\\s*${status}\\s*$`), `status shown`);
  if (slug) {
    check(typeof answer.body === 'object' && answer.body !== null, `a problem body was expected, shown: ${JSON.stringify(answer.body)}`);
    check(typeof answer.body.type === 'string' && answer.body.type.split('/').pop() === slug,
      `problem type ${slug} expected, shown: ${JSON.stringify(answer.body)}`);
    check(answer.body.status === Number(status), `problem status ${status} expected, shown: ${JSON.stringify(answer.body)}`);
  }
}

async function run(name, body) {
  step = name;
  const t = Date.now();
  await body();
  console.log(`ok   ${name} (${Date.now() - t} ms)`);
}

try {
  await run('Swagger UI loads the document', async () => {
    await page.goto(new URL('/q/swagger-ui/', base).href);
    await page.locator('#operations-Accounts-openAccount').waitFor();
    await page.locator('#operations-Transactions-postTransaction').waitFor();
    await screenshot('loaded');
  });

  await run('authorize with the key alone', async () => {
    await page.locator('.auth-wrapper button.authorize').click();
    const dialog = page.locator('.modal-ux');
    // The dialog says to paste the key alone: Swagger UI adds "Bearer " itself.
    await expectText(dialog.locator('.renderedMarkdown'), /without the word Bearer/, 'Authorize dialog text');
    await dialog.locator('#auth-bearer-value').fill(apiKey);
    await dialog.locator('button[type=submit]').click();
    await expectText(dialog.locator('button'), /^\s*Logout\s*$/, 'Authorize dialog after authorizing');
    await screenshot('authorized');
    await dialog.locator('button.btn-done').click();
    await dialog.waitFor({ state: 'detached' });
  });

  let accountId;
  await run('open an account (openAccount) with a fresh key per Execute', async () => {
    const op = await operation('Accounts', 'openAccount');
    check(await op.locator('tr[data-param-name="Idempotency-Key"] input').inputValue() === 'new',
      'the Idempotency-Key field is not pre-filled with the placeholder "new"');
    await setBody(op, { currency: 'EUR' });
    const first = await execute(op);
    await expectAnswer(first, 201);
    check(FRESH_KEY.test(first.key ?? ''), `the curl command should show a fresh random key, shows: ${first.curl}`);
    check((first.curl.match(/Bearer/g) || []).length === 1 && first.curl.includes(`Authorization: Bearer ${apiKey}`),
      `the request should carry "Authorization: Bearer <key>" once, curl shows: ${first.curl}`);
    check(first.body.currency === 'EUR' && first.body.balance === 0, `unexpected account: ${JSON.stringify(first.body)}`);
    check(first.headers.location === `/accounts/${first.body.id}`, `Location shown: ${first.headers.location}`);
    check(!('idempotent-replayed' in first.headers), 'a first request is shown as a replay');
    // "new" again: another key, so another account (not a replay of the first).
    const second = await execute(op);
    await expectAnswer(second, 201);
    check(FRESH_KEY.test(second.key ?? '') && second.key !== first.key,
      `a second Execute with "new" should send another fresh key: ${first.key} then ${second.key}`);
    check(second.body.id !== first.body.id && !('idempotent-replayed' in second.headers),
      'a second Execute with "new" was answered as a replay');
    accountId = second.body.id;
    await screenshot('account-opened', op, second.live);
  });

  let credit;
  const creditBody = { type: 'CREDIT', amount: 10000, sequence: 1, reference: 'swagger-ui walk' };
  await run('post a credit (postTransaction)', async () => {
    const op = await operation('Transactions', 'postTransaction');
    await setParameter(op, 'id', accountId);
    await setBody(op, creditBody);
    credit = await execute(op);
    await expectAnswer(credit, 201);
    check(FRESH_KEY.test(credit.key ?? ''), `the curl command should show a fresh random key, shows: ${credit.curl}`);
    check(credit.body.balanceAfter === 10000 && credit.body.accountId === accountId,
      `unexpected transaction: ${JSON.stringify(credit.body)}`);
    check(!('idempotent-replayed' in credit.headers), 'the first credit is shown as a replay');
    await screenshot('credit-posted', op, credit.live);
  });

  await run('execute again with the key from the curl command: Idempotent-Replayed: true', async () => {
    const op = await operation('Transactions', 'postTransaction');
    await setParameter(op, 'Idempotency-Key', credit.key);
    const replay = await execute(op);
    await expectAnswer(replay, 201);
    check(replay.key === credit.key, `the replay should send the pasted key ${credit.key}, curl shows: ${replay.curl}`);
    await expectText(replay.live.locator('.headerline'), /^\s*idempotent-replayed: true\s*$/, 'response headers of the replay');
    check(JSON.stringify(replay.body) === JSON.stringify(credit.body),
      `the replay should show the recorded transaction ${JSON.stringify(credit.body)}, shows ${JSON.stringify(replay.body)}`);
    await screenshot('credit-replayed', op, replay.live);
  });

  await run('same key, another body: 422 idempotency-key-reused', async () => {
    const op = await operation('Transactions', 'postTransaction');
    await setParameter(op, 'Idempotency-Key', credit.key);
    await setBody(op, { ...creditBody, amount: 20000 });
    const reused = await execute(op);
    await expectAnswer(reused, 422, 'idempotency-key-reused');
    await screenshot('key-reused', op, reused.live);
  });

  await run('a debit larger than the balance: 422 insufficient-funds', async () => {
    const op = await operation('Transactions', 'postTransaction');
    await setParameter(op, 'Idempotency-Key', 'new');
    await setBody(op, { type: 'DEBIT', amount: 25000, sequence: 2 });
    const poor = await execute(op);
    await expectAnswer(poor, 422, 'insufficient-funds');
    check(FRESH_KEY.test(poor.key ?? '') && poor.key !== credit.key, `typing "new" again should send a fresh key, curl shows: ${poor.curl}`);
    check(poor.body.balance === 10000, `the problem should show the balance 10000: ${JSON.stringify(poor.body)}`);
    await screenshot('insufficient-funds', op, poor.live);
  });

  await run('an amount in euros instead of cents: 400 invalid-request', async () => {
    const op = await operation('Transactions', 'postTransaction');
    await setBody(op, { type: 'DEBIT', amount: 12.5, sequence: 3 });
    const invalid = await execute(op);
    await expectAnswer(invalid, 400, 'invalid-request');
    await screenshot('invalid-request', op, invalid.live);
  });

  await run('read the account (getAccount): only the credit applied', async () => {
    const op = await operation('Accounts', 'getAccount');
    await setParameter(op, 'id', accountId);
    const account = await execute(op);
    await expectAnswer(account, 200);
    check(account.body.balance === 10000 && account.body.lastSequence === 1, `unexpected account: ${JSON.stringify(account.body)}`);
    await screenshot('account-read', op, account.live);
  });

  await run('log out, then the same read: 401 unauthorized', async () => {
    await page.locator('.auth-wrapper button.authorize').click();
    const dialog = page.locator('.modal-ux');
    await dialog.locator('button', { hasText: /^\s*Logout\s*$/ }).click();
    await dialog.locator('#auth-bearer-value').waitFor();
    await dialog.locator('button.btn-done').click();
    await dialog.waitFor({ state: 'detached' });
    const op = await operation('Accounts', 'getAccount');
    const refusedRead = await execute(op);
    await expectAnswer(refusedRead, 401, 'unauthorized');
    check(!/Authorization:/i.test(refusedRead.curl), `no Authorization header after logout, curl shows: ${refusedRead.curl}`);
    check(refusedRead.headers['www-authenticate'] === 'Bearer realm="ledger"',
      `WWW-Authenticate shown: ${refusedRead.headers['www-authenticate']}`);
    await screenshot('logged-out-401', op, refusedRead.live);
  });

  step = 'after the walk';
  check(pageErrors.length === 0, `the page had script errors: ${pageErrors.join('; ')}`);
  if (refused.length) console.log(`note: requests to other hosts were refused: ${refused.join(', ')}`);
  console.log(`swagger-ui walk: ${shots} screenshots in ${shotDir}, ${Date.now() - started} ms`);
  await close();
} catch (e) {
  console.error(`FAIL ${step}: ${e.message}`);
  if (pageErrors.length) console.error(`page script errors: ${pageErrors.join('; ')}`);
  await page.screenshot({ path: join(shotDir, 'failure.png'), fullPage: true }).catch(() => {});
  console.error(`  screenshot ${join(shotDir, 'failure.png')}`);
  await close();
  process.exitCode = 1;
}
