#!/usr/bin/python3
"""One benchmark process for PyTorch eager (CPU): build the model's torch module once, time
that (load-to-ready), run once plus warm-up runs, time N runs, and print one JSON object on
the last stdout line.

    /usr/bin/python3 torch_runner.py --export-script tests/models/export_models.py --name NAME
        --threads T [--warmup W] [--iters N] [--input FILE.npy ...] [--outputs-dir DIR]

The module comes from the export script's `build_model(NAME) -> (module, example_inputs)`
(or a bare module), the same function that builds the module exported to NAME/model.onnx.
Without build_model, a script with `MODELS[NAME]() -> case` (case.module) seeded with
torch.manual_seed(zlib.crc32(NAME)) — how tests/models/export_models.py builds its models —
is used the same way. The inputs are the
.npy files given, in the ONNX model's input order, passed positionally to the module (so the
module's forward takes the model's inputs in the same order). --outputs-dir writes
output_<i>.npy for the first run's outputs, flattened (tensor, tuple/list or dict values) in
order. Thread counts are pinned with torch.set_num_threads(T) (the environment's
OMP_NUM_THREADS/OPENBLAS_NUM_THREADS are set by the caller). Errors are reported as
{"error": "..."} with exit status 1.
"""
import argparse
import importlib.util
import json
import os
import sys
import time
import zlib


def thread_cpu_ms():
    """CPU ms of each thread of this process, by thread id (Linux /proc)."""
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            out[tid] = (int(fields[11]) + int(fields[12])) * 1000.0 / tick
    except OSError:
        pass
    return out


def loaded_blas():
    """The BLAS/OpenMP libraries mapped into this process (to show which BLAS torch uses)."""
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                name = os.path.basename(path)
                if "blas" in name or "lapack" in name or "gomp" in name:
                    libs.add(path)
    except OSError:
        pass
    return sorted(libs)


def flatten(out):
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in flatten(o)]
    raise TypeError(f"unsupported module output type {type(out).__name__}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--export-script", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--input", action="append", default=[])
    p.add_argument("--outputs-dir")
    a = p.parse_args()

    import numpy as np
    t = time.perf_counter()
    import torch
    import_ms = (time.perf_counter() - t) * 1e3
    torch.set_num_threads(a.threads)
    torch.set_num_interop_threads(1)

    spec = importlib.util.spec_from_file_location("export_models", a.export_script)
    export_models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(export_models)
    if not hasattr(export_models, "build_model") and not hasattr(export_models, "MODELS"):
        raise RuntimeError(f"{a.export_script} has neither build_model(name) nor MODELS")
    inputs = [torch.from_numpy(np.load(f)) for f in a.input]

    # Load-to-ready: building the module (constructing it, its weights from the export
    # script's fixed seed, eval mode). Torch eager has no compile step.
    t = time.perf_counter()
    if hasattr(export_models, "build_model"):
        built = export_models.build_model(a.name)
        module = built[0] if isinstance(built, tuple) else built
    else:
        if a.name not in export_models.MODELS:
            raise KeyError(f"{a.export_script} has no model '{a.name}'")
        torch.manual_seed(zlib.crc32(a.name.encode()))
        module = export_models.MODELS[a.name]().module
    module.eval()
    ready_ms = (time.perf_counter() - t) * 1e3

    with torch.inference_mode():
        t = time.perf_counter()
        first = flatten(module(*inputs))
        first_run_ms = (time.perf_counter() - t) * 1e3
        if a.outputs_dir:
            os.makedirs(a.outputs_dir, exist_ok=True)
            for i, o in enumerate(first):
                np.save(os.path.join(a.outputs_dir, f"output_{i}.npy"), o.detach().numpy())
        for _ in range(a.warmup):
            module(*inputs)
        samples = []
        cpu0, wall0, threads0 = time.process_time(), time.perf_counter(), thread_cpu_ms()
        for _ in range(a.iters):
            t = time.perf_counter()
            module(*inputs)
            samples.append((time.perf_counter() - t) * 1e3)
        cpu_per_wall = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
        threads1 = thread_cpu_ms()
    thread_cpu = sorted((ms - threads0.get(tid, 0.0) for tid, ms in threads1.items()),
                        reverse=True)[:4]
    print(json.dumps({
        "ready_ms": ready_ms,
        "first_run_ms": first_run_ms,
        "warmup": a.warmup,
        "samples_ms": samples,
        "detail": {
            "torch": torch.__version__,
            "import_ms": import_ms,
            "num_threads": torch.get_num_threads(),
            "cpu_per_wall": cpu_per_wall,
            "thread_cpu_ms": thread_cpu,
            "blas": loaded_blas(),
        },
    }))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # reported to the orchestrator, which shows it in the table
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
        sys.exit(1)
