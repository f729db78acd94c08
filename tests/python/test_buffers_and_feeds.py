"""How the Python module takes what callers hand it: model bytes through the buffer protocol
(issue 25's C3: a strided view was read as `len` bytes from its first element, past the
array), feeds of every memory layout and of wrong dtypes, and output selection (D1: a name
asked for twice returned a moved-from tensor the second time).

Oracles: numpy's own indexing of the fed arrays (the Gather fixture computes x[i]), and
the example mlp computed by numpy from its weights.
"""
import pathlib
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


def varint5(v):
    """A 5-byte (non-minimal) protobuf varint."""
    return [0x80 | (v >> (7 * i) & 0x7F) for i in range(4)] + [(v >> 28) & 0x7F]


def negative_stride_model(m):
    """C3's reproducer: a[:, ::-1] of a uint8[2, m] whose bytes after the view's first
    element form a ModelProto claiming 2m-6 bytes of graph: read as len bytes from the
    first element, the reader runs ~m bytes past the array."""
    a = np.zeros((2, m), np.uint8)
    a[0, m - 1] = 0x3A  # ModelProto.graph, length-delimited
    a[1, 0:5] = varint5(2 * m - 6)
    a[1, 5] = 0x12  # GraphProto.name, length-delimited
    a[1, 6:11] = varint5(2 * m - 12)
    return a[:, ::-1]


class ModelBytes(unittest.TestCase):
    def setUp(self):
        self.data = MLP.read_bytes()
        self.x = np.random.default_rng(1).standard_normal((1, 64)).astype(np.float32)

    def assert_runs(self, model):
        sess = ferrite.InferenceSession(model)
        np.testing.assert_allclose(sess.run(None, {"x": self.x})[0], mlp_numpy(self.x),
                                   rtol=1e-5, atol=1e-6)

    def assert_refused(self, view):
        self.assertFalse(memoryview(view).c_contiguous)
        with self.assertRaisesRegex(ValueError, "model bytes: the buffer is not C-contiguous"):
            ferrite.InferenceSession(view)

    def test_negative_strides_are_refused(self):
        for m in (4096, 1 << 20):  # 4096 loaded heap bytes; 32 MiB killed the process
            self.assert_refused(negative_stride_model(m))
        self.assert_refused(np.frombuffer(self.data, np.uint8)[::-1])

    def test_zero_strides_strided_and_fortran_views_are_refused(self):
        flat = np.frombuffer(self.data, np.uint8)
        self.assert_refused(np.broadcast_to(flat, (2, flat.size)))  # strides (0, 1)
        self.assert_refused(np.broadcast_to(flat[:1], (flat.size,)))  # strides (0,)
        doubled = np.repeat(flat, 2)
        self.assert_refused(doubled[::2])  # every byte of the model, 2 apart
        self.assert_refused(memoryview(doubled)[::2])
        n = flat.size - flat.size % 7
        self.assert_refused(np.asfortranarray(flat[:n].reshape(7, -1)))

    def test_contiguous_buffers_of_any_kind_load(self):
        flat = np.frombuffer(self.data, np.uint8)
        self.assertFalse(flat.flags.writeable)  # read-only
        padded = b"junk" + self.data + b"tail"
        for model in (flat, flat.copy(), flat.reshape(1, -1), memoryview(padded)[4:-4],
                      np.ascontiguousarray(np.repeat(flat, 2)[::2]), bytearray(self.data)):
            self.assert_runs(model)

    def test_empty_and_garbage_bytes_are_errors(self):
        for model in (b"", np.zeros(0, np.uint8), np.zeros(64, np.uint8)):
            with self.assertRaises(ferrite.Error):
                ferrite.InferenceSession(model)


