// The arguments of InferenceSession.run, taken as onnxruntime-web takes them
// (onnxruntime-common's InferenceSession.run overloads):
//   run(feeds)                                   every output
//   run(feeds, options)                          every output; options are RunOptions
//   run(feeds, ['y', ...], options?)             the outputs named
//   run(feeds, {y: null | Tensor, ...}, options?)
//                                                the outputs named; a Tensor is pre-allocated:
//                                                the output is written into it and returned
// An object in second place is fetches when one of its keys is an output name whose value is
// null or a Tensor, and RunOptions otherwise (so `{}` asks for every output). Where
// onnxruntime-web passes over a key without a word (an unknown name in a fetches object, an
// unknown option), these throw: no output may be lost silently.

// A name (a model's, or the caller's) as messages quote it: control characters, the line
// separators, bidirectional overrides and lone surrogates escaped, as the C++ messages
// do (compiler/plan/error.h).
export function printable(name) {
  return String(name).replace(
      /[\x00-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      (c) => {
        const code = c.charCodeAt(0);
        if (c === '\n') return '\\n';
        if (c === '\r') return '\\r';
        if (c === '\t') return '\\t';
        return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}`
                           : `\\u${code.toString(16).padStart(4, '0')}`;
      });
}

const RUN_OPTIONS = {
  logSeverityLevel: (v) => Number.isInteger(v) && v >= 0 && v <= 4 ? '' : 'an integer 0..4',
  logVerbosityLevel: (v) => Number.isInteger(v) ? '' : 'an integer',
  terminate: (v) => typeof v === 'boolean' ? '' : 'a boolean',
  tag: (v) => typeof v === 'string' ? '' : 'a string',
  extra: (v) => typeof v === 'object' && v !== null ? '' : 'an object',
};

function describe(v) {
  if (v === null || v === undefined) return String(v);
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? (v.constructor && v.constructor.name) || 'an object' : typeof v;
}

function invalidName(name) {
  return new RangeError(`'fetches' contains invalid output name: ${printable(name)}.`);
}

// RunOptions, every key checked. In second place (`asFetches`: the output names) options
// may be a fetches object gone wrong, and unknown keys are told apart accordingly.
function checkOptions(options, Tensor, asFetches = null) {
  if (typeof options !== 'object' || options === null || Array.isArray(options) ||
      options instanceof Tensor) {
    throw new TypeError(`'options' must be an object, got ${describe(options)}`);
  }
  for (const key of Object.getOwnPropertyNames(options)) {
    const v = options[key];
    const check = Object.prototype.hasOwnProperty.call(RUN_OPTIONS, key) ? RUN_OPTIONS[key] : null;
    if (check) {
      const want = v === undefined ? '' : check(v);
      if (want) throw new TypeError(`run option '${printable(key)}' must be ${want}, got ${describe(v)}`);
    } else if (asFetches && asFetches.includes(key)) {
      throw new TypeError(`'fetches' value of output '${printable(key)}' must be null or a Tensor, ` +
                          `got ${describe(v)}`);
    } else if (asFetches && (v === null || v instanceof Tensor)) {
      throw invalidName(key);
    } else {
      throw new TypeError(`unknown run option '${printable(key)}' (RunOptions: ${Object.keys(RUN_OPTIONS)
          .join(', ')})`);
    }
  }
  return options;
}

function fetchesFromArray(names, outputNames) {
  if (names.length === 0) throw new TypeError("'fetches' cannot be an empty array.");
  const fetches = new Map();
  for (const name of names) {
    if (typeof name !== 'string') {
      throw new TypeError(`'fetches' must be a string array or an object, got ${describe(name)} ` +
                          'in the array');
    }
    if (!outputNames.includes(name)) throw invalidName(name);
    fetches.set(name, null);  // a repeated name is one output, as in onnxruntime-web
  }
  return fetches;
}

// The fetches of an object, or null when it is RunOptions (or empty).
function fetchesFromObject(object, outputNames, Tensor) {
  const keys = Object.getOwnPropertyNames(object);
  const isFetch = (k) => outputNames.includes(k) && (object[k] === null || object[k] instanceof Tensor);
  if (!keys.some(isFetch)) return null;
  for (const key of keys) {
    if (isFetch(key)) continue;
    if (!outputNames.includes(key)) throw invalidName(key);
    throw new TypeError(`'fetches' value of output '${printable(key)}' must be null or a Tensor, ` +
                        `got ${describe(object[key])}`);
  }
  return new Map(outputNames.filter((k) => keys.includes(k)).map((k) => [k, object[k]]));
}

// A pre-allocated output: its type and dims must fit what the model declares.
function checkPreallocated(name, tensor, declared) {
  const dimsFit = declared.dims.length === tensor.dims.length &&
                  declared.dims.every((d, i) => d === null || d === tensor.dims[i]);
  if (tensor.type !== declared.type || !dimsFit) {
    const dims = declared.dims.map((d) => (d === null ? '?' : d)).join(',');
    throw new TypeError(`'fetches' tensor of output '${printable(name)}' is ${tensor.type}` +
                        `[${tensor.dims.join(',')}], but the output is ${declared.type}[${dims}]`);
  }
}

// {fetches: Map(output name -> null | pre-allocated Tensor), options: RunOptions}, or throws
// TypeError / RangeError as onnxruntime-web does (and where it would ignore a key).
export function parseRunArguments(session, Tensor, feeds, arg1, arg2) {
  if (typeof feeds !== 'object' || feeds === null || feeds instanceof Tensor || Array.isArray(feeds)) {
    throw new TypeError("'feeds' must be an object that uses input names as keys and Tensors " +
                        `as values, got ${describe(feeds)}`);
  }
  const outputNames = session.outputNames;
  const every = () => new Map(outputNames.map((name) => [name, null]));
  if (arg1 === undefined) {  // as onnxruntime-web: no fetches, every output
    return { fetches: every(), options: arg2 === undefined ? {} : checkOptions(arg2, Tensor) };
  }
  if (arg1 === null) throw new TypeError('Unexpected argument[1]: cannot be null.');
  if (typeof arg1 !== 'object') {
    throw new TypeError(`Unexpected argument[1]: must be 'fetches' or 'options', got ${describe(arg1)}`);
  }
  if (arg1 instanceof Tensor) throw new TypeError("'fetches' cannot be a Tensor");
  const fetches = Array.isArray(arg1) ? fetchesFromArray(arg1, outputNames)
                                      : fetchesFromObject(arg1, outputNames, Tensor);
  if (fetches === null) {  // arg1 is RunOptions, or {}: every output
    if (arg2 === undefined) return { fetches: every(), options: checkOptions(arg1, Tensor, outputNames) };
    if (Object.getOwnPropertyNames(arg1).length) {
      throw new TypeError('Unexpected argument[2]: argument[1] is already the run options');
    }
    return { fetches: every(), options: checkOptions(arg2, Tensor) };
  }
  for (const [name, tensor] of fetches) {
    if (tensor) checkPreallocated(name, tensor, session.outputs.find((o) => o.name === name));
  }
  return { fetches, options: arg2 === undefined ? {} : checkOptions(arg2, Tensor) };
}
