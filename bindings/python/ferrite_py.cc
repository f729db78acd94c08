// The Python module `ferrite` (pybind11), shaped like onnxruntime's Python API so that
// code written for it ports by changing the import:
//
//   import ferrite as ort
//   sess = ort.InferenceSession("model.onnx", threads=2)   # or bytes, or a compiled .fplan
//   name = sess.get_inputs()[0].name
//   y = sess.run(None, {name: x})[0]                        # numpy in, numpy out
//
// InferenceSession(path_or_bytes, sess_options=None, providers=None, *, threads=None,
// backend=None, isa=None): sess_options is a ferrite.SessionOptions (intra_op_num_threads,
// backend, isa, fast_math: bfloat16 products in float32 MatMul/Conv where the CPU has
// AVX-512 BF16, off by default); providers is accepted for compatibility (CPUExecutionProvider
// only). Errors raise ferrite.Error (a RuntimeError) naming the input, op or file;
// ferrite.UnsupportedError (a subclass) for ops and types Ferrite does not support.
// run() releases the GIL; one session may be used from several Python threads (its runs
// are serialized).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings/engine/engine.h"
#include "compiler/plan/error.h"

namespace py = pybind11;

namespace ferrite {
namespace {

struct PySessionOptions {
  int intra_op_num_threads = 0;  // 0: Ferrite's default (1)
  std::string backend;           // "": the build's default
  std::string isa;
  bool fast_math = false;  // SessionOptions::fast_math
};

// ONNX Runtime's type strings ("tensor(float)").
std::string ort_type(DType t) {
  switch (t) {
    case DType::F32:
      return "tensor(float)";
    case DType::F64:
      return "tensor(double)";
    case DType::F16:
      return "tensor(float16)";
    case DType::BF16:
      return "tensor(bfloat16)";
    case DType::Bool:
      return "tensor(bool)";
    case DType::String:
      return "tensor(string)";
    default:
      return std::string("tensor(") + dtype_name(t) + ")";
  }
}

// The numpy dtype of a Ferrite dtype; bfloat16 has none.
py::dtype numpy_dtype(DType t) {
  switch (t) {
    case DType::F32:
      return py::dtype::of<float>();
    case DType::F64:
      return py::dtype::of<double>();
    case DType::F16:
      return py::dtype("float16");
    case DType::I8:
      return py::dtype::of<int8_t>();
    case DType::I16:
      return py::dtype::of<int16_t>();
    case DType::I32:
      return py::dtype::of<int32_t>();
    case DType::I64:
      return py::dtype::of<int64_t>();
    case DType::U8:
      return py::dtype::of<uint8_t>();
    case DType::U16:
      return py::dtype::of<uint16_t>();
    case DType::U32:
      return py::dtype::of<uint32_t>();
    case DType::U64:
      return py::dtype::of<uint64_t>();
    case DType::Bool:
      return py::dtype::of<bool>();
    default:
      throw UnsupportedError(str_cat("no numpy dtype for ", dtype_name(t)));
  }
}

// The Ferrite dtype of a numpy dtype, by kind and size (so that aliases such as int64's
// 'l' and 'q' both match); false for byte-swapped, structured, object, string and other
// dtypes Ferrite does not hold.
bool dtype_of(const py::dtype& d, DType* out) {
  // numpy writes the host's own order as '='; Ferrite's tensors are little-endian.
  const char order = d.byteorder();
  if (order != '=' && order != '|' && order != '<') return false;
  if (d.has_fields()) return false;
  const DType floats[] = {DType::F16, DType::F32, DType::F64};
  const DType ints[] = {DType::I8, DType::I16, DType::I32, DType::I64};
  const DType uints[] = {DType::U8, DType::U16, DType::U32, DType::U64};
  const int log2 = d.itemsize() == 1   ? 0
                   : d.itemsize() == 2 ? 1
                   : d.itemsize() == 4 ? 2
                   : d.itemsize() == 8 ? 3
                                       : -1;
  if (log2 < 0) return false;
  switch (d.kind()) {
    case 'b':
      *out = DType::Bool;
      return log2 == 0;
    case 'f':
      if (log2 == 0) return false;
      *out = floats[log2 - 1];
      return true;
    case 'i':
      *out = ints[log2];
      return true;
    case 'u':
      *out = uints[log2];
      return true;
    default:
      return false;
  }
}

// Names from a model are UTF-8 by the ONNX spec, but untrusted: bytes that are not are
// carried through Python's str as surrogate escapes (PEP 383), so that such a name can
// still be fed and fetched by the str get_inputs() gives.
py::str name_to_py(const std::string& s) {
  PyObject* o =
      PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogateescape");
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

std::string name_from_py(const py::handle& h) {
  PyObject* b = PyUnicode_AsEncodedString(h.ptr(), "utf-8", "surrogateescape");
  if (!b) throw py::error_already_set();
  return std::string(py::reinterpret_steal<py::bytes>(b));
}

struct NodeArg {
  py::str name;
  std::string type;
  py::list shape;  // ints; a symbolic dim is its name (str), an unknown one None
};

// onnxruntime's type strings: "tensor(float)", "seq(tensor(float))", "optional(...)".
NodeArg node_arg(const IoInfo& io, const std::vector<std::string>& dim_names, Container c) {
  NodeArg arg;
  arg.name = name_to_py(io.name);
  arg.type = ort_type(io.dtype);
  if (c == Container::Sequence || c == Container::OptionalSequence)
    arg.type = "seq(" + arg.type + ")";
  if (c == Container::Optional || c == Container::OptionalSequence)
    arg.type = "optional(" + arg.type + ")";
  for (size_t i = 0; i < io.shape.size(); ++i) {
    if (io.shape[i] >= 0) {
      arg.shape.append(io.shape[i]);
    } else if (i < dim_names.size() && !dim_names[i].empty()) {
      arg.shape.append(name_to_py(dim_names[i]));
    } else {
      arg.shape.append(py::none());
    }
  }
  return arg;
}

// A numpy array owning a Tensor's buffer (no copy); a string tensor's strings as an array
// of Python str objects (UTF-8 decoded), as onnxruntime gives them.
py::array to_numpy(Tensor t) {
  if (t.dtype() == DType::String) {
    py::list items;
    for (const std::string& s : t.strings()) items.append(py::str(s));
    py::tuple shape(t.shape().size());
    for (size_t k = 0; k < t.shape().size(); ++k) shape[k] = py::int_(t.shape()[k]);
    const py::module_ np = py::module_::import("numpy");
    return np.attr("array")(items, py::arg("dtype") = "object").attr("reshape")(shape);
  }
  const py::dtype dtype = numpy_dtype(t.dtype());
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  auto owner = std::make_unique<Tensor>(std::move(t));
  void* data = owner->data();
  py::capsule free_tensor(owner.get(), [](void* p) { delete static_cast<Tensor*>(p); });
  owner.release();
  return py::array(dtype, shape, data, free_tensor);
}

// A model's bytes from the buffer protocol, held (the exporter cannot resize or free them)
// until destroyed. Only a C-contiguous buffer is a run of bytes: the first element of a
// view with negative or zero strides is not its lowest address, and a strided view skips
// memory, so those are refused rather than read as `len` bytes from the first element.
class ModelBuffer {
 public:
  explicit ModelBuffer(const py::object& model) {
    if (PyObject_GetBuffer(model.ptr(), &view_, PyBUF_FULL_RO) != 0) throw py::error_already_set();
    if (!PyBuffer_IsContiguous(&view_, 'C')) {
      std::string strides;
      for (int d = 0; view_.strides && d < view_.ndim; ++d)
        strides += str_cat(d ? ", " : "", view_.strides[d], view_.ndim == 1 ? "," : "");
      PyBuffer_Release(&view_);
      throw py::value_error(str_cat("model bytes: the buffer is not C-contiguous (strides (",
                                    strides,
                                    ")); pass bytes(...) or numpy.ascontiguousarray(...)"));
    }
  }
  ~ModelBuffer() { PyBuffer_Release(&view_); }
  ModelBuffer(const ModelBuffer&) = delete;
  ModelBuffer& operator=(const ModelBuffer&) = delete;

  const uint8_t* data() const { return static_cast<const uint8_t*>(view_.buf); }
  size_t size() const { return static_cast<size_t>(view_.len); }

 private:
  Py_buffer view_{};
};

class InferenceSession {
 public:
  InferenceSession(const py::object& model, std::optional<PySessionOptions> sess_options,
                   const py::object& providers, std::optional<int> threads,
                   std::optional<std::string> backend, std::optional<std::string> isa) {
    EngineOptions options;
    if (sess_options) {
      if (sess_options->intra_op_num_threads > 0)
        options.session.threads = sess_options->intra_op_num_threads;
      if (!sess_options->backend.empty()) options.session.backend = sess_options->backend;
      if (!sess_options->isa.empty()) options.session.isa = sess_options->isa;
      options.session.fast_math = sess_options->fast_math;
    }
    if (threads) {
      if (*threads < 1 || *threads > 1024)
        throw py::value_error("threads must be 1..1024, got " + std::to_string(*threads));
      options.session.threads = *threads;
    }
    if (backend) options.session.backend = *backend;
    if (isa) options.session.isa = *isa;
    check_backend(options.session.backend);
    check_providers(providers);
    backend_ = options.session.backend;
    if (PyObject_CheckBuffer(model.ptr())) {  // bytes, bytearray, memoryview, numpy
      const ModelBuffer buffer(model);
      py::gil_scoped_release release;
      engine_ = Engine::from_bytes(buffer.data(), buffer.size(), options);
    } else {
      const std::string path = py::str(py::module_::import("os").attr("fspath")(model));
      py::gil_scoped_release release;
      engine_ = Engine::from_file(path, options);
    }
    // Symbolic dim names for get_inputs()/get_outputs(): the engine keeps -1 in IoInfo.
    dim_names_ = engine_->input_dim_names();
    output_dim_names_ = engine_->output_dim_names();
    for (size_t i = 0; i < engine_->inputs().size(); ++i)
      has_containers_ = has_containers_ || engine_->input_container(i) != Container::Tensor;
    for (size_t i = 0; i < engine_->outputs().size(); ++i)
      has_containers_ = has_containers_ || engine_->output_container(i) != Container::Tensor;
  }

  std::vector<NodeArg> get_inputs() const {
    std::vector<NodeArg> args;
    for (size_t i = 0; i < engine_->inputs().size(); ++i)
      args.push_back(node_arg(engine_->inputs()[i], dim_names_[i], engine_->input_container(i)));
    return args;
  }

  std::vector<NodeArg> get_outputs() const {
    std::vector<NodeArg> args;
    for (size_t i = 0; i < engine_->outputs().size(); ++i)
      args.push_back(
          node_arg(engine_->outputs()[i], output_dim_names_[i], engine_->output_container(i)));
    return args;
  }

  std::vector<std::string> get_providers() const { return {"CPUExecutionProvider"}; }
  const std::string& backend() const { return backend_; }
  // Plans the compiler made (a Ferrite extra): a model compiled once for its symbolic dims
  // makes one for all its shapes (docs/shapes.md).
  int64_t compiles() {
    std::lock_guard<std::mutex> lock(mutex_);
    return engine_->compiles();
  }

  py::list run(const py::object& output_names, const py::dict& feeds_dict) {
    const std::vector<size_t> selected = selected_outputs(output_names);
    if (has_containers_) return run_values(selected, feeds_dict);
    std::vector<Tensor> tensors;
    const std::vector<std::pair<std::string, const Tensor*>> feeds =
        read_feeds(feeds_dict, &tensors, feed_tensor);
    std::vector<Tensor> results;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      results = engine_->run(feeds);
    }
    // An output asked for more than once gets its own array each time: copies for all but
    // the last request, which takes the result itself.
    std::vector<size_t> remaining(results.size(), 0);
    for (size_t k : selected) ++remaining[k];
    py::list out;
    for (size_t k : selected) {
      Tensor& r = results[k];
      out.append(to_numpy(--remaining[k] ? Tensor::copy_of(r) : std::move(r)));
    }
    return out;
  }

 private:
  // The feeds by name, each made by `make(name, value)` into `*held`.
  template <class T, class Make>
  static std::vector<std::pair<std::string, const T*>> read_feeds(const py::dict& feeds_dict,
                                                                  std::vector<T>* held,
                                                                  const Make& make) {
    std::vector<std::string> names;
    held->reserve(feeds_dict.size());
    for (const auto& item : feeds_dict) {
      if (!py::isinstance<py::str>(item.first)) {
        throw py::type_error(str_cat("input_feed keys must be input names (str), got ",
                                     std::string(py::repr(item.first))));
      }
      names.push_back(name_from_py(item.first));
      held->push_back(make(names.back(), item.second));
    }
    std::vector<std::pair<std::string, const T*>> feeds;
    for (size_t i = 0; i < held->size(); ++i) feeds.emplace_back(names[i], &(*held)[i]);
    return feeds;
  }

  // A model with sequence or optional inputs or outputs: a sequence is fed and given back
  // as a list of arrays, an optional without a value as None (as onnxruntime does).
  py::list run_values(const std::vector<size_t>& selected, const py::dict& feeds_dict) {
    std::vector<EngineValue> values;
    const std::vector<std::pair<std::string, const EngineValue*>> feeds = read_feeds(
        feeds_dict, &values,
        [this](const std::string& name, const py::handle& v) { return feed_value(name, v); });
    std::vector<EngineValue> results;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      results = engine_->run_values(feeds);
    }
    auto array = [](const Tensor& t) { return to_numpy(Tensor::copy_of(t)); };
    py::list out;
    for (size_t k : selected) {
      const EngineValue& v = results[k];
      if (v.is_none()) {
        out.append(py::none());
      } else if (v.is_tensor()) {
        out.append(array(v.tensor("")));
      } else {
        py::list items;
        for (const EngineValue::TensorRef& t : v.items("")) items.append(array(*t));
        out.append(items);
      }
    }
    return out;
  }

