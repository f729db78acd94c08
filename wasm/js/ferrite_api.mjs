// Ferrite's JavaScript API, shaped like onnxruntime-web's: InferenceSession.create(),
// session.run({name: Tensor}) and Tensor. It drives the C API (bindings/c/ferrite.h)
// compiled to WebAssembly; ferrite.mjs binds it to the full build (ONNX models and compiled
// plans), ferrite_rt.mjs to the runtime-only one (compiled plans only).
//
// Threads: {threads: n > 1} loads the threaded module (ferrite_mt_wasm: pthreads, a pool
// of web workers) when it was built and the page is cross-origin isolated (or under node);
// otherwise the session runs single-threaded and `session.threaded` is false.
import { parseRunArguments, printable } from './run_arguments.mjs';

const DTYPES = {
  // name: [C API code, bytes per element, TypedArray]
  float32: [1, 4, Float32Array],
  uint8: [2, 1, Uint8Array],
  int8: [3, 1, Int8Array],
  uint16: [4, 2, Uint16Array],
  int16: [5, 2, Int16Array],
  int32: [6, 4, Int32Array],
  int64: [7, 8, BigInt64Array],
  bool: [9, 1, Uint8Array],
  float16: [10, 2, Uint16Array], // raw IEEE half bits, as onnxruntime-web does
  float64: [11, 8, Float64Array],
  uint32: [12, 4, Uint32Array],
  uint64: [13, 8, BigUint64Array],
};
// Strings: an Array of JavaScript strings (UTF-8 in the C API: a `char*` per element).
const STRING_CODE = 8;
const TYPE_OF_CODE = {
  ...Object.fromEntries(Object.entries(DTYPES).map(([n, [c]]) => [c, n])),
  [STRING_CODE]: 'string',
};

const STATUS = {
  0: 'OK', 1: 'INVALID_ARGUMENT', 2: 'MODEL_ERROR', 3: 'UNSUPPORTED', 4: 'RUN_ERROR',
  5: 'BUFFER_TOO_SMALL', 6: 'OUT_OF_MEMORY', 7: 'INTERNAL_ERROR',
};
const BUFFER_TOO_SMALL = 5;

// Struct layouts of ferrite.h on wasm32 (bindings/c/ferrite_c.cc static_asserts them).
const TENSOR_BYTES = 20;  // FerriteTensor: dtype, rank, shape*, data*, nbytes
const OUTPUT_BYTES = 152; // FerriteOutput: data*, capacity, dtype, rank, int64 shape[16], nbytes
const OUTPUT_SHAPE = 16;
const OUTPUT_NBYTES = 144;
const INFO_BYTES = 16;    // FerriteTensorInfo: name*, dtype, rank, shape*
const MAX_RANK = 16;

export class FerriteError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'FerriteError';
    this.status = STATUS[status] || String(status);
  }
}

export class Tensor {
  // new Tensor(type, data, dims) as in onnxruntime-web; also new Tensor(float32Array, dims).
  constructor(type, data, dims) {
    if (typeof type !== 'string') {
      dims = data;
      data = type;
      type = Array.isArray(data) && data.length && data.every((v) => typeof v === 'string')
        ? 'string'
        : Object.keys(DTYPES).find((t) => t !== 'bool' && t !== 'float16' &&
                                   data instanceof DTYPES[t][2]);
      if (!type) throw new TypeError('Tensor: cannot infer the type of the data');
    }
    const info = type === 'string' ? [STRING_CODE, 0, Array] : DTYPES[type];
    if (!info) throw new TypeError(`Tensor: unsupported type '${type}'`);
    if (type === 'string') {
      if (!Array.isArray(data) || !data.every((v) => typeof v === 'string')) {
        throw new TypeError('Tensor: a string tensor needs an Array of strings');
      }
      data = Array.from(data);
    } else if (Array.isArray(data)) {
      data = type === 'int64' || type === 'uint64'
        ? info[2].from(data, (v) => BigInt(v)) : info[2].from(data, (v) => Number(v));
    }
    if (!(data instanceof info[2])) {
      throw new TypeError(`Tensor: a ${type} tensor needs a ${info[2].name}`);
    }
    dims = dims === undefined ? [data.length] : Array.from(dims, Number);
    const size = dims.reduce((a, d) => {
      if (!Number.isInteger(d) || d < 0) throw new RangeError(`Tensor: bad dimension ${d}`);
      return a * d;
    }, 1);
    if (size !== data.length) {
      throw new RangeError(`Tensor: dims [${dims}] make ${size} elements, data has ${data.length}`);
    }
    this.type = type;
    this.data = data;
    this.dims = dims;
    this.size = size;
  }
}

