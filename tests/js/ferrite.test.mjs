// The JavaScript package (wasm/js, built into build/wasm/js) under node: onnxruntime-web's
// API on the full and the runtime-only builds. Run by tests/js/run.sh, which writes the
// oracle (numpy's output for the example mlp) and a compiled plan first.
//   FERRITE_JS_DIR=build/wasm/js FERRITE_ORACLE=oracle.json FERRITE_PLAN=mlp.fplan \
//     node --test tests/js/ferrite.test.mjs
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const jsDir = path.resolve(process.env.FERRITE_JS_DIR || 'build/wasm/js');
const { InferenceSession, Tensor, FerriteError } =
    await import(pathToFileURL(path.join(jsDir, 'ferrite.mjs')));
const runtimeOnly = await import(pathToFileURL(path.join(jsDir, 'ferrite_rt.mjs')));
const oracle = JSON.parse(await readFile(process.env.FERRITE_ORACLE, 'utf8'));
const mlp = path.join(root, 'examples/models/mlp.onnx');
const fixture = (name) => path.join(root, 'tests/cli/fixtures', name);

function assertClose(actual, expected, tol, what) {
  assert.equal(actual.length, expected.length, what);
  for (let i = 0; i < expected.length; ++i) {
    assert.ok(Math.abs(actual[i] - expected[i]) <= tol,
              `${what}[${i}]: ${actual[i]} vs ${expected[i]}`);
  }
}

async function runMlp(session) {
  const x = new Tensor('float32', Float32Array.from(oracle.x), [1, 64]);
  const { y } = await session.run({ x });
  assert.equal(y.type, 'float32');
  assert.deepEqual(y.dims, [1, 10]);
  return y.data;
}

test('the mlp from a path, bytes and an ArrayBuffer matches numpy on every backend', async () => {
  const bytes = new Uint8Array(await readFile(mlp));
  for (const backend of ['portable', 'reference']) {
    for (const model of [mlp, bytes, bytes.slice().buffer]) {
      const session = await InferenceSession.create(model, { backend });
      assertClose(await runMlp(session), oracle.y, 1e-5, backend);
      await session.release();
    }
  }
});

test('report and profile', async () => {
  const session = await InferenceSession.create(mlp, { profile: true });
  assert.throws(() => session.report(), /has not run yet/);
  await runMlp(session);
  await runMlp(session);
  const report = session.report();
  assert.equal(report.externs, 2);
  assert.ok(report.steps.length >= 3, JSON.stringify(report));
  assert.ok(report.steps.some((s) => s.label.startsWith("extern MatMul 'fc1'")));
  assert.ok(report.steps.every((s) => s.runs === 2 && s.ms >= 0));
});

test('threads: the threaded module gives the same bits', async () => {
  const single = await InferenceSession.create(mlp);
  const threaded = await InferenceSession.create(mlp, { threads: 2 });
  assert.equal(single.threaded, false);
  assert.equal(threaded.threaded, true);  // build/wasm-mt built it, and node has workers
  const a = await runMlp(single);
  const b = await runMlp(threaded);
  assert.deepEqual(Array.from(b), Array.from(a));
  // resnet18 (FERRITE_MODELS_DIR, the exported test models): its convolutions are split
  // between the threads.
  const models = process.env.FERRITE_MODELS_DIR;
  if (models) {
    const resnet = path.join(models, 'resnet18/model.onnx');
    const x = new Tensor('float32', Float32Array.from({ length: 3 * 224 * 224 }, (_, i) => Math.sin(i)),
                         [1, 3, 224, 224]);
    const r1 = await (await InferenceSession.create(resnet)).run({ input: x });
    const r2 = await (await InferenceSession.create(resnet, { threads: 2 })).run({ input: x });
    assert.deepEqual(Array.from(Object.values(r2)[0].data), Array.from(Object.values(r1)[0].data));
  }
  await threaded.release();
});

// An int64 .npy array (format 1.0, little-endian, C order) as numbers.
async function readInt64Npy(file) {
  const bytes = await readFile(file);
  const headerLength = bytes.readUInt16LE(8);
  const header = bytes.toString('latin1', 10, 10 + headerLength);
  assert.match(header, /'descr': '<i8'/, file);
  const data = new BigInt64Array(bytes.buffer.slice(bytes.byteOffset + 10 + headerLength,
                                                    bytes.byteOffset + bytes.length));
  return Array.from(data, Number);
}

