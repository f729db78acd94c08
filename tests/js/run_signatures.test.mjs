// Every onnxruntime-web InferenceSession.run signature under node (run_signature_cases.mjs,
// which the Chromium test runs too), on the full build; and messages quoting a model's
// names escaped (compiler/plan/error.h).
//   FERRITE_JS_DIR=build/wasm/js node --test tests/js/run_signatures.test.mjs
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { runSignatureCases } from './run_signature_cases.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const jsDir = path.resolve(process.env.FERRITE_JS_DIR || 'build/wasm/js');
const api = await import(pathToFileURL(path.join(jsDir, 'ferrite.mjs')));
const { FerriteError, InferenceSession, Tensor } = api;

test('every run signature returns its outputs; bad arguments and names throw', async () => {
  const model = path.join(root, 'tests/cli/fixtures/two_outputs.onnx');
  const { checks, failures } = await runSignatureCases(api, model);
  assert.deepEqual(failures, []);
  assert.ok(checks > 60, `${checks} checks`);
});

// A Relu on float32[3] whose input is named `name` (bytes), as ONNX protobuf bytes.
function reluModel(name) {
  const varint = (v) => {
    const b = [];
    for (; v >= 0x80; v >>>= 7) b.push((v & 0x7f) | 0x80);
    return [...b, v];
  };
  const field = (n, bytes) => [...varint((n << 3) | 2), ...varint(bytes.length), ...bytes];
  const num = (n, v) => [...varint(n << 3), ...varint(v)];
  const text = (s) => Array.from(new TextEncoder().encode(s));
  const shape = field(2, field(1, num(1, 3)));  // TensorShapeProto [3]
  const value = (n) => [...field(1, n), ...field(2, field(1, [...num(1, 1), ...shape]))];
  const node = [...field(1, name), ...field(2, text('y')), ...field(4, text('Relu'))];
  const graph = [...field(1, node), ...field(2, text('g')), ...field(11, value(name)),
                 ...field(12, value(text('y')))];
  const opset = [...field(1, []), ...num(2, 13)];
  return new Uint8Array([...num(1, 8), ...field(7, graph), ...field(8, opset)]);
}

test('messages quote names from the model escaped', async () => {
  // "x\x1b[2J\n" and U+009B (CSI): valid UTF-8, so JavaScript can feed it by name.
  const name = [0x78, 0x1b, 0x5b, 0x32, 0x4a, 0x0a, 0xc2, 0x9b];
  const session = await InferenceSession.create(reluModel(name));
  const x = new Tensor('float32', new Float32Array([1, -2, 3]), [3]);
  const { y } = await session.run({ [session.inputNames[0]]: x });
  assert.deepEqual(Array.from(y.data), [1, 0, 3]);
  const rejects = (s, text) => assert.rejects(s.run({ z: x }), (e) => {
    assert.ok(e instanceof FerriteError, String(e));
    assert.equal(e.message, `unknown input 'z' (model inputs: ${text})`);
    return true;
  });
  await rejects(session, 'x\\x1b[2J\\n\\u009b');
  // A byte of invalid UTF-8 (no JavaScript string holds it; the message shows it escaped).
  await rejects(await InferenceSession.create(reluModel([0x78, 0xff])), 'x\\xff');
});
