// New batch sizes with onnxruntime-node (CPU execution provider): one session, then for each
// batch size in turn the first run at that size and a repeat, on inputs whose first dim is
// the batch, their other symbolic dims --seq, the rest as declared (float32 values, or int64
// token ids and masks of ones). Prints one JSON object: session creation, and
// per batch size the first run's and the repeat's milliseconds and the output's sum (which
// batch_bench.py compares with Ferrite's).
//
//   node ort_batches.mjs --modules DIR --model FILE --batches 2,3,5 --threads T [--seq S]
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

async function main() {
  const argv = process.argv.slice(2);
  const arg = (k, d) => (argv.includes(k) ? argv[argv.indexOf(k) + 1] : d);
  const req = createRequire(path.join(path.resolve(arg('--modules')), 'package.json'));
  const ort = await import(pathToFileURL(req.resolve('onnxruntime-node')).href);
  const threads = Number(arg('--threads', '1'));
  const seq = Number(arg('--seq', '16'));  // the other symbolic dims
  let t = performance.now();
  const session = await ort.InferenceSession.create(arg('--model'), {
    graphOptimizationLevel: 'all', executionProviders: ['cpu'], intraOpNumThreads: threads,
    interOpNumThreads: 1, executionMode: 'sequential',
  });
  const createMs = performance.now() - t;
  const meta = session.inputMetadata;
  const batches = [];
  for (const n of arg('--batches').split(',').map(Number)) {
    const feeds = {};
    session.inputNames.forEach((name, k) => {
      const dims = meta[k].shape.map((d, i) => (i === 0 ? n : typeof d === 'number' ? d : seq));
      const count = dims.reduce((a, b) => a * b, 1);
      if (meta[k].type === 'int64') {  // token ids, or a mask of ones (as batch_bench.py)
        const data = new BigInt64Array(count);
        for (let i = 0; i < count; ++i) data[i] = BigInt(name.includes('mask') ? 1 : (i * 37) % 97);
        feeds[name] = new ort.Tensor('int64', data, dims);
        return;
      }
      const data = new Float32Array(count);
      for (let i = 0; i < count; ++i) data[i] = ((i * 37) % 19) / 9 - 1;
      feeds[name] = new ort.Tensor('float32', data, dims);
    });
    const ms = [];
    let out;
    for (let r = 0; r < 2; ++r) {
      t = performance.now();
      out = await session.run(feeds);
      ms.push(performance.now() - t);
    }
    const y = out[session.outputNames[0]].data;
    let sum = 0;
    for (let i = 0; i < y.length; ++i) sum += y[i];
    batches.push({ batch: n, first_ms: ms[0], repeat_ms: ms[1], sum });
  }
  console.log(JSON.stringify({ create_ms: createMs, batches }));
}

main().catch((e) => { console.log(JSON.stringify({ error: String(e) })); process.exit(1); });
