// ModelCompiler on the ONNX frontend and the compiler (full builds).
#include "bindings/engine/model_compiler.h"

#include "compiler/frontend/onnx/onnx_import.h"
#include "compiler/plan/error.h"
#include "compiler/plan/stage_times.h"

namespace ferrite {
namespace {

DeclaredIo declared(const Value& v) {
  DeclaredIo io;
  io.info.name = v.name;
  io.info.dtype = v.type.dtype;
  io.info.shape = v.type.shape;
  io.dim_names = v.type.dim_names;
  io.rank_known = v.type.rank_known;
  return io;
}

class GraphCompiler final : public ModelCompiler {
 public:
  GraphCompiler(std::unique_ptr<Graph> g, const CompileOptions& options)
      : graph_(std::move(g)), options_(options) {
    if (!graph_) fail("model import produced no graph");
    prepare_graph(*graph_, options_);
    for (const Value* v : graph_->inputs) inputs_.push_back(declared(*v));
    for (const Value* v : graph_->outputs) outputs_.push_back(declared(*v));
  }

  const std::vector<DeclaredIo>& inputs() const override { return inputs_; }
  const std::vector<DeclaredIo>& outputs() const override { return outputs_; }

  Plan compile(const std::vector<IoInfo>& types,
               const std::vector<const Tensor*>& values) override {
    std::vector<TensorType> input_types(types.size());
    for (size_t i = 0; i < types.size(); ++i) {
      input_types[i].dtype = types[i].dtype;
      input_types[i].shape = types[i].shape;
    }
    std::vector<std::shared_ptr<const TensorData>> input_values(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i]) continue;
      auto data = std::make_shared<TensorData>();
      data->dtype = values[i]->dtype();
      data->shape = values[i]->shape();
      data->bytes.assign(values[i]->data(), values[i]->data() + values[i]->nbytes());
      input_values[i] = std::move(data);
    }
    return compile_graph(*graph_, input_types, options_, input_values);
  }

 private:
  std::unique_ptr<Graph> graph_;
  CompileOptions options_;
  std::vector<DeclaredIo> inputs_, outputs_;
};

}  // namespace

std::unique_ptr<ModelCompiler> load_onnx_model(const uint8_t* data, size_t size,
                                               const CompileOptions& options) {
  std::unique_ptr<Graph> g;
  {
    StageTimer timer("import");
    g = import_onnx(data, size, "");
  }
  return std::make_unique<GraphCompiler>(std::move(g), options);
}

std::unique_ptr<ModelCompiler> load_onnx_model_file(const std::string& path,
                                                    const CompileOptions& options) {
  std::unique_ptr<Graph> g;
  {
    StageTimer timer("import");
    g = import_onnx_file(path);
  }
  return std::make_unique<GraphCompiler>(std::move(g), options);
}

bool has_compiler() {
  return true;
}

}  // namespace ferrite
