#!/usr/bin/python3
"""Recurrent layers end to end against PyTorch.

Exports torch.nn.LSTM, GRU and RNN (fixed seed, opset 14) to ONNX, runs each model through
the ferrite CLI on every backend and compares Y, Y_h (and Y_c) with torch's outputs: the
largest absolute error relative to the largest |expected| must be <= 1e-4. Prints one line
per model and backend; exits 1 on any mismatch or failed run.

  /usr/bin/python3 tests/models/rnn_check.py --cli build/native/bin/ferrite --work DIR
"""
import argparse
import os
import shlex
import subprocess
import sys
import warnings

import numpy as np
import torch

TOLERANCE = 1e-4
SEQ, BATCH, INPUT, HIDDEN = 6, 3, 5, 7


def make_cases():
    """(name, module, inputs as {name: tensor}); the module's forward takes them in order."""
    torch.manual_seed(0)
    cases = []

    for kind in ("lstm", "gru"):
        for batch_first in (False, True):
            cls = torch.nn.LSTM if kind == "lstm" else torch.nn.GRU
            m = cls(INPUT, HIDDEN, num_layers=2, bidirectional=True, batch_first=batch_first)
            x = torch.randn(BATCH, SEQ, INPUT) if batch_first else torch.randn(SEQ, BATCH, INPUT)
            inputs = {"x": x, "h0": torch.randn(4, BATCH, HIDDEN)}  # 2 layers x 2 directions
            if kind == "lstm":
                inputs["c0"] = torch.randn(4, BATCH, HIDDEN)
            name = f"{kind}_2layer_bidir_{'batch_first' if batch_first else 'seq_first'}"
            cases.append((name, m, inputs))
    for nonlinearity in ("tanh", "relu"):
        m = torch.nn.RNN(INPUT, HIDDEN, num_layers=1, nonlinearity=nonlinearity)
        cases.append((f"rnn_{nonlinearity}", m,
                      {"x": torch.randn(SEQ, BATCH, INPUT), "h0": torch.randn(1, BATCH, HIDDEN)}))
    # A longer single-layer LSTM without initial states (its steps start from zeros).
    m = torch.nn.LSTM(INPUT, HIDDEN)
    cases.append(("lstm_seq64_no_initial_state", m, {"x": torch.randn(64, BATCH, INPUT)}))
    return cases


class Wrapper(torch.nn.Module):
    """Calls an nn.LSTM/GRU/RNN with its initial state(s) and flattens the outputs."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, *init):
        if not init:
            y, state = self.rnn(x)
        elif isinstance(self.rnn, torch.nn.LSTM):
            y, state = self.rnn(x, (init[0], init[1]))
        else:
            y, state = self.rnn(x, init[0])
        return (y, *state) if isinstance(state, tuple) else (y, state)


def export(name, module, inputs, work):
    model = Wrapper(module).eval()
    args = tuple(inputs.values())
    with torch.no_grad():
        expected = [t.numpy() for t in model(*args)]
    out_names = ["y", "h_n", "c_n"][: len(expected)]
    path = os.path.join(work, name + ".onnx")
    torch.onnx.export(model, args, path, opset_version=14, input_names=list(inputs),
                      output_names=out_names)
    files = {}
    for key, t in inputs.items():
        files[key] = os.path.join(work, f"{name}_{key}.npy")
        np.save(files[key], t.numpy())
    return path, files, dict(zip(out_names, expected))


def run_cli(cli, path, files, out_dir, backend):
    cmd = shlex.split(cli) + ["run", path, "--output-dir", out_dir, "--backend", backend]
    for key, f in files.items():
        cmd += ["--input", f"{key}={f}"]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True,
                    help="the ferrite CLI, as a command line (e.g. 'node build/wasm/bin/ferrite.js')")
    ap.add_argument("--work", required=True)
    ap.add_argument("--backends", default="reference,portable")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")  # the exporter's notes on batch_first and RNN shapes
    os.makedirs(a.work, exist_ok=True)
    failures = 0
    for name, module, inputs in make_cases():
        path, files, expected = export(name, module, inputs, a.work)
        for backend in a.backends.split(","):
            out_dir = os.path.join(a.work, f"{name}_{backend}")
            os.makedirs(out_dir, exist_ok=True)
            r = run_cli(a.cli, path, files, out_dir, backend)
            if r.returncode != 0:
                print(f"FAIL {name} {backend}: ferrite exited {r.returncode}: {r.stderr.strip()}")
                failures += 1
                continue
            worst = 0.0
            for out, want in expected.items():
                got = np.load(os.path.join(out_dir, out + ".npy"))
                if got.shape != want.shape:
                    worst = float("inf")
                    print(f"  {out}: shape {got.shape}, expected {want.shape}")
                    continue
                scale = max(float(np.abs(want).max()), 1e-30)
                worst = max(worst, float(np.abs(got - want).max()) / scale)
            ok = worst <= TOLERANCE
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name} {backend}: max rel err {worst:.2e}")
    print(f"rnn_check: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