  // A feed as a value: None for an optional input, a list (or tuple) of arrays for a
  // sequence input, else an array.
  EngineValue feed_value(const std::string& name, const py::handle& value) const {
    Container c = Container::Tensor;
    for (size_t i = 0; i < engine_->inputs().size(); ++i)
      if (engine_->inputs()[i].name == name) c = engine_->input_container(i);
    const bool optional = c == Container::Optional || c == Container::OptionalSequence;
    if (value.is_none() && optional) return EngineValue();
    const bool sequence = c == Container::Sequence || c == Container::OptionalSequence;
    if (sequence && (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value))) {
      std::vector<EngineValue::TensorRef> items;
      DType elem = DType::Undefined;
      for (const py::handle& h : value) {
        items.push_back(std::make_shared<Tensor>(feed_tensor(name, h)));
        elem = items.back()->dtype();
      }
      return EngineValue::sequence(elem, std::move(items));
    }
    if (sequence) fail("input '", name, "': expected a list of numpy arrays (a sequence)");
    return EngineValue::of(feed_tensor(name, value));
  }

  // The model outputs output_names asks for (None: all of them, in model order).
  std::vector<size_t> selected_outputs(const py::object& output_names) const {
    std::vector<size_t> selected;
    if (output_names.is_none()) {
      for (size_t i = 0; i < engine_->outputs().size(); ++i) selected.push_back(i);
      return selected;
    }
    // A str is iterable too, character by character: as onnxruntime, refuse it.
    if (py::isinstance<py::str>(output_names) || !py::isinstance<py::iterable>(output_names)) {
      throw py::type_error(str_cat("output_names must be a list of output names or None, got ",
                                   std::string(py::repr(output_names))));
    }
    for (const py::handle& h : output_names) {
      if (!py::isinstance<py::str>(h)) {
        throw py::type_error(
            str_cat("output_names must hold output names (str), got ", std::string(py::repr(h))));
      }
      selected.push_back(engine_->output_index(name_from_py(h)));
    }
    return selected;
  }

