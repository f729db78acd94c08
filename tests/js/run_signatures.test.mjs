// Every onnxruntime-web InferenceSession.run signature under node (run_signature_cases.mjs,
// which the Chromium test runs too), on the full build.
//   FERRITE_JS_DIR=build/wasm/js node --test tests/js/run_signatures.test.mjs
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { runSignatureCases } from './run_signature_cases.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const jsDir = path.resolve(process.env.FERRITE_JS_DIR || 'build/wasm/js');
const api = await import(pathToFileURL(path.join(jsDir, 'ferrite.mjs')));

test('every run signature returns its outputs; bad arguments and names throw', async () => {
  const model = path.join(root, 'tests/cli/fixtures/two_outputs.onnx');
  const { checks, failures } = await runSignatureCases(api, model);
  assert.deepEqual(failures, []);
  assert.ok(checks > 60, `${checks} checks`);
});
