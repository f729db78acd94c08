#!/usr/bin/python3
"""Ferrite against its peers on the same models, inputs and machine (run through run.sh).

    /usr/bin/python3 tests/perf/bench.py [--models a,b] [--engines e1,e2] [--rounds R]
        [--iters N] [--warmup W] [--warmup-ms T] [--target-ms T] [--out DIR] [--no-build] ...

Every (engine, model) measurement is one fresh process (a runner) that loads the model,
reports its load-to-ready time, runs once, warms up, times N runs and exits; its peak RSS
comes from wait4's rusage (through spawn.c). Round 0 is a check round (one timed run,
outputs compared with the expected ones, engines that fail dropped for that model, the
number of timed runs per process chosen); rounds 1..R are timed, and within each round the
engines run round-robin in an order rotated by one each round, so slow drifts of the
machine hit every engine alike. Medians pool every timed run of every round.
See tests/perf/README.md.
"""
import argparse
import datetime
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import time

from bench_report import BASELINE, fmt_ms, peer_lines, peer_ratios, summarize, svg_chart, table
from load import Load, parse as parse_load

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.join(ROOT, "tests", "perf")
PERF_BUILD = os.path.join(ROOT, "build", "perf")  # node_modules, models, results
FERRITE_NATIVE = os.path.join(ROOT, "build", "native", "bin", "ferrite")
FERRITE_WASM = os.path.join(ROOT, "build", "wasm", "bin", "ferrite.js")
NODE = shutil.which("node") or "/usr/bin/node"
PYTHON = "/usr/bin/python3"
SPAWN = os.path.join(PERF_BUILD, "spawn")  # tests/perf/spawn.c

# name -> (kind, threads). The order is the table's order.
ENGINES = {
    "ferrite-native": ("ferrite-native", 1),
    "ferrite-native-t2": ("ferrite-native", 2),
    "ferrite-native-fast": ("ferrite-native", 1),
    "ferrite-wasm": ("ferrite-wasm", 1),
    "ort-node-t1": ("ort-node", 1),
    "ort-node-t2": ("ort-node", 2),
    "ort-web-t1": ("ort-web", 1),
    "ort-web-t2": ("ort-web", 2),
    "torch-t1": ("torch", 1),
    "torch-t2": ("torch", 2),
}
# --ferrite-base PATH / --ferrite-wasm-base PATH: these engines run another build's CLI
# (native, or ferrite.js), for A/B in one run.
BASE_ENGINES = {"ferrite-base": ("ferrite-native", 1), "ferrite-base-t2": ("ferrite-native", 2)}
WASM_BASE_ENGINES = {"ferrite-wasm-base": ("ferrite-wasm", 1)}
CLI_PATH = {}  # engine -> CLI path, for the engines that do not run this build's
NICE = 0  # --nice: the runners' (and the --load process's) niceness

# Models of tests/models/export_models.py, plus the repository's example MLP.
EXPORT_MODELS = ["mlp", "resnet18", "mobilenet_v2", "bert2_op13", "bert2_op17", "bert512", "mlp_4bit", "gcn",
                 "graphsage"]
# Quantized twins of exported models, written by this harness with the project's quantizers
# (tests/models/quantize_static.py: onnxruntime's static QDQ form, uint8 activations
# calibrated on the model's test input by the ferrite CLI, int8 per-channel weights;
# quantize_dynamic.py: its dynamic form, DynamicQuantizeLinear + MatMulInteger;
# quantize_float16.py: float16 weights and activations, float32 inputs and outputs, as
# onnxconverter-common writes them). name -> (float model, quantizer). Not in the default
# model list; name them with --models.
QUANTIZED_MODELS = {"resnet18_qdq": ("resnet18", "static"),
                    "mobilenet_v2_qdq": ("mobilenet_v2", "static"),
                    "bert2_int8": ("bert2_op17", "dynamic"),
                    "resnet18_fp16": ("resnet18", "float16"),
                    "bert2_fp16": ("bert2_op17", "float16")}