  // A feed as a Tensor (a copy). numpy makes any array-like an array and copies
  // non-contiguous, negative-, zero-strided and Fortran-ordered ones into C order; the
  // dtype is never converted (a wrong one is an error naming the input, as in onnxruntime).
  static Tensor feed_tensor(const std::string& name, const py::handle& value) {
    if (value.is_none()) fail("input '", name, "': expected a numpy array, got None");
    const py::array a = py::array::ensure(value, py::array::c_style);
    if (!a) {
      fail("input '", name, "': expected a numpy array, got a ",
           std::string(py::str(py::type::of(value).attr("__name__"))),
           " that numpy cannot convert");
    }
    std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
    const char kind = a.dtype().kind();
    if (kind == 'U' || kind == 'O') {  // str elements (numpy's unicode, or objects): strings
      std::vector<std::string> strings;
      for (const py::handle& item : a.attr("flat")) {
        if (!py::isinstance<py::str>(item))
          fail("input '", name, "': an element of the array is a ",
               std::string(py::str(py::type::of(item).attr("__name__"))), ", not a str");
        strings.push_back(item.cast<std::string>());
      }
      return Tensor(std::move(shape), std::move(strings));
    }
    DType dtype;
    if (!dtype_of(a.dtype(), &dtype)) {
      fail("input '", name, "': numpy dtype ", std::string(py::str(a.dtype())),
           " is not supported");
    }
    return Tensor(dtype, std::move(shape), a.data());
  }