test('a GPT-2 decoder generates, token by token, what PyTorch generated', async (t) => {
  // gpt_dyn (FERRITE_MODELS_DIR): 64 greedy steps, each fed the presents of the one before
  // as its past (a new past length every step).
  const models = process.env.FERRITE_MODELS_DIR;
  if (!models) return t.skip('FERRITE_MODELS_DIR is not set');
  const dir = path.join(models, 'gpt_dyn');
  const session = await InferenceSession.create(path.join(dir, 'model.onnx'));
  assert.deepEqual(session.inputMetadata[1].shape, ['batch', 4, 'past', 64]);
  const want = await readInt64Npy(path.join(dir, 'greedy_tokens.npy'));
  let ids = new Tensor('int64', BigInt64Array.from((await readInt64Npy(
      path.join(dir, 'greedy_prompt.npy'))).map(BigInt)), [1, 5]);
  let past = session.inputNames.slice(1).map(() => new Tensor('float32', new Float32Array(0),
                                                              [1, 4, 0, 64]));
  const got = [];
  for (let step = 0; step < want.length; ++step) {
    const feeds = { input_ids: ids };
    session.inputNames.slice(1).forEach((name, k) => { feeds[name] = past[k]; });
    const out = await session.run(feeds);
    const { logits } = out;
    const vocab = logits.dims[2], last = logits.data.subarray(logits.data.length - vocab);
    let best = 0;
    for (let v = 1; v < vocab; ++v) if (last[v] > last[best]) best = v;
    got.push(best);
    ids = new Tensor('int64', BigInt64Array.from([BigInt(best)]), [1, 1]);
    past = session.outputNames.slice(1).map((name) => out[name]);
  }
  assert.deepEqual(got, want);
});

test('metadata', async () => {
  const session = await InferenceSession.create(mlp);
  assert.deepEqual(session.inputNames, ['x']);
  assert.deepEqual(session.outputNames, ['y']);
  assert.deepEqual(session.inputs[0],
                   { name: 'x', type: 'float32', dims: [1, 64], dimNames: [null, null] });
  const sym = await InferenceSession.create(fixture('sym_add.onnx'));
  assert.deepEqual(sym.inputs[1],
                   { name: 'b', type: 'float32', dims: [null, 3], dimNames: ['N', null] });
  assert.deepEqual(sym.outputs[0],
                   { name: 'y', type: 'float32', dims: [null, 3], dimNames: ['N', null] });
  // onnxruntime-web's metadata: the symbolic dim by its name.
  assert.deepEqual(sym.inputMetadata[0], { name: 'a', isTensor: true, type: 'float32',
                                           shape: ['N', 3] });
  assert.deepEqual(sym.outputMetadata[0], { name: 'y', isTensor: true, type: 'float32',
                                            shape: ['N', 3] });
  assert.deepEqual(session.inputMetadata[0].shape, [1, 64]);
});

test('a symbolic batch, integer inputs, negative indices, output selection', async () => {
  const sym = await InferenceSession.create(fixture('sym_add.onnx'));
  for (const n of [2, 5, 2]) {
    const a = Float32Array.from({ length: n * 3 }, (_, i) => i * 0.5);
    const b = Float32Array.from({ length: n * 3 }, (_, i) => 10 - i);
    const { y } = await sym.run({ b: new Tensor(b, [n, 3]), a: new Tensor('float32', a, [n, 3]) });
    assert.deepEqual(y.dims, [n, 3]);
    assert.deepEqual(Array.from(y.data), Array.from(a, (v, i) => v + b[i]));
  }
  const gather = await InferenceSession.create(fixture('gather.onnx'));
  const x = new Tensor('float32', [0, 1, 10, 11, 20, 21, 30, 31], [4, 2]);
  const i = new Tensor('int64', [3n, -4n, 2n], [3]);
  const out = await gather.run({ x, i }, ['y']);
  assert.deepEqual(Array.from(out.y.data), [30, 31, 0, 1, 20, 21]);
});

