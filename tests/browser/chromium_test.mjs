// End to end in headless Chromium (Debian's chromium-headless-shell, driven by
// playwright-core): a local server serves the repository; the package runs the mlp fetched
// by URL and its output is checked against numpy's, single-threaded and on the threaded
// module (web workers; the page is cross-origin isolated), and every run signature
// (tests/js/run_signature_cases.mjs) is exercised; then the browser demo
// (examples/browser) loads the bundled example, runs it and shows its plan, step timings
// and outputs. Run by tests/browser/run.sh.
//   node chromium_test.mjs ROOT ORACLE_URL_PATH PLAYWRIGHT_DIR
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [root, oraclePath, playwrightDir] = process.argv.slice(2);
const { startServer } = await import(pathToFileURL(path.join(root, 'examples/browser/serve.mjs')));
const { chromium } = createRequire(path.join(playwrightDir, 'package.json'))('playwright-core');

const server = await startServer(root, 0);
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({
  executablePath: process.env.FERRITE_CHROMIUM || '/usr/bin/chromium-headless-shell',
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync'],
});
let failures = 0;
async function check(name, body) {
  try {
    await body();
    console.log(`ok   ${name}`);
  } catch (e) {
    ++failures;
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
}
try {
  const page = await browser.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(`console.${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => logs.push(`pageerror: ${e}`));

  await check('the package runs the mlp in Chromium and matches numpy', async () => {
    await page.goto(`${base}/tests/browser/api_page.html?oracle=${encodeURIComponent(oraclePath)}`);
    await page.waitForFunction(() => window.__result, null, { timeout: 60000 });
    const r = await page.evaluate(() => window.__result);
    assert.equal(r.failure, undefined, `${r.failure}\n${logs.join('\n')}`);
    assert.deepEqual(r.dims, [1, 10]);
    r.expected.forEach((e, i) => assert.ok(Math.abs(r.y[i] - e) <= 1e-5, `y[${i}] ${r.y[i]} vs ${e}`));
    assert.match(r.error, /FerriteError RUN_ERROR: unknown input 'z' \(model inputs: x\)/);
    assert.equal(r.isolated, true);  // the server's COOP/COEP headers
    assert.equal(r.threaded, true);  // so {threads: 2} gets the threaded module (web workers)
    assert.deepEqual(r.y2, r.y);
  });

  await check('every run signature returns its outputs; bad arguments and names throw', async () => {
    const r = await page.evaluate(() => window.__result);
    assert.ok(r.signatures, `no signature results: ${r.failure}`);
    assert.deepEqual(r.signatures.failures, []);
    assert.ok(r.signatures.checks > 60, `${r.signatures.checks} checks`);
  });

  await check('the demo loads the bundled example, runs it and shows plan, steps and outputs', async () => {
    await page.goto(`${base}/examples/browser/index.html`);
    await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('Ready'),
                               null, { timeout: 60000 });
    await page.click('#load-example');
    await page.waitForFunction(() => document.getElementById('status').textContent.includes('Press Run'),
                               null, { timeout: 60000 });
    const io = await page.textContent('#io');
    assert.match(io, /inputxfloat32\[1, 64\]/);
    assert.match(io, /outputyfloat32\[1, 10\]/);
    await page.fill('#runs', '5');
    await page.click('#run');
    await page.waitForFunction(() => document.getElementById('status').textContent.startsWith('Ran 5 times'),
                               null, { timeout: 60000 });
    assert.match(await page.textContent('#summary'), /2 externs/);
    const steps = await page.$$eval('#steps tbody tr', (rows) => rows.map((r) => r.textContent));
    assert.ok(steps.some((s) => s.includes("extern MatMul 'fc1'")), steps.join('\n'));
    assert.match(await page.textContent('#outputs'), /^y: float32\[1, 10\] /);
  });
  if (failures) console.log(logs.join('\n'));
} finally {
  await browser.close();
  server.close();
}
console.log(failures ? `${failures} browser check(s) failed` : 'all browser checks passed');
process.exit(failures ? 1 : 0);