  static void check_backend(const std::string& backend) {
    if (backend.empty()) return;
    const std::string unknown = unknown_backend_message(backend);
    if (!unknown.empty()) throw py::value_error(unknown);
  }

  static void check_providers(const py::object& providers) {
    if (providers.is_none()) return;
    for (const py::handle& p : providers) {
      // onnxruntime also takes (name, options) pairs.
      const py::object name = py::isinstance<py::tuple>(p) ? p.cast<py::tuple>()[0]
                                                           : py::reinterpret_borrow<py::object>(p);
      if (std::string(py::str(name)) != "CPUExecutionProvider") {
        throw py::value_error("provider '" + std::string(py::str(name)) +
                              "' is not available (Ferrite runs on CPUExecutionProvider)");
      }
    }
  }

  std::unique_ptr<Engine> engine_;
  std::vector<std::vector<std::string>> dim_names_, output_dim_names_;
  std::string backend_;
  bool has_containers_ = false;  // sequence or optional inputs or outputs: run_values
  std::mutex mutex_;
};

}  // namespace
}  // namespace ferrite

PYBIND11_MODULE(ferrite, m) {
  using namespace ferrite;
  m.doc() = "Ferrite: an ONNX compiler and runtime, with onnxruntime's Python API";
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<UnsupportedError> unsupported(m, "UnsupportedError", error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UnsupportedError& e) {
      unsupported(e.what());
    } catch (const Error& e) {
      error(e.what());
    }
  });
  m.attr("__version__") = "1.0.0";
  m.def("get_available_backends", [] {
    default_backend();
    return available_backends();
  });
  m.def("get_available_providers", [] { return std::vector<std::string>{"CPUExecutionProvider"}; });

  py::class_<PySessionOptions>(m, "SessionOptions")
      .def(py::init<>())
      .def_readwrite("intra_op_num_threads", &PySessionOptions::intra_op_num_threads)
      .def_readwrite("backend", &PySessionOptions::backend)
      .def_readwrite("isa", &PySessionOptions::isa)
      .def_readwrite("fast_math", &PySessionOptions::fast_math);

  py::class_<NodeArg>(m, "NodeArg")
      .def_readonly("name", &NodeArg::name)
      .def_readonly("type", &NodeArg::type)
      .def_readonly("shape", &NodeArg::shape)
      .def("__repr__", [](const NodeArg& a) -> std::string {
        // repr() quotes the name with its control characters escaped, as Python does.
        return "NodeArg(name=" + std::string(py::repr(a.name)) + ", type='" + a.type +
               "', shape=" + std::string(py::repr(a.shape)) + ")";
      });

  py::class_<InferenceSession>(m, "InferenceSession")
      .def(py::init<const py::object&, std::optional<PySessionOptions>, const py::object&,
                    std::optional<int>, std::optional<std::string>, std::optional<std::string>>(),
           py::arg("path_or_bytes"), py::arg("sess_options") = py::none(),
           py::arg("providers") = py::none(), py::kw_only(), py::arg("threads") = py::none(),
           py::arg("backend") = py::none(), py::arg("isa") = py::none())
      .def("get_inputs", &InferenceSession::get_inputs)
      .def("get_outputs", &InferenceSession::get_outputs)
      .def("get_providers", &InferenceSession::get_providers)
      .def_property_readonly("backend", &InferenceSession::backend)
      .def("compiles", &InferenceSession::compiles)
      .def("run", &InferenceSession::run, py::arg("output_names"), py::arg("input_feed"));
}