QUANTIZED_REL_ERR = 0.1  # their outputs against the float model's, which the check uses
EXAMPLE_MODEL = "example_mlp"  # examples/models/mlp.onnx with a seeded input
ALL_MODELS = [EXAMPLE_MODEL] + EXPORT_MODELS
CHECK_REL_ERR = 1e-3  # max|a-e| / max|e| above this marks an output MISMATCH
# Engines run with `--fast-math` (bfloat16 products in MatMul/Conv): their outputs are
# checked against a looser bound, and the table's rel_err column is their measured error.
FAST_MATH_ENGINES = {"ferrite-native-fast"}
FAST_MATH_REL_ERR = 5e-2


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---- set-up -------------------------------------------------------------------------------
def build(kind, out_dir):
    """scripts/build.sh KIND ferrite (incremental). Returns an error string or None."""
    path = os.path.join(out_dir, f"build_{kind}.log")
    log(f"building ferrite ({kind}); log: {path}")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    with open(path, "w") as f:
        rc = subprocess.call(["bash", os.path.join(ROOT, "scripts", "build.sh"), kind, "ferrite"],
                             stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
    return None if rc == 0 else f"build {kind} failed (see {path})"


def build_spawn():
    """Compiles tests/perf/spawn.c into build/perf/spawn if it is missing or older."""
    src = os.path.join(HERE, "spawn.c")
    if os.path.exists(SPAWN) and os.path.getmtime(SPAWN) >= os.path.getmtime(src):
        return
    os.makedirs(os.path.dirname(SPAWN), exist_ok=True)
    subprocess.run(["cc", "-O2", "-o", SPAWN, src], check=True)


def openblas_path():
    """libopenblas.so.0 of Debian's libopenblas0-openmp (preloaded under torch)."""
    try:
        files = subprocess.run(["dpkg", "-L", "libopenblas0-openmp"], capture_output=True,
                               text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    hits = [f for f in files if f.endswith("/libopenblas.so.0")]
    return hits[0] if hits else None


def npm_version(package):
    try:
        with open(os.path.join(PERF_BUILD, "node_modules", package, "package.json")) as f:
            return json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        return None


# ---- models and inputs --------------------------------------------------------------------
class Model:
    def __init__(self, name, directory):
        self.name = name
        self.dir = directory
        self.path = os.path.join(directory, "model.onnx")
        self.error = None
        self.inputs = []  # [(graph input name, .npy path)]
        self.output_names = []
        self.expected = None  # [np.ndarray] from output_<i>.pb, or None


def write_example_model(model_dir):
    import numpy as np
    from onnx import numpy_helper
    set_dir = os.path.join(model_dir, "test_data_set_0")
    os.makedirs(set_dir, exist_ok=True)
    shutil.copyfile(os.path.join(ROOT, "examples", "models", "mlp.onnx"),
                    os.path.join(model_dir, "model.onnx"))
    x = np.random.default_rng(20240607).uniform(-1, 1, (1, 64)).astype(np.float32)
    with open(os.path.join(set_dir, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())


def quantize_model(m, models_dir, out_dir):
    """Writes quantized model `m` from its float model (exported first: prepare_models orders
    it before), with the float model's test data. Returns an error, or None."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    base, kind = QUANTIZED_MODELS[m.name]
    base_dir = os.path.join(models_dir, base)
    if not os.path.exists(os.path.join(base_dir, "model.onnx")):
        return f"its float model {base} was not exported"
    os.makedirs(m.dir, exist_ok=True)
    shutil.copytree(os.path.join(base_dir, "test_data_set_0"),
                    os.path.join(m.dir, "test_data_set_0"), dirs_exist_ok=True)
    cmd = [PYTHON, os.path.join(ROOT, "tests", "models", f"quantize_{kind}.py"),
           os.path.join(base_dir, "model.onnx"), m.path]
    if kind == "static":  # calibrated on the test input
        graph = onnx.load(os.path.join(base_dir, "model.onnx"), load_external_data=False).graph
        inits = {t.name for t in graph.initializer}
        names = [i.name for i in graph.input if i.name not in inits]
        os.makedirs(os.path.join(m.dir, "calibration"), exist_ok=True)
        cmd += ["--cli", FERRITE_NATIVE]
        for i, name in enumerate(names):
            tensor = onnx.TensorProto()
            with open(os.path.join(base_dir, "test_data_set_0", f"input_{i}.pb"), "rb") as f:
                tensor.ParseFromString(f.read())
            path = os.path.join(m.dir, "calibration", f"input_{i}.npy")
            np.save(path, numpy_helper.to_array(tensor))
            cmd += ["--input", f"{name}={path}"]
    path = os.path.join(out_dir, f"quantize_{m.name}.log")
    log(f"quantizing {base} into {m.name} ({kind}); log: {path}")
    with open(path, "w") as f:
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT,
                             env=dict(os.environ, OMP_NUM_THREADS="1"))
    if rc != 0 or not os.path.exists(m.path):
        return f"quantization failed: {last_line(path) or f'exit status {rc}'} (see {path})"
    return None


def prepare_models(names, models_dir, export_script, out_dir, reexport):
    """Exports the missing models (all with `reexport`), converts every input to .npy once,
    loads the expected outputs."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    models = [Model(n, os.path.join(models_dir, n)) for n in names]
    bases = {QUANTIZED_MODELS[m.name][0] for m in models if m.name in QUANTIZED_MODELS}
    extra = [Model(b, os.path.join(models_dir, b)) for b in sorted(bases - set(names))]
    plain = [m for m in models if m.name not in QUANTIZED_MODELS]
    for m in extra + plain + [m for m in models if m.name in QUANTIZED_MODELS]:
        if m.name == EXAMPLE_MODEL or (os.path.exists(m.path) and not reexport):
            continue
        if m.name in QUANTIZED_MODELS:
            m.error = quantize_model(m, models_dir, out_dir)
            continue
        if not os.path.exists(export_script):
            m.error = f"model not exported and {export_script} does not exist"
            continue
        # One call per model, so that one failing export fails only its model.
        path = os.path.join(out_dir, f"export_{m.name}.log")
        log(f"exporting {m.name} with {export_script}; log: {path}")
        env = dict(os.environ, OMP_NUM_THREADS="1")
        with open(path, "w") as f:
            rc = subprocess.call([PYTHON, export_script, "--out", models_dir, "--only", m.name],
                                 stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        if rc != 0 or not os.path.exists(m.path):
            m.error = f"export failed: {last_line(path) or f'exit status {rc}'} (see {path})"
    for m in models:
        if m.error:
            continue
        try:
            if m.name == EXAMPLE_MODEL:
                write_example_model(m.dir)
            graph = onnx.load(m.path, load_external_data=False).graph
            initializers = {t.name for t in graph.initializer}
            input_names = [i.name for i in graph.input if i.name not in initializers]
            m.output_names = [o.name for o in graph.output]
            set_dir = os.path.join(m.dir, "test_data_set_0")
            npy_dir = os.path.join(m.dir, "npy")
            os.makedirs(npy_dir, exist_ok=True)
            for i, name in enumerate(input_names):
                tensor = onnx.TensorProto()
                with open(os.path.join(set_dir, f"input_{i}.pb"), "rb") as f:
                    tensor.ParseFromString(f.read())
                path = os.path.join(npy_dir, f"input_{i}.npy")
                np.save(path, numpy_helper.to_array(tensor))
                m.inputs.append((name, path))
            outputs = []
            for i in range(len(m.output_names)):
                pb = os.path.join(set_dir, f"output_{i}.pb")
                if not os.path.exists(pb):
                    break
                tensor = onnx.TensorProto()
                with open(pb, "rb") as f:
                    tensor.ParseFromString(f.read())
                outputs.append(numpy_helper.to_array(tensor))
            if outputs and len(outputs) == len(m.output_names):
                m.expected = outputs
        except Exception as e:  # a broken model directory is that model's error, not a crash
            m.error = f"cannot prepare inputs: {type(e).__name__}: {e}"
    return models


def ferrite_file_name(output_name):
    """The file `ferrite run --output-dir` writes for an output (cli_run.cc file_name_for)."""
    s = output_name or "output"
    return "".join(c if c.isalnum() or c in "_-." else "_" for c in s) + ".npy"


# ---- one measurement ----------------------------------------------------------------------
def command_for(engine, model, iters, warmup, outputs_dir, bench_json, export_script):
    kind, threads = ENGINES[engine]
    env = {k: v for k, v in os.environ.items() if k not in ("FERRITE_DUMP", "LD_PRELOAD")}
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    if kind.startswith("ferrite"):
        cmd = [CLI_PATH.get(engine, FERRITE_NATIVE)] if kind == "ferrite-native" else \
            [NODE, "--no-experimental-fetch", CLI_PATH.get(engine, FERRITE_WASM)]
        # Native runs the default backend (the JIT on x86, with oneDNN externs); wasm has
        # only the portable one.
        cmd += ["run", model.path, "--threads", str(threads), "--bench", str(iters),
                "--warmup", str(warmup), "--bench-json", bench_json]
        if engine in FAST_MATH_ENGINES:
            cmd += ["--fast-math"]
        for name, path in model.inputs:
            cmd += ["--input", f"{name}={path}"]
        if outputs_dir:
            cmd += ["--output-dir", outputs_dir]
    elif kind in ("ort-node", "ort-web"):
        cmd = [NODE, os.path.join(HERE, "runners", "ort_runner.mjs"), "--pkg", kind[4:],
               "--modules", PERF_BUILD, "--model", model.path, "--threads", str(threads),
               "--warmup", str(warmup), "--iters", str(iters)]
        for name, path in model.inputs:
            cmd += ["--input", f"{name}={path}"]
        if outputs_dir:
            cmd += ["--outputs-dir", outputs_dir]
    else:  # torch
        cmd = [PYTHON, os.path.join(HERE, "runners", "torch_runner.py"),
               "--export-script", export_script, "--name", model.name,
               "--threads", str(threads), "--warmup", str(warmup), "--iters", str(iters)]
        for _, path in model.inputs:
            cmd += ["--input", path]
        if outputs_dir:
            cmd += ["--outputs-dir", outputs_dir]
        blas = openblas_path()
        if blas:
            env["LD_PRELOAD"] = blas
    return cmd, env


def last_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def error_line(path):
    """The `error: ...` line of a ferrite run's stderr, else its last line."""
    try:
        with open(path, errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        lines = []
    for line in lines:
        if line.startswith("error: "):
            return line[len("error: "):]
    return lines[-1] if lines else ""


def measure(engine, model, iters, warmup, outputs_dir, log_prefix, timeout_s, export_script):
    """Runs one process. Returns a dict: samples_ms, ready_ms, ... or error."""
    bench_json = log_prefix + ".bench.json"
    if os.path.exists(bench_json):
        os.remove(bench_json)
    cmd, env = command_for(engine, model, iters, warmup, outputs_dir, bench_json, export_script)
    out_path, err_path = log_prefix + ".out", log_prefix + ".err"
    # Through the small spawn program, so that ru_maxrss is the runner's own (see spawn.c).
    try:
        done = subprocess.run([SPAWN, str(int(math.ceil(timeout_s))), out_path, err_path] + cmd,
                              capture_output=True, text=True, env=env, cwd=ROOT,
                              timeout=timeout_s + 60,
                              preexec_fn=(lambda: os.nice(NICE)) if NICE else None)
        process = json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as e:
        return {"error": f"spawn failed: {e}"}
    if "error" in process:
        return {"error": process["error"]}
    rc = process["exit_status"]
    if process.pop("timed_out"):
        return dict(process, error=f"timed out after {timeout_s:g}s")
    kind = ENGINES[engine][0]
    if kind.startswith("ferrite"):
        if rc != 0:
            return dict(process, error=error_line(err_path) or f"exit status {rc}")
        try:
            with open(bench_json) as f:
                result = json.load(f)
        except (OSError, ValueError) as e:
            return dict(process, error=f"no --bench-json result: {e}")
    else:
        line = last_line(out_path)
        try:
            result = json.loads(line)
        except ValueError:
            stderr = last_line(err_path)
            return dict(process, error=stderr or line or f"exit status {rc}")
        if "error" in result or rc != 0:
            return dict(process, error=result.get("error", f"exit status {rc}"))
    result.update(process)
    return result


def check_outputs(outputs_dir, engine, model, reference):
    """max|a-e| / max|e| over the outputs, against `reference` (a list of arrays)."""
    import numpy as np
    worst = 0.0
    for i, expected in enumerate(reference):
        name = ferrite_file_name(model.output_names[i]) if engine.startswith("ferrite") \
            else f"output_{i}.npy"
        path = os.path.join(outputs_dir, name)
        if not os.path.exists(path):
            return {"status": "missing output", "rel_err": None}
        actual = np.load(path)
        if actual.shape != expected.shape:
            return {"status": f"shape {list(actual.shape)} != {list(expected.shape)}",
                    "rel_err": None}
        a, e = actual.astype(np.float64), expected.astype(np.float64)
        if e.size == 0:
            continue
        scale = float(np.max(np.abs(e))) or 1.0
        err = float(np.max(np.abs(a - e))) / scale
        if math.isnan(err):
            return {"status": "NaN", "rel_err": None}
        worst = max(worst, err)
    bound = FAST_MATH_REL_ERR if engine in FAST_MATH_ENGINES else CHECK_REL_ERR
    if model.name in QUANTIZED_MODELS:
        bound = QUANTIZED_REL_ERR
    return {"status": "ok" if worst <= bound else "MISMATCH", "rel_err": worst}


# ---- statistics, table, chart -------------------------------------------------------------
# The check round's runs (after its warm-up) that size the timed rounds, and the most warm-up
# runs per process (--warmup-ms / the run time: 0.06 ms runs get 10,000 in 1000 ms).
CHECK_RUNS, CHECK_WARMUP, MAX_WARMUP = 5, 3, 20000


def machine_info():
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f
                        if line.startswith("model name")), "")
    except OSError:
        pass
    git = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT,
                         capture_output=True, text=True).stdout.strip()
    node = subprocess.run([NODE, "--version"], capture_output=True, text=True).stdout.strip()
    return {"cpu": cpu, "cpus": os.cpu_count(), "kernel": platform.release(),
            "python": platform.python_version(), "node": node, "git": git,
            "onnxruntime-node": npm_version("onnxruntime-node"),
            "onnxruntime-web": npm_version("onnxruntime-web"),
            "openblas_preload": openblas_path()}


# ---- main ---------------------------------------------------------------------------------
def run_rounds(a, models, engines, engine_error, results, loads, out_dir):
    """Round 0 (check and sizing), then the timed rounds; fills `results` and `loads`."""
    logs = os.path.join(out_dir, "logs")
    # Round 0: check every engine on every model and size the timed rounds.
    plan = {}  # (model, engine) -> (iters, warmup)
    for m in models:
        reference, reference_from = m.expected, "output_<i>.pb (PyTorch)"
        checks = {}
        for e in engines:
            cell = results[m.name][e]
            if m.error or e in engine_error:
                cell["error"] = m.error or engine_error[e]
                continue
            outputs_dir = os.path.join(out_dir, "outputs", m.name, e)
            shutil.rmtree(outputs_dir, ignore_errors=True)
            # A few runs after a short warm-up: a first run (cold caches, wasm still in V8's
            # baseline tier) is several times slower than the steady state on small models,
            # and sizing from it gave them a handful of runs, some not yet tiered up.
            r = measure(e, m, CHECK_RUNS, CHECK_WARMUP, outputs_dir,
                        os.path.join(logs, f"r0_{m.name}_{e}"), a.timeout, a.export_script)
            if "error" in r:
                cell["error"] = r["error"]
                log(f"  check {m.name:14} {e:15} error: {r['error']}")
                continue
            checks[e] = outputs_dir
            per_run = max(min(r["samples_ms"]), 1e-3)
            iters = int(min(a.iters, max(a.min_iters, round(a.target_ms / per_run))))
            # Warm-up by time too: V8 keeps tiering up a wasm module on a background thread
            # during its first runs (onnxruntime-web's for a dozen runs of a large model,
            # ours for a few hundred runs of a 0.1 ms one).
            warmup = int(max(a.warmup, min(MAX_WARMUP, math.ceil(a.warmup_ms / per_run))))
            plan[(m.name, e)] = (iters, warmup)
            cell["check_run"] = r
            log(f"  check {m.name:14} {e:15} {fmt_ms(per_run)} ms -> {warmup} warm-up, "
                f"{iters} timed runs")
        if reference is None:
            # No expected outputs: compare with onnxruntime-node (else the first engine).
            import numpy as np
            src = next((e for e in ("ort-node-t1", "ort-node-t2") if e in checks),
                       next(iter(checks), None))
            if src:
                try:
                    n = len(m.output_names)
                    reference = [np.load(os.path.join(checks[src], ferrite_file_name(
                        m.output_names[i]) if src.startswith("ferrite") else f"output_{i}.npy"))
                        for i in range(n)]
                    reference_from = src
                except OSError:
                    reference = None
        for e, outputs_dir in checks.items():
            if reference is not None:
                c = check_outputs(outputs_dir, e, m, reference)
                c["against"] = reference_from
                results[m.name][e]["check"] = c

    # Timed rounds: round-robin over engines, the order rotated by one each round.
    started = time.time()
    for rnd in range(1, a.rounds + 1):
        order = engines[(rnd - 1) % len(engines):] + engines[:(rnd - 1) % len(engines)]
        loads.append(os.getloadavg()[0])
        for m in models:
            for e in order:
                if (m.name, e) not in plan:
                    continue
                iters, warmup = plan[(m.name, e)]
                r = measure(e, m, iters, warmup, None,
                            os.path.join(logs, f"r{rnd}_{m.name}_{e}"), a.timeout,
                            a.export_script)
                r["round"] = rnd
                cell = results[m.name][e]
                if "error" in r:  # a later failure (flaky or timeout) is kept, not fatal
                    cell.setdefault("round_errors", []).append(r)
                    log(f"  round {rnd} {m.name} {e}: error: {r['error']}")
                    continue
                cell["runs"].append(r)
        log(f"round {rnd}/{a.rounds} done ({time.time() - started:.0f}s, "
            f"load average {os.getloadavg()[0]:.1f})")
    loads.append(os.getloadavg()[0])
    return plan


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=",".join(ALL_MODELS),
                   help=f"comma-separated (default: all of {','.join(ALL_MODELS)}; any "
                   "other name is exported by --export-script or read from --models-dir)")
    p.add_argument("--engines", default=",".join(ENGINES),
                   help=f"comma-separated (default: all of {','.join(ENGINES)})")
    p.add_argument("--rounds", type=int, default=5, help="timed rounds (default 5)")
    p.add_argument("--iters", type=int, default=100,
                   help="most timed runs per process (default 100)")
    p.add_argument("--min-iters", type=int, default=3,
                   help="fewest timed runs per process (default 3)")
    p.add_argument("--target-ms", type=float, default=500,
                   help="timed runs per process fill about this many ms (default 500)")
    p.add_argument("--warmup", type=int, default=2,
                   help="fewest warm-up runs per process after the first run (default 2)")
    p.add_argument("--warmup-ms", type=float, default=1000,
                   help="warm-up runs fill about this many ms (default 1000)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per process")
    p.add_argument("--out", default=os.path.join(PERF_BUILD, "results"))
    p.add_argument("--models-dir", default=os.path.join(PERF_BUILD, "models"))
    p.add_argument("--export-script",
                   default=os.path.join(ROOT, "tests", "models", "export_models.py"))
    p.add_argument("--reexport", action="store_true",
                   help="export the models again even if --models-dir has them")
    p.add_argument("--no-build", action="store_true", help="do not (re)build ferrite")
    p.add_argument("--load", default="none",
                   help="a process competing for the cores during the whole run: omp2 (two "
                   "OpenMP threads in parallel loops), ompN, spin1 (a busy loop), none (default)")
    p.add_argument("--nice", type=int, default=0,
                   help="run every engine (and the --load process) at this niceness; below 0 "
                   "(root only) they take the cores from the machine's other work, to measure "
                   "as on a quiet machine on a shared one")
    p.add_argument("--ferrite-base", metavar="PATH",
                   help="another build's ferrite CLI: adds the engines ferrite-base and "
                   "ferrite-base-t2 (A/B against it in the same run)")
    p.add_argument("--ferrite-wasm-base", metavar="PATH",
                   help="another build's ferrite.js: adds the engine ferrite-wasm-base")
    a = p.parse_args()
    try:
        parse_load(a.load)
    except ValueError as e:
        p.error(str(e))
    global NICE
    NICE = a.nice
    if a.ferrite_base:
        for e, spec in BASE_ENGINES.items():
            ENGINES[e] = spec
            CLI_PATH[e] = os.path.abspath(a.ferrite_base)
    if a.ferrite_wasm_base:
        for e, spec in WASM_BASE_ENGINES.items():
            ENGINES[e] = spec
            CLI_PATH[e] = os.path.abspath(a.ferrite_wasm_base)
    model_names = [n for n in a.models.split(",") if n]
    engines = [e for e in a.engines.split(",") if e]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        p.error(f"unknown engine(s) {','.join(unknown)}; known: {','.join(ENGINES)}")
    if a.rounds < 1 or a.min_iters < 1 or a.iters < a.min_iters or a.warmup < 0 or \
            a.warmup_ms < 0:
        p.error("need --rounds >= 1, 1 <= --min-iters <= --iters, --warmup >= 0, --warmup-ms >= 0")
    a.export_script = os.path.abspath(a.export_script)
    out_dir = os.path.abspath(a.out)
    os.makedirs(os.path.join(out_dir, "logs"), exist_ok=True)

    build_spawn()
    engine_error = {}
    if not a.no_build:
        for kind, engine_kind in (("native", "ferrite-native"), ("wasm", "ferrite-wasm")):
            users = [e for e in engines if ENGINES[e][0] == engine_kind and e not in CLI_PATH]
            if users:
                err = build(kind, out_dir)
                if err:
                    for e in users:
                        engine_error[e] = err
    for engine, (kind, _) in ENGINES.items():
        package = {"ort-node": "onnxruntime-node", "ort-web": "onnxruntime-web"}.get(kind)
        if engine in engines and package and not npm_version(package):
            engine_error[engine] = f"{package} is not installed in {PERF_BUILD} (run run.sh)"
    for engine in engines:
        path = CLI_PATH.get(engine) or {"ferrite-native": FERRITE_NATIVE,
                                             "ferrite-wasm": FERRITE_WASM}.get(ENGINES[engine][0])
        if path and engine not in engine_error and not os.path.exists(path):
            engine_error[engine] = f"{path} is not built"

    models = prepare_models(model_names, os.path.abspath(a.models_dir), a.export_script,
                            out_dir, a.reexport)
    info = machine_info()
    log(f"machine: {info['cpu']}, {info['cpus']} cpus; git {info['git']}")
    if (os.cpu_count() or 1) <= 2 or os.getloadavg()[0] > 0.5 * (os.cpu_count() or 1):
        log(f"WARNING: {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}: other work "
            "shares these cores, so timings are noisy (see the spread% column); 2-thread "
            "engines cannot scale when the other core is busy.")

    results = {m.name: {e: {"runs": []} for e in engines} for m in models}
    loads = []

    load = Load(a.load) if a.load != "none" else None
    try:
        if load:
            load.start(a.nice)
            log(f"load: {' '.join(load.args)} with {load.threads} OpenMP thread(s) until the end")
        run_rounds(a, models, engines, engine_error, results, loads, out_dir)
    finally:
        load_info = load.stop() if load else None

    for m in models:
        for e in engines:
            cell = results[m.name][e]
            summarize(cell)
            if "median_ms" not in cell and "error" not in cell:
                errs = cell.get("round_errors", [])
                cell["error"] = errs[-1]["error"] if errs else "no result"

    title = (f"Ferrite vs peers: {info['cpu']} ({info['cpus']} cpus), git {info['git']}, "
             f"{a.rounds} rounds, load {a.load}" + (f", nice {a.nice}" if a.nice else ""))
    text = table(results, models, engines)
    peers = peer_ratios(results, models, engines)
    if peers:
        text += "\n\nmedian ratios, Ferrite / peer at the same threads:\n" + "\n".join(peer_lines(peers))
    doc = {
        "meta": dict(info, date=datetime.datetime.now().isoformat(timespec="seconds"),
                     rounds=a.rounds, iters_max=a.iters, iters_min=a.min_iters,
                     target_ms=a.target_ms, warmup_min=a.warmup,
                     warmup_ms=a.warmup_ms, baseline=BASELINE,
                     load_average_per_round=loads, load=load_info,
                     ferrite_base=a.ferrite_base, nice=a.nice, command=sys.argv),
        "engines": {e: {"kind": ENGINES[e][0], "threads": ENGINES[e][1]} for e in engines},
        "results": results,
        "peer_ratios": peers,
    }
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out_dir, "results.svg"), "w") as f:
        f.write(svg_chart(results, models, engines, title))
    with open(os.path.join(out_dir, "table.txt"), "w") as f:
        f.write(text + "\n")
    print(title)
    print(f"load average per round: {' '.join(f'{x:.1f}' for x in loads)}")
    if load_info:
        print(f"load {load_info['kind']}: {load_info['cpu_per_wall']} CPU s per s over "
              f"{load_info['wall_s']} s")
    print(text)
    print(f"wrote {out_dir}/results.json, results.svg, table.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