// Copies an output into the Tensor the caller pre-allocated for it, which must have its
// type and dims exactly (a symbolic dim may differ from run to run).
function fillPreallocated(name, tensor, type, dims, bytes) {
  if (type === 'string' || tensor.type !== type || tensor.dims.length !== dims.length ||
      tensor.dims.some((d, i) => d !== dims[i])) {
    throw new FerriteError(4, `output '${printable(name)}' is ${type}[${dims}], but its pre-allocated ` +
                              `tensor is ${tensor.type}[${tensor.dims}]`);
  }
  new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, bytes.length).set(bytes);
  return tensor;
}

// The glue between one Emscripten module instance and the C API.
class Native {
  constructor(m) {
    this.m = m;
    const f = (name, ret, args) => m.cwrap(name, ret, args);
    this.lastError = f('ferrite_last_error', 'string', []);
    this.optionsCreate = f('ferrite_options_create', 'number', ['number']);
    this.optionsDestroy = f('ferrite_options_destroy', null, ['number']);
    this.setThreads = f('ferrite_options_set_threads', 'number', ['number', 'number']);
    this.setBackend = f('ferrite_options_set_backend', 'number', ['number', 'string']);
    this.setProfiling = f('ferrite_options_set_profiling', 'number', ['number', 'number']);
    this.report = f('ferrite_session_report', 'number', ['number']);
    this.createFromBytes = f('ferrite_session_create_from_bytes', 'number',
                             ['number', 'number', 'number', 'number']);
    this.destroy = f('ferrite_session_destroy', null, ['number']);
    this.inputCount = f('ferrite_session_input_count', 'number', ['number']);
    this.outputCount = f('ferrite_session_output_count', 'number', ['number']);
    this.inputInfo = f('ferrite_session_input_info', 'number', ['number', 'number', 'number']);
    this.outputInfo = f('ferrite_session_output_info', 'number', ['number', 'number', 'number']);
    this.inputDimName = f('ferrite_session_input_dim_name', 'number', ['number', 'number', 'number']);
    this.outputDimName = f('ferrite_session_output_dim_name', 'number',
                           ['number', 'number', 'number']);
    this.run = f('ferrite_session_run', 'number',
                 ['number', 'number', 'number', 'number', 'number', 'number', 'number']);
    this.version = f('ferrite_version', 'string', []);
  }
  check(status) {
    if (status !== 0) throw new FerriteError(status, this.lastError());
  }
  malloc(n) {
    const p = this.m._malloc(Math.max(n, 1));
    if (!p) throw new FerriteError(6, `out of memory (${n} bytes)`);
    return p;
  }
  u32(p) { return this.m.HEAPU32[p >>> 2]; }
  i64(p) { // little-endian, as two 32-bit halves
    const lo = this.m.HEAPU32[p >>> 2];
    const hi = this.m.HEAP32[(p + 4) >>> 2];
    return hi * 4294967296 + lo;
  }
  setI64(p, v) {
    this.m.HEAPU32[p >>> 2] = v >>> 0;
    this.m.HEAP32[(p + 4) >>> 2] = Math.floor(v / 4294967296);
  }
  // {name, type, dims (null where not static), dimNames (a symbolic dim's name, else null)}
  info(get, getDimName, session, i) {
    const p = this.malloc(INFO_BYTES);
    try {
      this.check(get(session, i, p));
      const rank = this.u32(p + 8);
      const shape = [];
      for (let d = 0; d < rank; ++d) shape.push(this.i64(this.u32(p + 12) + 8 * d));
      const dimNames = shape.map((d, k) => {
        const name = d < 0 ? getDimName(session, i, k) : 0;
        return name ? this.m.UTF8ToString(name) : null;
      });
      return { name: this.m.UTF8ToString(this.u32(p)), type: TYPE_OF_CODE[this.u32(p + 4)] ||
               `code ${this.u32(p + 4)}`, dims: shape.map((d) => (d < 0 ? null : d)), dimNames };
    } finally {
      this.m._free(p);
    }
  }
  // An output's strings: `count` char* at `data`, each NUL-terminated.
  strings(data, count) {
    const out = [];
    for (let k = 0; k < count; ++k) out.push(this.m.UTF8ToString(this.u32(data + 4 * k)));
    return out;
  }
  cString(s, owned) {
    const n = this.m.lengthBytesUTF8(s) + 1;
    const p = this.malloc(n);
    owned.push(p);
    this.m.stringToUTF8(s, p, n);
    return p;
  }
}

