// One benchmark process for onnxruntime-node (CPU execution provider) or onnxruntime-web
// (wasm backend, under node): load the model once, time the session creation (load-to-ready),
// run once plus warm-up runs, time N runs, print one JSON object on the last stdout line.
//
//   node ort_runner.mjs --pkg node|web --modules DIR --model M.onnx --threads T
//                       [--warmup W] [--iters N] [--input NAME=FILE.npy ...] [--outputs-dir D]
//
// --modules is the directory whose node_modules holds the onnxruntime packages. Inputs are
// .npy files (version 1.x, little-endian, C order); --outputs-dir writes output_<i>.npy in
// the session's output order. Errors are reported as {"error": "..."} with exit status 1.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const NPY_TYPES = {
  '<f4': ['float32', Float32Array],
  '<f8': ['float64', Float64Array],
  '<i8': ['int64', BigInt64Array],
  '<i4': ['int32', Int32Array],
  '<i2': ['int16', Int16Array],
  '|i1': ['int8', Int8Array],
  '<u2': ['uint16', Uint16Array],
  '|u1': ['uint8', Uint8Array],
  '|b1': ['bool', Uint8Array],
};

function parseArgs(argv) {
  const args = { inputs: [], warmup: 3, iters: 10 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`option ${key} needs a value`);
    if (key === '--input') args.inputs.push(value);
    else if (key === '--pkg') args.pkg = value;
    else if (key === '--modules') args.modules = value;
    else if (key === '--model') args.model = value;
    else if (key === '--threads') args.threads = Number(value);
    else if (key === '--warmup') args.warmup = Number(value);
    else if (key === '--iters') args.iters = Number(value);
    else if (key === '--outputs-dir') args.outputsDir = value;
    else throw new Error(`unknown option ${key}`);
  }
  if (!['node', 'web'].includes(args.pkg)) throw new Error('--pkg must be node or web');
  if (!args.modules || !args.model || !(args.threads >= 1)) {
    throw new Error('--modules, --model and --threads are required');
  }
  return args;
}

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not an .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !(descr in NPY_TYPES) || fortran !== 'False' || shapeText === undefined) {
    throw new Error(`${file}: unsupported .npy header ${header.trim()}`);
  }
  const shape = shapeText.split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const [type, Ctor] = NPY_TYPES[descr];
  const count = shape.reduce((a, b) => a * b, 1);
  const offset = start + headerLen;
  const bytes = new Uint8Array(count * Ctor.BYTES_PER_ELEMENT);
  bytes.set(buf.subarray(offset, offset + bytes.length));
  if (offset + bytes.length > buf.length) throw new Error(`${file}: truncated data`);
  let data = new Ctor(bytes.buffer);
  if (type === 'bool') data = Uint8Array.from(data, (v) => (v ? 1 : 0));
  return { type, data, shape };
}

function writeNpy(file, tensor) {
  const entry = Object.entries(NPY_TYPES).find(([, [type]]) => type === tensor.type);
  if (!entry) throw new Error(`cannot write an output of type ${tensor.type}`);
  const shape = tensor.dims.length === 1 ? `${tensor.dims[0]},` : tensor.dims.join(', ');
  let header = `{'descr': '${entry[0]}', 'fortran_order': False, 'shape': (${shape}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'), body]));
}

function osThreads() {
  try {
    return Number(/Threads:\s*(\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]);
  } catch {
    return null;
  }
}

// CPU time (ms) of each thread of this process, by thread id (Linux /proc; {} elsewhere).
function threadCpuMs() {
  const out = {};
  try {
    for (const tid of fs.readdirSync('/proc/self/task')) {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out[tid] = ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;  // utime+stime, USER_HZ
    }
  } catch {
    // not Linux: no per-thread times
  }
  return out;
}

// The CPU ms each thread spent between two threadCpuMs() snapshots, largest first (top 4).
function threadCpuDelta(before, after) {
  return Object.entries(after)
    .map(([tid, ms]) => ms - (before[tid] || 0))
    .sort((a, b) => b - a)
    .slice(0, 4);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const req = createRequire(path.join(path.resolve(args.modules), 'package.json'));
  const pkgName = args.pkg === 'node' ? 'onnxruntime-node' : 'onnxruntime-web';
  let t = performance.now();
  const ort = await import(pathToFileURL(req.resolve(pkgName)).href);
  const importMs = performance.now() - t;
  const pkgJson = path.join(path.resolve(args.modules), 'node_modules', pkgName, 'package.json');
  const version = JSON.parse(fs.readFileSync(pkgJson, 'utf8')).version;

  const options = { graphOptimizationLevel: 'all' };
  if (args.pkg === 'node') {
    Object.assign(options, {
      executionProviders: ['cpu'],
      intraOpNumThreads: args.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
    });
  } else {
    ort.env.wasm.numThreads = args.threads;  // must be set before the first session
    options.executionProviders = ['wasm'];
  }

  const feeds = {};
  for (const spec of args.inputs) {
    const eq = spec.indexOf('=');
    const { type, data, shape } = readNpy(spec.slice(eq + 1));
    feeds[spec.slice(0, eq)] = new ort.Tensor(type, data, shape);
  }

  const threadsBefore = osThreads();
  t = performance.now();
  const session = await ort.InferenceSession.create(args.model, options);
  const readyMs = performance.now() - t;

  t = performance.now();
  const first = await session.run(feeds);
  const firstRunMs = performance.now() - t;
  if (args.outputsDir) {
    fs.mkdirSync(args.outputsDir, { recursive: true });
    session.outputNames.forEach((name, i) => {
      writeNpy(path.join(args.outputsDir, `output_${i}.npy`), first[name]);
    });
  }
  for (let i = 0; i < args.warmup; ++i) await session.run(feeds);
  const samples = [];
  const cpuStart = process.cpuUsage();
  const threadsStart = threadCpuMs();
  const wallStart = performance.now();
  for (let i = 0; i < args.iters; ++i) {
    t = performance.now();
    await session.run(feeds);
    samples.push(performance.now() - t);
  }
  const cpu = process.cpuUsage(cpuStart);
  const threadCpu = threadCpuDelta(threadsStart, threadCpuMs());
  // Process CPU time / wall time over the timed runs: about 1 for one busy thread, up to T
  // when T threads really work in parallel.
  const cpuPerWall = (cpu.user + cpu.system) / 1000 / (performance.now() - wallStart);
  const detail = {
    package: `${pkgName}@${version}`,
    import_ms: importMs,
    cpu_per_wall: cpuPerWall,
    thread_cpu_ms: threadCpu,
    os_threads_before_session: threadsBefore,
    os_threads_after_runs: osThreads(),
  };
  if (args.pkg === 'web') detail.wasm_num_threads = ort.env.wasm.numThreads;
  console.log(JSON.stringify({
    ready_ms: readyMs,
    first_run_ms: firstRunMs,
    warmup: args.warmup,
    samples_ms: samples,
    detail,
  }));
}

main().then(
  // onnxruntime-web's worker threads keep node alive: exit explicitly.
  () => process.exit(0),
  (e) => {
    console.log(JSON.stringify({ error: String(e && e.message ? e.message : e) }));
    process.exit(1);
  });
