// The browser demo (index.html): load a model from a drop, a file picker or the bundled
// example, run it on generated inputs with profiling, show the plan, the steps and the
// outputs.
import { InferenceSession, Tensor } from '../../build/wasm/js/ferrite.mjs';

const $ = (id) => document.getElementById(id);
let session = null;

function status(text, error = false) {
  $('status').textContent = text;
  $('status').className = error ? 'error' : '';
}

const fmtDims = (dims) => `[${dims.map((d) => (d === null ? '?' : d)).join(', ')}]`;

// Inputs like `ferrite run` generates them: floats uniform in [-1, 1), integers 0, bools
// false, symbolic dims 1.
function generatedInput(info) {
  const dims = info.dims.map((d) => (d === null ? 1 : d));
  const size = dims.reduce((a, d) => a * d, 1);
  const arrays = { float32: Float32Array, float64: Float64Array, int32: Int32Array,
                   int64: BigInt64Array, int8: Int8Array, uint8: Uint8Array, bool: Uint8Array,
                   int16: Int16Array, uint16: Uint16Array, float16: Uint16Array };
  const Array_ = arrays[info.type];
  if (!Array_) throw new Error(`input '${info.name}': cannot generate ${info.type}`);
  const data = new Array_(size);
  if (info.type === 'float32' || info.type === 'float64') {
    for (let i = 0; i < size; ++i) data[i] = Math.random() * 2 - 1;
  }
  return new Tensor(info.type, data, dims);
}

async function load(bytes, name) {
  status(`Compiling ${name}…`);
  $('results').hidden = true;
  if (session) await session.release();
  session = null;
  const t0 = performance.now();
  try {
    session = await InferenceSession.create(bytes, { profile: true, threads: Number($('threads').value) });
  } catch (e) {
    status(`${name}: ${e.message}`, true);
    return;
  }
  const rows = [...session.inputs.map((x) => ['input', x]), ...session.outputs.map((x) => ['output', x])];
  $('io').tBodies[0].replaceChildren(...rows.map(([kind, x]) => {
    const tr = document.createElement('tr');
    for (const text of [kind, x.name, x.type, fmtDims(x.dims)]) {
      tr.appendChild(document.createElement('td')).textContent = text;
    }
    return tr;
  }));
  $('model').hidden = false;
  const threads = session.threaded ? `${$('threads').value} threads (web workers)` : 'single-threaded';
  status(`${name}: loaded in ${(performance.now() - t0).toFixed(1)} ms, ${threads}. Press Run.`);
}

async function run() {
  if (!session) return;
  const runs = Math.max(1, Math.min(1000, Number($('runs').value) || 1));
  try {
    const feeds = Object.fromEntries(session.inputs.map((x) => [x.name, generatedInput(x)]));
    const t0 = performance.now();
    let outputs;
    for (let r = 0; r < runs; ++r) outputs = await session.run(feeds);
    const ms = (performance.now() - t0) / runs;
    const report = session.report();
    $('summary').textContent = `${report.kernels} kernels, ${report.externs} externs, ` +
      `${report.buffers} buffers; memory pool ${report.pool_bytes} bytes, constants ` +
      `${report.constant_bytes} bytes. ${ms.toFixed(3)} ms per run over ${runs} runs.`;
    const steps = report.steps.map((s) => ({ label: s.label, ms: s.ms / Math.max(s.runs, 1) }));
    const total = steps.reduce((a, s) => a + s.ms, 0) || 1;
    steps.sort((a, b) => b.ms - a.ms);
    $('steps').tBodies[0].replaceChildren(...steps.map((s) => {
      const tr = document.createElement('tr');
      tr.appendChild(document.createElement('td')).textContent = s.label;
      const cells = [s.ms.toFixed(4), `${((100 * s.ms) / total).toFixed(1)}%`];
      for (const text of cells) {
        const td = tr.appendChild(document.createElement('td'));
        td.className = 'num';
        td.textContent = text;
      }
      return tr;
    }));
    $('outputs').textContent = Object.entries(outputs).map(([name, t]) => {
      const first = Array.from(t.data.slice(0, 8), (v) => (typeof v === 'bigint' ? String(v) : Number(v).toPrecision(6)));
      return `${name}: ${t.type}${fmtDims(t.dims)} ${first.join(', ')}${t.size > 8 ? ', …' : ''}`;
    }).join('\n');
    $('results').hidden = false;
    status(`Ran ${runs} times: ${ms.toFixed(3)} ms per run.`);
  } catch (e) {
    status(`run: ${e.message}`, true);
  }
}

async function loadFile(file) {
  await load(new Uint8Array(await file.arrayBuffer()), file.name);
}

$('file').addEventListener('change', (e) => e.target.files[0] && loadFile(e.target.files[0]));
$('load-example').addEventListener('click', async () => {
  const url = new URL($('example').value, import.meta.url);
  try {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`${response.status}`);
    await load(new Uint8Array(await response.arrayBuffer()), url.pathname.split('/').pop());
  } catch (e) {
    status(`cannot fetch ${url}: ${e.message}`, true);
  }
});
$('run').addEventListener('click', run);
const drop = $('drop');
drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  if (e.dataTransfer.files[0]) loadFile(e.dataTransfer.files[0]);
});
status('Ready: drop a model or load the example.');