class Feeds(unittest.TestCase):
    """The Gather fixture: y = x[i] with x float32[4, 2] and i int64[3]."""

    def setUp(self):
        self.sess = ferrite.InferenceSession(str(FIXTURES / "gather.onnx"))
        self.x = np.arange(8, dtype=np.float32).reshape(4, 2) * 1.5 - 2
        self.i = np.array([3, -4, 1], np.int64)

    def check(self, x, i):
        (y,) = self.sess.run(None, {"x": x, "i": i})
        np.testing.assert_array_equal(y, np.asarray(x)[np.asarray(i)])

    def assert_error(self, message, feeds, kind=ferrite.Error):
        with self.assertRaises(kind) as cm:
            self.sess.run(None, feeds)
        self.assertIn(message, str(cm.exception))

    def test_every_memory_layout(self):
        base = np.arange(32, dtype=np.float32).reshape(8, 4)
        layouts = {
            "strided": base[::2, ::2],
            "negative strides": base[::-2, ::-2],
            "transposed": base[:2, :4].T,
            "fortran": np.asfortranarray(self.x),
            "zero strides": np.broadcast_to(np.array([5.0, -1.0], np.float32), (4, 2)),
            "scalar broadcast": np.broadcast_to(np.float32(2.5), (4, 2)),
        }
        for what, x in layouts.items():
            with self.subTest(what):
                self.assertFalse(x.flags.c_contiguous)
                self.check(x, self.i)
        read_only = self.x.copy()
        read_only.setflags(write=False)
        self.check(read_only, self.i)
        self.check(self.x, np.array([0, 2, 2, 3, 1, -1], np.int64)[::-2])

    def test_sequences_and_dtype_aliases(self):
        self.check(self.x, [3, -4, 1])  # a list of ints is int64
        self.check(self.x, np.array([2, 0, 1], np.longlong))  # int64 spelled 'q'
        self.assert_error("input 'x': expected float32, got float64",
                          {"x": self.x.tolist(), "i": self.i})

    def test_wrong_dtypes_name_the_input(self):
        cases = [
            ("input 'x': expected float32, got float64", self.x.astype(np.float64), self.i),
            ("input 'i': expected int64, got int32", self.x, self.i.astype(np.int32)),
            # An object array is read as strings (numpy's form of them).
            ("input 'x': an element of the array is a float, not a str", self.x.astype(object),
             self.i),
            ("input 'x': numpy dtype complex64 is not supported", self.x.astype(np.complex64),
             self.i),
            ("input 'x': numpy dtype >f4 is not supported", self.x.astype(">f4"), self.i),
            ("input 'x': expected float32, got string", "abc", self.i),
            ("input 'x': expected a numpy array, got None", None, self.i),
            ("input 'x': expected a numpy array, got a list that numpy cannot convert",
             [[1.0], [1.0, 2.0]], self.i),
        ]
        for message, x, i in cases:
            with self.subTest(message):
                self.assert_error(message, {"x": x, "i": i})

    def test_wrong_shapes_and_names(self):
        self.assert_error("input 'x': expected shape [4,2], got []",
                          {"x": np.float32(1), "i": self.i})
        self.assert_error("input 'x': expected shape [4,2], got [0,2]",
                          {"x": np.zeros((0, 2), np.float32), "i": self.i})
        self.assert_error("unknown input 'X' (model inputs: x, i)", {"X": self.x, "i": self.i})
        self.assert_error("missing input 'x' (expected float32[4,2])", {"i": self.i})
        self.assert_error("input_feed keys must be input names (str), got 0",
                          {0: self.x, "i": self.i}, TypeError)
        self.check(self.x, self.i)  # still usable

    def test_empty_and_zero_d_tensors_run(self):
        sess = ferrite.InferenceSession(str(FIXTURES / "sym_add.onnx"))
        for n in (0, 1):
            a = np.ones((n, 3), np.float32)
            (y,) = sess.run(None, {"a": a, "b": 2 * a})
            self.assertEqual(y.shape, (n, 3))
            np.testing.assert_array_equal(y, 3 * a)


class OutputNames(unittest.TestCase):
    def test_a_repeated_name_returns_its_value_each_time(self):
        sess = ferrite.InferenceSession(str(FIXTURES / "add_relu.onnx"))
        x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
        (expected,) = sess.run(None, {"x": x})
        a, b = sess.run(["y", "y"], {"x": x})
        np.testing.assert_array_equal(a, expected)
        np.testing.assert_array_equal(b, expected)
        a[...] = 42  # each request is an array of its own
        np.testing.assert_array_equal(b, expected)

        mlp = ferrite.InferenceSession(str(MLP))
        x = np.random.default_rng(4).standard_normal((1, 64)).astype(np.float32)
        out = mlp.run(["y"] * 3, {"x": x})
        self.assertEqual(len(out), 3)
        for y in out:
            np.testing.assert_allclose(y, mlp_numpy(x), rtol=1e-5, atol=1e-6)

    def test_bad_output_names_are_errors(self):
        sess = ferrite.InferenceSession(str(FIXTURES / "gather.onnx"))
        feeds = {"x": np.zeros((4, 2), np.float32), "i": np.zeros(3, np.int64)}
        with self.assertRaisesRegex(ferrite.Error, r"unknown output 'z' \(model outputs: y\)"):
            sess.run(["y", "z"], feeds)
        with self.assertRaisesRegex(TypeError, "output_names must be a list"):
            sess.run("y", feeds)  # a str would iterate as 'y'
        with self.assertRaisesRegex(TypeError, "output_names must hold output names"):
            sess.run([0], feeds)
        self.assertEqual(sess.run(("y",), feeds)[0].shape, (3, 2))
        self.assertEqual(sess.run([], feeds), [])


def relu_model_named(x_name, y_name):
    """A Relu on float[3] whose input and output names are any bytes (protobuf refuses
    invalid UTF-8, so they replace placeholders of the same length)."""
    from onnx import TensorProto, helper
    px, py_ = b"X" * len(x_name), b"Y" * len(y_name)
    node = helper.make_node("Relu", [px.decode()], [py_.decode()], name="relu")
    value = lambda n: helper.make_tensor_value_info(n.decode(), TensorProto.FLOAT, [3])
    g = helper.make_graph([node], "g", [value(px)], [value(py_)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString().replace(px, x_name).replace(py_, y_name)


class Names(unittest.TestCase):
    """Names with control bytes and invalid UTF-8: usable as str (surrogate escapes), and
    quoted escaped in messages and reprs."""

    def test_hostile_names_round_trip_and_are_escaped_in_messages(self):
        sess = ferrite.InferenceSession(relu_model_named(b"x\x1b[2J\n\xff", b"y\x07\xc2\x9b"))
        (i,), (o,) = sess.get_inputs(), sess.get_outputs()
        self.assertEqual(i.name, "x\x1b[2J\n\udcff")
        self.assertEqual(o.name, "y\x07\x9b")
        self.assertTrue(repr(i).isprintable(), repr(i))
        x = np.array([-1, 0.5, 2], np.float32)
        np.testing.assert_array_equal(sess.run([o.name], {i.name: x})[0], np.maximum(x, 0))
        with self.assertRaises(ferrite.Error) as cm:
            sess.run(None, {i.name: x[:2]})
        self.assertEqual(str(cm.exception),
                         "input 'x\\x1b[2J\\n\\xff': expected shape [3], got [2]")
        with self.assertRaises(ferrite.Error) as cm:
            sess.run(["y"], {i.name: x})
        self.assertEqual(str(cm.exception), "unknown output 'y' (model outputs: y\\x07\\u009b)")


if __name__ == "__main__":
    unittest.main()