test('string tensors in and out, as onnxruntime-web gives them', async () => {
  // strings.onnx: lower case, split by ' ', words to ids, joined with '!'.
  const s = await InferenceSession.create(fixture('strings.onnx'));
  assert.equal(s.inputMetadata[0].type, 'string');
  const text = ['Hello World', 'na\u00efve \u65e5\u672c'];
  const out = await s.run({ text: new Tensor('string', text, [2]) });
  assert.equal(out.shout.type, 'string');
  assert.deepEqual(out.shout.data, ['hello world!', 'na\u00efve \u65e5\u672c!']);
  assert.deepEqual(out.shout.dims, [2]);
  // Split, transposed and flattened: [hello, naïve, world, 日本].
  assert.deepEqual(out.flat.data, ['hello', 'na\u00efve', 'world', '\u65e5\u672c']);
  assert.deepEqual(Array.from(out.ids10.data), [10n, 0n, 20n, 0n]);
  assert.deepEqual(Array.from(out.is_hello.data), [1, 0]);
  const inferred = await s.run({ text: new Tensor(['FERRITE']) }, ['flat', 'ids10']);
  assert.deepEqual(inferred.flat.data, ['ferrite']);
  assert.deepEqual(Array.from(inferred.ids10.data), [30n]);
  assert.throws(() => new Tensor('string', ['a', 1]), /an Array of strings/);
});

test('errors name the input, the node or the file', async () => {
  const gather = await InferenceSession.create(fixture('gather.onnx'));
  const x = new Tensor('float32', new Float32Array(8), [4, 2]);
  const i = new Tensor('int64', [0n, 1n, 2n], [3]);
  const rejects = (promise, status, text) => assert.rejects(promise, (e) => {
    assert.ok(e instanceof FerriteError, String(e));
    assert.equal(e.status, status);
    assert.ok(e.message.includes(text), e.message);
    return true;
  });
  await rejects(gather.run({ x, j: i }), 'RUN_ERROR', "unknown input 'j' (model inputs: x, i)");
  await rejects(gather.run({ x }), 'RUN_ERROR', "missing input 'i'");
  await rejects(gather.run({ x: new Tensor('float32', new Float32Array(8), [2, 4]), i }),
                'RUN_ERROR', "input 'x': expected shape [4,2], got [2,4]");
  await rejects(gather.run({ x: new Tensor('int32', new Int32Array(8), [4, 2]), i }),
                'RUN_ERROR', "input 'x': expected float32, got int32");
  await rejects(gather.run({ x, i: new Tensor('int64', [0n, 9n, 1n], [3]) }), 'RUN_ERROR',
                'out of range');
  // As onnxruntime-web: an unknown output name is a RangeError, before anything runs.
  await assert.rejects(gather.run({ x, i }, ['z']), RangeError);
  assert.equal((await gather.run({ x, i })).y.data.length, 6);  // still usable

  await rejects(InferenceSession.create(fixture('unknown_op.onnx')), 'UNSUPPORTED', 'FancyOp');
  const bytes = new Uint8Array(await readFile(mlp));
  await rejects(InferenceSession.create(bytes.subarray(0, 100)), 'MODEL_ERROR', '');
  await rejects(InferenceSession.create(mlp, { backend: 'gpu' }), 'INVALID_ARGUMENT',
                "unknown backend 'gpu'");
  await assert.rejects(InferenceSession.create(42), TypeError);
  assert.throws(() => new Tensor('float32', new Float32Array(5), [2, 3]), RangeError);
  assert.throws(() => new Tensor('int64', new Float32Array(6), [2, 3]), TypeError);
  assert.throws(() => new Tensor('complex64', new Float32Array(2)), TypeError);
  await gather.release();
  await rejects(gather.run({ x, i }), 'INVALID_ARGUMENT', 'released');
});

test('the runtime-only build runs compiled plans and refuses ONNX models', async () => {
  const plan = new Uint8Array(await readFile(process.env.FERRITE_PLAN));
  const session = await runtimeOnly.InferenceSession.create(plan);
  assertClose(await runMlp(session), oracle.y, 1e-5, 'plan');
  const full = await InferenceSession.create(process.env.FERRITE_PLAN);
  assertClose(await runMlp(full), oracle.y, 1e-5, 'plan in the full build');
  await assert.rejects(runtimeOnly.InferenceSession.create(mlp),
                       (e) => e.status === 'UNSUPPORTED' && e.message.includes('runtime-only'));
});
