// A greedy decode with onnxruntime-node (CPU execution provider): the gpt_dyn test model
// (tests/models), a prompt with an empty past, then one token per step, each step fed the
// presents of the one before — what tests/python's and tests/js's decode tests do with
// Ferrite. Prints one JSON object: session creation, each step's milliseconds, the tokens
// (checked against greedy_tokens.npy by decode_bench.py), peak RSS.
//
//   node ort_decode.mjs --modules DIR --case build/models/gpt_dyn --threads T [--steps N]
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

// An int64 .npy file (version 1.x, C order) as BigInt64Array and shape.
function readInt64Npy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLen);
  if (!/'descr':\s*'<i8'/.test(header)) throw new Error(`${file}: not int64`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').filter((s) => s.trim())
    .map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  const data = new BigInt64Array(count);
  new Uint8Array(data.buffer).set(buf.subarray(10 + headerLen, 10 + headerLen + count * 8));
  return { data, shape };
}

async function main() {
  const argv = process.argv.slice(2);
  const arg = (k, d) => (argv.includes(k) ? argv[argv.indexOf(k) + 1] : d);
  const modules = arg('--modules');
  const dir = arg('--case');
  const threads = Number(arg('--threads', '1'));
  const steps = Number(arg('--steps', '64'));
  const req = createRequire(path.join(path.resolve(modules), 'package.json'));
  const ort = await import(pathToFileURL(req.resolve('onnxruntime-node')).href);
  let t = performance.now();
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
    graphOptimizationLevel: 'all', executionProviders: ['cpu'], intraOpNumThreads: threads,
    interOpNumThreads: 1, executionMode: 'sequential',
  });
  const createMs = performance.now() - t;
  const prompt = readInt64Npy(path.join(dir, 'greedy_prompt.npy'));
  let ids = new ort.Tensor('int64', prompt.data, prompt.shape);
  const names = session.inputNames;
  let past = names.slice(1).map(() => new ort.Tensor('float32', new Float32Array(0), [1, 4, 0, 64]));
  const stepMs = [];
  const tokens = [];
  for (let s = 0; s < steps; ++s) {
    const feeds = { [names[0]]: ids };
    names.slice(1).forEach((n, i) => { feeds[n] = past[i]; });
    t = performance.now();
    const out = await session.run(feeds);
    stepMs.push(performance.now() - t);
    const logits = out[session.outputNames[0]];
    const [, seq, vocab] = logits.dims;
    const row = logits.data.subarray((seq - 1) * vocab, seq * vocab);
    let best = 0;
    for (let v = 1; v < vocab; ++v) if (row[v] > row[best]) best = v;
    tokens.push(best);
    ids = new ort.Tensor('int64', BigInt64Array.from([BigInt(best)]), [1, 1]);
    past = session.outputNames.slice(1).map((n) => out[n]);
  }
  console.log(JSON.stringify({
    package: 'onnxruntime-node', create_ms: createMs, step_ms: stepMs, tokens,
    max_rss_mb: process.resourceUsage().maxRSS / 1024,
  }));
}

main().catch((e) => {
  console.log(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
  process.exit(1);
});
