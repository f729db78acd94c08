// Every InferenceSession.run signature of onnxruntime-web, checked the same way under node
// (run_signatures.test.mjs) and in Chromium (tests/browser/api_page.html): the
// two_outputs fixture (x float32[N,3] -> r = relu(x), n = -x), with the outputs computed
// here from the input as the oracle. Issue 25: run(feeds, {y: null}) and run(feeds,
// options) returned {} without an error.
//   const failures = await runSignatureCases({InferenceSession, Tensor, FerriteError}, model);

function sameValues(actual, expected) {
  return actual.length === expected.length && expected.every((v, i) => actual[i] === v);
}

export async function runSignatureCases(api, model) {
  const { InferenceSession, Tensor, FerriteError } = api;
  const failures = [];
  let checks = 0;
  const check = (ok, what) => {
    ++checks;
    if (!ok) failures.push(what);
  };
  const session = await InferenceSession.create(model);
  check(session.outputNames.join() === 'r,n', `outputNames ${session.outputNames}`);
  const data = Float32Array.from([-1.5, 0, 2, 0.25, -3, 4]);
  const feeds = { x: new Tensor('float32', data, [2, 3]) };
  const relu = Array.from(data, (v) => Math.max(v, 0));
  const neg = Array.from(data, (v) => -v);

  // Resolves to the outputs, checked: exactly `names`, each with the oracle's values.
  const expectOutputs = async (what, names, ...args) => {
    let result;
    try {
      result = await session.run(feeds, ...args);
    } catch (e) {
      check(false, `${what}: threw ${e && e.name}: ${e && e.message}`);
      return {};
    }
    check(Object.keys(result).sort().join() === [...names].sort().join(),
          `${what}: outputs [${Object.keys(result)}], expected [${names}]`);
    for (const name of names) {
      const t = result[name];
      const want = name === 'r' ? relu : neg;
      check(t instanceof Tensor && t.type === 'float32' && t.dims.join() === '2,3' &&
            sameValues(Array.from(t.data), want), `${what}: output ${name} is wrong`);
    }
    return result;
  };
  // The call must reject with `kind` (a constructor) and a message containing `text`.
  const expectError = async (what, kind, text, call) => {
    try {
      await call();
      check(false, `${what}: no error`);
    } catch (e) {
      check(e instanceof kind && String(e.message).includes(text),
            `${what}: ${e && e.name}: ${e && e.message} (expected ${kind.name} '${text}')`);
    }
  };

  // run(feeds) and run(feeds, options): every output.
  await expectOutputs('run(feeds)', ['r', 'n']);
  await expectOutputs('run(feeds, options)', ['r', 'n'], { tag: 'a', logSeverityLevel: 2 });
  await expectOutputs('run(feeds, {})', ['r', 'n'], {});
  await expectOutputs('run(feeds, undefined, options)', ['r', 'n'], undefined, { tag: 'b' });
  await expectOutputs('run(feeds, {}, options)', ['r', 'n'], {}, { logVerbosityLevel: 1 });
  // run(feeds, names, options?).
  await expectOutputs("run(feeds, ['n'])", ['n'], ['n']);
  await expectOutputs("run(feeds, ['n', 'r'], options)", ['r', 'n'], ['n', 'r'], { tag: 'c' });
  await expectOutputs("run(feeds, ['r', 'r'])", ['r'], ['r', 'r']);
  // run(feeds, {name: null | Tensor}, options?).
  await expectOutputs('run(feeds, {n: null})', ['n'], { n: null });
  await expectOutputs('run(feeds, {r: null, n: null}, options)', ['r', 'n'], { r: null, n: null },
                      { terminate: false, extra: {} });
  const given = new Tensor('float32', new Float32Array(6), [2, 3]);
  const pre = await expectOutputs('run(feeds, {r: Tensor})', ['r'], { r: given });
  check(pre.r === given, 'a pre-allocated output is returned as the same Tensor');
  check(sameValues(Array.from(given.data), relu), 'a pre-allocated output is filled');
  const both = await expectOutputs('run(feeds, {r: Tensor, n: null})', ['r', 'n'],
                                   { r: new Tensor('float32', new Float32Array(6), [2, 3]), n: null });
  check(both.n !== given, 'a null fetch gets a new Tensor');

  // Malformed arguments and unknown names are errors, never a silent {}.
  const run = (...args) => () => session.run(feeds, ...args);
  await expectError('unknown name in an array', RangeError, 'invalid output name: z.', run(['r', 'z']));
  await expectError('a name with control characters is quoted escaped', RangeError,
                    'invalid output name: z\\x1b[2J\\n\\u202e.', run(['z\x1b[2J\n\u202e']));
  await expectError('unknown name in an object', RangeError, 'invalid output name: z.',
                    run({ r: null, z: null }));
  await expectError('only unknown names in an object', RangeError, 'invalid output name: z.',
                    run({ z: null }));
  await expectError('an output mapped to a number', TypeError,
                    "'fetches' value of output 'r' must be null or a Tensor, got number", run({ r: 5 }));
  await expectError('an output mapped to undefined', TypeError, "output 'n' must be null or a Tensor",
                    run({ r: null, n: undefined }));
  await expectError('an unknown run option', TypeError, "unknown run option 'tags'", run({ tags: 'a' }));
  await expectError('a bad run option', TypeError, "'logSeverityLevel' must be an integer 0..4",
                    run({ logSeverityLevel: 9 }));
  await expectError('an empty array', TypeError, 'cannot be an empty array', run([]));
  await expectError('a number in the array', TypeError, 'must be a string array', run([0]));
  await expectError('null fetches', TypeError, 'cannot be null', run(null));
  await expectError('a string for fetches', TypeError, "must be 'fetches' or 'options'", run('r'));
  await expectError('a Tensor for fetches', TypeError, 'cannot be a Tensor', run(given));
  await expectError('options not an object', TypeError, "'options' must be an object", run(['r'], 'x'));
  await expectError('options twice', TypeError, 'Unexpected argument[2]', run({ tag: 'a' }, {}));
  await expectError('a pre-allocated tensor of another type', TypeError,
                    "tensor of output 'r' is int32[2,3], but the output is float32[?,3]",
                    run({ r: new Tensor('int32', new Int32Array(6), [2, 3]) }));
  await expectError('a pre-allocated tensor of another rank', TypeError,
                    "tensor of output 'r' is float32[6], but the output is float32[?,3]",
                    run({ r: new Tensor('float32', new Float32Array(6), [6]) }));
  const wrongBatch = new Tensor('float32', new Float32Array(15), [5, 3]);
  await expectError('a pre-allocated tensor of another batch', FerriteError,
                    "output 'r' is float32[2,3], but its pre-allocated tensor is float32[5,3]",
                    run({ r: wrongBatch }));
  check(wrongBatch.data.every((v) => v === 0), 'a mismatched pre-allocated tensor is untouched');
  await expectError('terminate', FerriteError, 'RunOptions.terminate is true', run({ terminate: true }));
  for (const bad of [null, [], given, 'x']) {
    await expectError(`feeds ${bad}`, TypeError, "'feeds' must be an object",
                      () => session.run(bad));
  }
  await expectError('a feed that is not a Tensor', TypeError, "input 'x': expected a Tensor",
                    () => session.run({ x: [1, 2, 3] }));
  await expectOutputs('still usable after the errors', ['r', 'n']);
  await session.release();
  return { checks, failures };
}
