"""The Python module `ferrite` (bindings/python), used the way onnxruntime's is.

Run by ctest (python_tests) with PYTHONPATH=build/<kind>/python; FERRITE_MODELS_DIR (the
exported test models) and FERRITE_CLI (the `ferrite` binary, to compile a plan) come from
ctest too. Oracles: numpy computing the example mlp from its own weights, and PyTorch's
outputs stored with the exported models.
"""
import gc
import os
import pathlib
import re
import subprocess
import tempfile
import threading
import unittest

import numpy as np
import onnx
from onnx import numpy_helper

import ferrite

ROOT = pathlib.Path(__file__).resolve().parents[2]
MLP = ROOT / "examples" / "models" / "mlp.onnx"
FIXTURES = ROOT / "tests" / "cli" / "fixtures"


def mlp_numpy(x):
    w = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(MLP)).graph.initializer}
    h = np.maximum(x @ w["w1"] + w["b1"], 0)
    z = h @ w["w2"] + w["b2"]
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def mlp_input(seed=3):
    return np.random.default_rng(seed).standard_normal((1, 64)).astype(np.float32)


class PortedFromOnnxruntime(unittest.TestCase):
    def test_onnxruntime_code_runs_with_the_import_changed(self):
        import ferrite as ort  # was: import onnxruntime as ort

        sess = ort.InferenceSession(str(MLP), providers=["CPUExecutionProvider"])
        input_name = sess.get_inputs()[0].name
        output_name = sess.get_outputs()[0].name
        x = mlp_input()
        y = sess.run([output_name], {input_name: x})[0]
        self.assertEqual(y.dtype, np.float32)
        self.assertEqual(y.shape, (1, 10))
        np.testing.assert_allclose(y, mlp_numpy(x), rtol=1e-5, atol=1e-6)

        so = ort.SessionOptions()
        so.intra_op_num_threads = 2
        sess2 = ort.InferenceSession(str(MLP), so, providers=[("CPUExecutionProvider", {})])
        np.testing.assert_allclose(sess2.run(None, {"x": x})[0], y, rtol=1e-6, atol=1e-7)
        self.assertEqual(sess.get_providers(), ["CPUExecutionProvider"])
        self.assertIn("CPUExecutionProvider", ort.get_available_providers())

        # Fast math (off by default): bfloat16 products where the CPU has them, so the
        # softmax's probabilities agree to bfloat16's rounding of the logits.
        self.assertFalse(ort.SessionOptions().fast_math)
        so = ort.SessionOptions()
        so.fast_math = True
        fast = ort.InferenceSession(str(MLP), so).run(None, {"x": x})[0]
        np.testing.assert_allclose(fast, y, rtol=0, atol=2e-2)