async function modelBytes(model) {
  if (model instanceof Uint8Array) return model;
  if (model instanceof ArrayBuffer) return new Uint8Array(model);
  if (ArrayBuffer.isView(model)) {
    return new Uint8Array(model.buffer, model.byteOffset, model.byteLength);
  }
  if (typeof model === 'string' || model instanceof URL) {
    const isNode = typeof process !== 'undefined' && process.versions && process.versions.node;
    const url = String(model);
    if (isNode && !/^https?:/.test(url)) {
      const { readFile } = await import('node:fs/promises');
      return new Uint8Array(await readFile(url.startsWith('file:') ? new URL(url) : url));
    }
    const response = await fetch(url);
    if (!response.ok) throw new FerriteError(2, `cannot fetch '${url}': ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }
  throw new TypeError('InferenceSession.create: expected bytes, a path or a URL');
}

// Instantiates the Emscripten module `importModule()` gives, with its .wasm next to
// `wasmUrl` (read from disk under node; fetched in browsers).
async function instantiate(importModule, wasmUrl) {
  const isNode = typeof process !== 'undefined' && process.versions && process.versions.node;
  const options = {};
  if (isNode) {
    // Emscripten 3.1.6's ES6 output wants these globals under node.
    const { createRequire } = await import('node:module');
    const { fileURLToPath } = await import('node:url');
    const path = await import('node:path');
    globalThis.require = globalThis.require || createRequire(wasmUrl);
    globalThis.__dirname = globalThis.__dirname || path.dirname(fileURLToPath(wasmUrl));
    const { readFile } = await import('node:fs/promises');
    options.wasmBinary = await readFile(fileURLToPath(wasmUrl));
  } else {
    options.locateFile = (file) => new URL(file, wasmUrl).href;  // the .wasm, the worker
  }
  const factory = (await importModule()).default;
  const m = await factory(options);
  if (isNode && m.PThread) {
    // The threaded module's workers must not keep node's event loop (the process) alive.
    for (const w of [...m.PThread.unusedWorkers, ...m.PThread.runningWorkers]) w.unref();
  }
  return new Native(m);
}

// The InferenceSession class over one build (full or runtime-only), and optionally its
// threaded module ({importModule, wasmUrl}).
export function defineInferenceSession(importModule, wasmUrl, threaded = null) {
  let nativePromise = null;
  let threadedPromise = null;
  const native = () => (nativePromise = nativePromise || instantiate(importModule, wasmUrl));
  const nativeThreaded = () => (threadedPromise = threadedPromise ||
      instantiate(threaded.importModule, threaded.wasmUrl).catch(() => null));
  const isNode = typeof process !== 'undefined' && process.versions && process.versions.node;

  return class InferenceSession {
    // InferenceSession.create(bytes | path | URL, {backend, threads}); resolves once the
    // model is loaded (compiled too when its inputs are static).
    static async create(model, options = {}) {
      const wantThreads = (options.threads | 0) > 1 && threaded &&
                          (isNode || globalThis.crossOriginIsolated === true);
      const threadedNative = wantThreads ? await nativeThreaded() : null;
      const n = threadedNative || await native();
      const bytes = await modelBytes(model);
      const owned = [];
      let opts = 0;
      let session = 0;
      try {
        const out = n.malloc(4);
        owned.push(out);
        n.check(n.optionsCreate(out));
        opts = n.u32(out);
        if (options.backend !== undefined) n.check(n.setBackend(opts, String(options.backend)));
        if (options.threads !== undefined) n.check(n.setThreads(opts, options.threads));
        if (options.profile) n.check(n.setProfiling(opts, 1));
        const data = n.malloc(bytes.length);
        owned.push(data);
        n.m.HEAPU8.set(bytes, data);
        n.check(n.createFromBytes(data, bytes.length, opts, out));
        session = n.u32(out);
      } finally {
        if (opts) n.optionsDestroy(opts);
        owned.forEach((p) => n.m._free(p));
      }
      return new InferenceSession(n, session, threadedNative !== null);
    }

    constructor(n, session, threadedModule) {
      this._n = n;
      this._session = session;
      this.threaded = threadedModule;  // runs on the threaded module (web workers)
      this.inputs = [];
      this.outputs = [];
      for (let i = 0; i < n.inputCount(session); ++i) {
        this.inputs.push(n.info(n.inputInfo, n.inputDimName, session, i));
      }
      for (let i = 0; i < n.outputCount(session); ++i) {
        this.outputs.push(n.info(n.outputInfo, n.outputDimName, session, i));
      }
      // onnxruntime-web's form: a symbolic dim is its name, an unknown one -1.
      const metadata = (v) => ({ name: v.name, isTensor: true, type: v.type,
                                 shape: v.dims.map((d, k) => d ?? v.dimNames[k] ?? -1) });
      this.inputMetadata = this.inputs.map(metadata);
      this.outputMetadata = this.outputs.map(metadata);
      this.inputNames = this.inputs.map((x) => x.name);
      this.outputNames = this.outputs.map((x) => x.name);
      this._outputBytes = new Map();  // output name -> bytes (declared, then last seen)
      for (const o of this.outputs) {
        if (DTYPES[o.type] && o.dims.every((d) => d !== null)) {
          this._outputBytes.set(o.name, o.dims.reduce((a, d) => a * d, DTYPES[o.type][1]));
        }
      }
    }

    // onnxruntime-web's overloads (run_arguments.mjs): run(feeds, options?),
    // run(feeds, ['y'], options?), run(feeds, {y: null | Tensor}, options?). Resolves to
    // {name: Tensor}; a pre-allocated Tensor is filled and returned as it is.
    async run(feeds, fetchesOrOptions, options) {
      const n = this._n;
      if (!this._session) throw new FerriteError(1, 'the session was released');
      const args = parseRunArguments(this, Tensor, feeds, fetchesOrOptions, options);
      if (args.options.terminate === true) {
        throw new FerriteError(4, 'the run was terminated: RunOptions.terminate is true');
      }
      const names = Object.keys(feeds);
      const wanted = [...args.fetches.keys()];
      const owned = [];
      try {
        const inNames = n.malloc(4 * names.length);
        owned.push(inNames);
        const inputs = n.malloc(TENSOR_BYTES * names.length);
        owned.push(inputs);
        names.forEach((name, i) => {
          const t = feeds[name];
          if (!(t instanceof Tensor)) {
            throw new TypeError(`input '${printable(name)}': expected a Tensor`);
          }
          const strings = t.type === 'string';
          const [code, bytesPer] = strings ? [STRING_CODE, 4] : DTYPES[t.type];
          const shape = n.malloc(8 * t.dims.length);
          owned.push(shape);
          t.dims.forEach((d, k) => n.setI64(shape + 8 * k, d));
          const nbytes = t.size * bytesPer;
          const data = n.malloc(nbytes);
          owned.push(data);
          if (strings) {  // a char* per element (wasm32: 4 bytes)
            t.data.forEach((v, k) => { n.m.HEAPU32[(data >>> 2) + k] = n.cString(v, owned); });
          } else {
            n.m.HEAPU8.set(new Uint8Array(t.data.buffer, t.data.byteOffset, nbytes), data);
          }
          n.m.HEAPU32[(inNames >>> 2) + i] = n.cString(name, owned);
          const p = (inputs + TENSOR_BYTES * i) >>> 2;
          n.m.HEAPU32.set([code, t.dims.length, shape, data, nbytes], p);
        });
        const outNames = n.malloc(4 * wanted.length);
        owned.push(outNames);
        const outputs = n.malloc(OUTPUT_BYTES * wanted.length);
        owned.push(outputs);
        n.m.HEAPU8.fill(0, outputs, outputs + OUTPUT_BYTES * wanted.length);
        const giveBuffer = (i, nbytes) => {
          const o = outputs + OUTPUT_BYTES * i;
          const data = n.malloc(nbytes);
          owned.push(data);
          n.m.HEAPU32[o >>> 2] = data;
          n.m.HEAPU32[(o + 4) >>> 2] = nbytes;
        };
        // Buffers as large as the declared shape, or as the last run's output; a run that
        // finds one too small reports the sizes and is repeated with buffers that large.
        wanted.forEach((name, i) => {
          n.m.HEAPU32[(outNames >>> 2) + i] = n.cString(name, owned);
          giveBuffer(i, this._outputBytes.get(name) || 0);
        });
        const call = () => n.run(this._session, names.length, inNames, inputs, wanted.length,
                                 outNames, outputs);
        let status = call();
        if (status === BUFFER_TOO_SMALL) {
          wanted.forEach((_, i) => giveBuffer(i, n.u32(outputs + OUTPUT_BYTES * i + OUTPUT_NBYTES)));
          status = call();
        }
        n.check(status);
        const result = {};
        wanted.forEach((name, i) => {
          const o = outputs + OUTPUT_BYTES * i;
          const type = TYPE_OF_CODE[n.u32(o + 8)];
          if (!type) throw new FerriteError(3, `output '${printable(name)}': unsupported element type`);
          const rank = n.u32(o + 12);
          const dims = [];
          for (let d = 0; d < rank && d < MAX_RANK; ++d) dims.push(n.i64(o + OUTPUT_SHAPE + 8 * d));
          const nbytes = n.u32(o + OUTPUT_NBYTES);
          this._outputBytes.set(name, nbytes);
          const bytes = n.m.HEAPU8.subarray(n.u32(o), n.u32(o) + nbytes);
          const given = args.fetches.get(name);
          if (type === 'string' && !given) {
            result[name] = new Tensor('string', n.strings(n.u32(o), dims.reduce((a, d) => a * d, 1)),
                                      dims);
            return;
          }
          if (given) {
            result[name] = fillPreallocated(name, given, type, dims, bytes);
            return;
          }
          const Array_ = DTYPES[type][2];
          const copy = new Uint8Array(nbytes);
          copy.set(bytes);
          result[name] = new Tensor(type, new Array_(copy.buffer, 0, nbytes / DTYPES[type][1]),
                                    dims);
        });
        return result;
      } finally {
        owned.forEach((p) => n.m._free(p));
      }
    }

    // The plan of the last run: {kernels, externs, buffers, pool_bytes, constant_bytes,
    // steps: [{label, runs, ms}]} (steps timed when created with {profile: true}).
    report() {
      if (!this._session) throw new FerriteError(1, 'the session was released');
      const p = this._n.report(this._session);
      if (!p) throw new FerriteError(1, this._n.lastError());
      return JSON.parse(this._n.m.UTF8ToString(p));
    }

    // Frees the native session; the object cannot run afterwards.
    async release() {
      if (this._session) this._n.destroy(this._session);
      this._session = 0;
    }
  };
}
