#!/usr/bin/python3
"""Exports the end-to-end test models (torch_models.py) as ONNX backend-test cases.

    /usr/bin/python3 tests/models/export_models.py --out DIR [--only name1,name2]
                                                   [--half-out HALF_DIR]

writes, per model, DIR/<name>/model.onnx and DIR/<name>/test_data_set_<k>/{input,output}_<i>.pb
(onnx TensorProtos named after the graph's inputs and outputs) — the layout of the ONNX node
tests — and any further oracle a model has as DIR/<name>/<oracle>.npy (gpt_dyn's greedy
decode), so `ferrite conformance DIR` runs them and compares against PyTorch's outputs.
With --half-out, the float16 twins of HALF_TWINS go to HALF_DIR/<twin>: the model rewritten
by quantize_float16.py (onnxconverter-common's form, float32 inputs and outputs), the same
test data (PyTorch's float32 outputs, which a float16 model matches only to its 11-bit
precision: tests/CMakeLists.txt runs them with a looser bound).
Every model and input comes from a seed derived from the model's name: the files are the
same on every run, and `--only` writes the same cases as a full run.
"""
import argparse
import os
import shutil
import sys
import time
import warnings
import zlib

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quantize_float16  # noqa: E402
from torch_models import MODELS  # noqa: E402

HALF_TWINS = {"resnet18": "resnet18_fp16", "bert2_op17": "bert2_fp16"}


def to_numpy(values):
    if isinstance(values, torch.Tensor):
        values = (values,)
    return [v.detach().numpy() for v in values]


def write_tensors(set_dir, prefix, arrays, names):
    for i, (array, name) in enumerate(zip(arrays, names)):
        # copy(order="C"), not ascontiguousarray, which makes a 0-d array 1-d.
        tensor = numpy_helper.from_array(array.copy(order="C"), name)
        with open(os.path.join(set_dir, f"{prefix}_{i}.pb"), "wb") as f:
            f.write(tensor.SerializeToString())


def check_io_names(model_path, case):
    """torch drops inputs the graph does not use; the data files must match the graph."""
    graph = onnx.load(model_path, load_external_data=False).graph
    initializers = {t.name for t in graph.initializer}
    inputs = [i.name for i in graph.input if i.name not in initializers]
    outputs = [o.name for o in graph.output]
    if inputs != case.input_names or outputs != case.output_names:
        raise RuntimeError(f"{model_path}: graph has inputs {inputs} and outputs {outputs}, "
                           f"expected {case.input_names} and {case.output_names}")


def cli_feeds(case_dir, out_dir):
    """Writes the case's test_data_set_0 inputs as out_dir/<input name>.npy and returns the
    ferrite CLI's arguments that feed them (--input NAME=FILE ...)."""
    model = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    feeds = []
    for i, v in enumerate(model.graph.input):
        t = onnx.TensorProto()
        with open(os.path.join(case_dir, "test_data_set_0", f"input_{i}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        path = os.path.join(out_dir, f"{v.name}.npy")
        np.save(path, numpy_helper.to_array(t))
        feeds += ["--input", f"{v.name}={path}"]
    return feeds


def export_case(name, out_dir):
    torch.manual_seed(zlib.crc32(name.encode()))
    case = MODELS[name]()
    case_dir = os.path.join(out_dir, name)
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(case_dir)
    model_path = os.path.join(case_dir, "model.onnx")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about shapes used as constants
        torch.onnx.export(case.module, case.input_sets[0], model_path, opset_version=case.opset,
                          input_names=case.input_names, output_names=case.output_names,
                          dynamic_axes=case.dynamic_axes or None, do_constant_folding=True)
    if case.rewrite:
        model = onnx.load(model_path)
        case.rewrite(model)
        onnx.save(model, model_path)
    check_io_names(model_path, case)
    for k, inputs in enumerate(case.input_sets):
        set_dir = os.path.join(case_dir, f"test_data_set_{k}")
        os.makedirs(set_dir)
        with torch.no_grad():
            outputs = to_numpy(case.module(*inputs))
        write_tensors(set_dir, "input", to_numpy(inputs), case.input_names)
        write_tensors(set_dir, "output", outputs, case.output_names)
    for extra_name, array in case.extra.items():
        np.save(os.path.join(case_dir, f"{extra_name}.npy"), array)
    # The first data set's inputs as .npy files (feeds/<input>.npy), for the CLI's --input:
    # tests/cli/inspect.sh feeds them to models whose generated inputs would not fit them.
    os.makedirs(os.path.join(case_dir, "feeds"))
    cli_feeds(case_dir, os.path.join(case_dir, "feeds"))
    return os.path.getsize(model_path)


def export_half_twin(name, out_dir, half_dir):
    twin_dir = os.path.join(half_dir, HALF_TWINS[name])
    shutil.rmtree(twin_dir, ignore_errors=True)
    shutil.copytree(os.path.join(out_dir, name), twin_dir)
    model_path = os.path.join(twin_dir, "model.onnx")
    model = onnx.load(model_path)
    quantize_float16.convert(model)
    onnx.checker.check_model(model)
    onnx.save(model, model_path)
    return os.path.getsize(model_path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="directory to write the cases into")
    parser.add_argument("--only", default="", help="comma-separated model names (default: all)")
    parser.add_argument("--half-out", default="", help="directory for the float16 twins")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    torch.set_num_threads(1)  # one summation order, whatever the machine; fast enough
    os.makedirs(args.out, exist_ok=True)
    for name in names:
        start = time.time()
        size = export_case(name, args.out)
        print(f"{name}: {size / 1e6:.1f} MB, {time.time() - start:.1f}s", flush=True)
        if args.half_out and name in HALF_TWINS:
            os.makedirs(args.half_out, exist_ok=True)
            size = export_half_twin(name, args.out, args.half_out)
            print(f"{HALF_TWINS[name]}: {size / 1e6:.1f} MB", flush=True)


if __name__ == "__main__":
    main()