class Sessions(unittest.TestCase):
    def test_io_metadata(self):
        sess = ferrite.InferenceSession(str(MLP))
        (i,) = sess.get_inputs()
        (o,) = sess.get_outputs()
        self.assertEqual((i.name, i.type, i.shape), ("x", "tensor(float)", [1, 64]))
        self.assertEqual((o.name, o.type, o.shape), ("y", "tensor(float)", [1, 10]))
        self.assertIn("NodeArg(name='x'", repr(i))
        sym = ferrite.InferenceSession(FIXTURES / "sym_add.onnx")  # a pathlib.Path
        self.assertEqual([a.shape for a in sym.get_inputs()], [["N", 3], ["N", 3]])
        self.assertEqual([a.shape for a in sym.get_outputs()], [["N", 3]])

    def test_every_backend_from_path_bytes_and_bytearray(self):
        x = mlp_input(5)
        expected = mlp_numpy(x)
        data = MLP.read_bytes()
        for backend in ferrite.get_available_backends():
            for model in (str(MLP), data, bytearray(data), memoryview(data)):
                sess = ferrite.InferenceSession(model, backend=backend, threads=2)
                self.assertEqual(sess.backend, backend)
                np.testing.assert_allclose(sess.run(None, {"x": x})[0], expected,
                                           rtol=1e-5, atol=1e-6, err_msg=backend)

    def test_symbolic_batch_and_views(self):
        sess = ferrite.InferenceSession(str(FIXTURES / "sym_add.onnx"))
        for n in (1, 4, 9):
            a = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
            b = np.full((3, n), 0.5, dtype=np.float32).T  # not C-contiguous
            (y,) = sess.run(None, {"a": a, "b": b})
            np.testing.assert_array_equal(y, a + b)

    def test_a_symbolic_batch_compiles_once(self):
        # sym_mlp (Gemm + Relu, Gemm over x [N, 8]) is compiled once for every N (on the
        # first N >= 2). numpy computes it from the model's own weights.
        path = FIXTURES / "sym_mlp.onnx"
        w = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer}
        sess = ferrite.InferenceSession(str(path))
        for n in (2, 5, 33, 5, 1):
            x = np.random.default_rng(n).standard_normal((n, 8)).astype(np.float32)
            (y,) = sess.run(None, {"x": x})
            want = np.maximum(x @ w["w1"].T + w["b1"], 0) @ w["w2"] + w["b2"]
            np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-5)
        self.assertEqual(sess.compiles(), 1)

    def test_sequences_come_back_as_lists(self):
        # seq_loop: a Loop inserts x * i into a sequence n times; all = the items joined.
        sess = ferrite.InferenceSession(str(FIXTURES / "seq_loop.onnx"))
        self.assertEqual(sess.get_outputs()[0].type, "seq(tensor(float))")
        x = np.array([1, -2], dtype=np.float32)
        for n in (3, 1):
            seq, joined = sess.run(None, {"n": np.array(n, dtype=np.int64), "x": x})
            self.assertIsInstance(seq, list)
            self.assertEqual(len(seq), n)
            for i, item in enumerate(seq):
                np.testing.assert_array_equal(item, x * i)
            np.testing.assert_array_equal(joined, np.concatenate([x * i for i in range(n)]))
        # No iteration: nothing to join, an error naming the node (as onnxruntime's).
        with self.assertRaisesRegex(RuntimeError, "ConcatFromSequence"):
            sess.run(None, {"n": np.array(0, dtype=np.int64), "x": x})

    def test_strings_in_and_out(self):
        # strings: lower case, split by ' ', words to ids (LabelEncoder), joined with '!'.
        sess = ferrite.InferenceSession(str(FIXTURES / "strings.onnx"))
        self.assertEqual(sess.get_inputs()[0].type, "tensor(string)")
        text = ["Hello World", "ferrite  is FAST", "na\u00efve \u65e5\u672c"]
        words = [t.lower().split(" ") for t in text]
        width = max(len(w) for w in words)
        padded = np.array([w + [""] * (width - len(w)) for w in words], dtype=object)
        ids = {"hello": 1, "world": 2, "ferrite": 3}
        for feed in (np.array(text), np.array(text, dtype=object)):  # '<U' and object arrays
            ids10, shout, counts, flat, is_hello = sess.run(None, {"text": feed})
            self.assertEqual(shout.dtype, object)
            self.assertEqual(shout.tolist(), [t.lower() + "!" for t in text])
            self.assertEqual(flat.tolist(), padded.T.reshape(-1).tolist())
            np.testing.assert_array_equal(counts, [len(w) for w in words])
            np.testing.assert_array_equal(ids10, [10 * ids.get(w, 0) for w in flat.tolist()])
            np.testing.assert_array_equal(is_hello, [w[0] == "hello" for w in words])
        with self.assertRaisesRegex(RuntimeError, "an element of the array is a int, not a str"):
            sess.run(None, {"text": np.array(["a", 3], dtype=object)})

    def test_regular_expressions(self):
        # regex.onnx: RegexFullMatch of e-mail addresses at .com or .org, then their count;
        # the oracle is Python's re with ASCII classes (as RE2's \w).
        sess = ferrite.InferenceSession(str(FIXTURES / "regex.onnx"))
        pattern = re.compile(r"[\w.+-]+@[\w-]+\.(com|org)", re.ASCII)
        text = ["ann@example.com", "x@y.net", "b.o+b@fe-rrite.org", "\u00e4@x.org", ""]
        m, count = sess.run(None, {"text": np.array(text)})
        want = [pattern.fullmatch(t) is not None for t in text]
        np.testing.assert_array_equal(m, want)
        self.assertEqual(int(count), sum(want))
        with self.assertRaisesRegex(RuntimeError, r"invalid pattern '\[a-z' \(RE2 syntax\)"):
            ferrite.InferenceSession(str(FIXTURES / "regex_invalid.onnx"))

    def test_integer_inputs_and_negative_indices(self):
        sess = ferrite.InferenceSession(str(FIXTURES / "gather.onnx"))
        x = np.arange(8, dtype=np.float32).reshape(4, 2)
        i = np.array([3, -4, 1], dtype=np.int64)
        np.testing.assert_array_equal(sess.run(["y"], {"x": x, "i": i})[0], x[i])

    def test_outputs_outlive_the_session_and_are_writable(self):
        sess = ferrite.InferenceSession(str(MLP))
        y = sess.run(None, {"x": mlp_input()})[0]
        expected = y.copy()
        del sess
        gc.collect()
        self.assertTrue(y.flags.writeable and y.flags.c_contiguous)
        np.testing.assert_array_equal(y, expected)
        y[0, 0] = 7.0

    def test_compiled_plan(self):
        cli = os.environ.get("FERRITE_CLI")
        if not cli:
            self.skipTest("FERRITE_CLI is not set (ctest sets it)")
        with tempfile.TemporaryDirectory() as d:
            plan = os.path.join(d, "mlp.fplan")
            subprocess.run([cli, "compile", str(MLP), "-o", plan], check=True,
                           stdout=subprocess.DEVNULL)
            sess = ferrite.InferenceSession(plan)
            x = mlp_input(9)
            np.testing.assert_allclose(sess.run(None, {"x": x})[0], mlp_numpy(x),
                                       rtol=1e-5, atol=1e-6)
            with open(plan, "rb") as f:
                data = f.read()
            self.assertTrue(data.startswith(b"FRPLAN"))
            self.assertEqual(ferrite.InferenceSession(data).get_inputs()[0].shape, [1, 64])

    def test_one_session_from_several_threads(self):
        sess = ferrite.InferenceSession(str(MLP))
        xs = [mlp_input(s) for s in range(8)]
        expected = [sess.run(None, {"x": x})[0] for x in xs]
        wrong = []

        def work(t):
            for r in range(25):
                k = (t + r) % len(xs)
                if not np.array_equal(sess.run(None, {"x": xs[k]})[0], expected[k]):
                    wrong.append((t, r))

        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(wrong, [])


class Errors(unittest.TestCase):
    def setUp(self):
        self.sess = ferrite.InferenceSession(str(FIXTURES / "gather.onnx"))
        self.x = np.zeros((4, 2), np.float32)
        self.i = np.array([0, 1, 2], np.int64)

    def assert_error(self, message, feeds, output_names=None, kind=ferrite.Error):
        with self.assertRaises(kind) as cm:
            self.sess.run(output_names, feeds)
        self.assertIn(message, str(cm.exception))

    def test_feeds(self):
        self.assert_error("input 'x': expected float32, got float64",
                          {"x": self.x.astype(np.float64), "i": self.i})
        self.assert_error("input 'x': expected shape [4,2], got [2,4]",
                          {"x": self.x.reshape(2, 4), "i": self.i})
        self.assert_error("unknown input 'z' (model inputs: x, i)", {"z": self.x, "i": self.i})
        self.assert_error("missing input 'i' (expected int64[3])", {"x": self.x})
        self.assert_error("input 'x': numpy dtype complex64 is not supported",
                          {"x": self.x.astype(np.complex64), "i": self.i})
        self.assert_error("unknown output 'w' (model outputs: y)", {"x": self.x, "i": self.i},
                          ["w"])
        self.assert_error("out of range", {"x": self.x, "i": np.array([0, 4, 1], np.int64)})
        self.assertTrue(issubclass(ferrite.Error, RuntimeError))
        # Still usable after the errors.
        self.assertEqual(self.sess.run(None, {"x": self.x, "i": self.i})[0].shape, (3, 2))

    def test_loading(self):
        with self.assertRaises(ferrite.UnsupportedError) as cm:
            ferrite.InferenceSession(str(FIXTURES / "unknown_op.onnx"))
        self.assertIn("FancyOp", str(cm.exception))
        with self.assertRaises(ferrite.Error) as cm:
            ferrite.InferenceSession(str(FIXTURES / "missing.onnx"))
        self.assertIn("missing.onnx", str(cm.exception))
        with self.assertRaises(ferrite.Error):
            ferrite.InferenceSession(MLP.read_bytes()[:100])
        with self.assertRaises(ferrite.Error):
            ferrite.InferenceSession(b"FRPLAN\0\0\4\0\0\0")
        with self.assertRaisesRegex(ValueError, "unknown backend 'gpu'"):
            ferrite.InferenceSession(str(MLP), backend="gpu")
        with self.assertRaisesRegex(ValueError, "CUDAExecutionProvider"):
            ferrite.InferenceSession(str(MLP), providers=["CUDAExecutionProvider"])
        with self.assertRaisesRegex(ValueError, "threads must be"):
            ferrite.InferenceSession(str(MLP), threads=0)


def load_pb(path):
    t = onnx.TensorProto()
    t.ParseFromString(pathlib.Path(path).read_bytes())
    return numpy_helper.to_array(t)


class ExportedModels(unittest.TestCase):
    """The exported test models against PyTorch's outputs (build/models)."""

    def test_models_match_pytorch(self):
        models = os.environ.get("FERRITE_MODELS_DIR")
        if not models:
            self.skipTest("FERRITE_MODELS_DIR is not set (ctest sets it)")
        ran = 0
        for name in ("mlp", "resnet18", "bert2_op17", "gcn"):
            case = pathlib.Path(models) / name
            self.assertTrue((case / "model.onnx").exists(), f"{case} was not exported")
            sess = ferrite.InferenceSession(str(case / "model.onnx"))
            data = case / "test_data_set_0"
            names = [i.name for i in sess.get_inputs()]
            feeds = {n: load_pb(data / f"input_{k}.pb") for k, n in enumerate(names)}
            outputs = sess.run(None, feeds)
            for k, got in enumerate(outputs):
                want = load_pb(data / f"output_{k}.pb")
                err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
                self.assertLessEqual(err, 1e-4, f"{name} output {k}")
            ran += 1
        self.assertEqual(ran, 4)

    def test_bert_dyn_compiles_once_for_every_shape(self):
        # bert_dyn's 31 (batch, seq) pairs (batch and seq 1 among them, seq up to its 128
        # positions) on one session: each against PyTorch, and one compile for them all.
        models = os.environ.get("FERRITE_MODELS_DIR")
        if not models:
            self.skipTest("FERRITE_MODELS_DIR is not set (ctest sets it)")
        case = pathlib.Path(models) / "bert_dyn"
        sess = ferrite.InferenceSession(str(case / "model.onnx"))
        names = [i.name for i in sess.get_inputs()]
        sets = sorted(case.glob("test_data_set_*"))
        self.assertGreaterEqual(len(sets), 30)
        for data in sets:
            feeds = {n: load_pb(data / f"input_{k}.pb") for k, n in enumerate(names)}
            for k, got in enumerate(sess.run(None, feeds)):
                want = load_pb(data / f"output_{k}.pb")
                err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
                self.assertLessEqual(err, 1e-4, f"{data.name} output {k}")
        self.assertEqual(sess.compiles(), 1)

    def test_gpt_greedy_decode_matches_pytorch(self):
        # gpt_dyn, a GPT-2 decoder with past key/values: 64 tokens generated greedily, each
        # step fed the presents of the one before (a new past length, so a new shape, every
        # step), token by token as PyTorch generated them. Two compiles: the prompt's step
        # (an empty past) and every later one (one token), each an instance of its plan.
        models = os.environ.get("FERRITE_MODELS_DIR")
        if not models:
            self.skipTest("FERRITE_MODELS_DIR is not set (ctest sets it)")
        case = pathlib.Path(models) / "gpt_dyn"
        sess = ferrite.InferenceSession(str(case / "model.onnx"))
        names = [i.name for i in sess.get_inputs()]
        self.assertEqual(sess.get_inputs()[1].shape, ["batch", 4, "past", 64])
        want = np.load(case / "greedy_tokens.npy")
        ids = np.load(case / "greedy_prompt.npy")
        past = [np.zeros((1, 4, 0, 64), np.float32) for _ in names[1:]]
        got = []
        for _ in range(len(want)):
            logits, *past = sess.run(None, dict(zip(names, [ids, *past])))
            ids = logits[:, -1:].argmax(-1).astype(np.int64)
            got.append(int(ids[0, 0]))
            self.assertEqual(past[0].shape[2], len(got) + 4, "the present grows by one")
        self.assertEqual(got, want.tolist())
        self.assertEqual(sess.compiles(), 2)


if __name__ == "__main__":
    unittest.main()
