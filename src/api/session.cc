// qtune::Session (include/qtune/session.h) over runtime::Session.
#include "qtune/session.h"

#include <utility>

#include "api/session_impl.h"
#include "ir/onnx_io.h"
#include "runtime/benchmark.h"

namespace qtune {
namespace api_internal {

std::vector<TensorInfo> DescribeValues(const std::vector<ir::Value*>& values) {
  std::vector<TensorInfo> infos;
  for (const ir::Value* value : values) {
    TensorInfo info;
    info.name = value->name();
    info.dtype = value->dtype();
    if (value->type().shape) {
      info.has_shape = true;
      for (const Dim& dim : value->type().shape->dims()) {
        info.dims.push_back(dim.is_known() ? dim.value : -1);
      }
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

std::unique_ptr<Session> WrapSession(std::unique_ptr<runtime::Session> session,
                                     const ir::Graph& graph, const SessionOptions& options) {
  auto impl = std::make_unique<SessionImpl>();
  impl->session = std::move(session);
  impl->options = options;
  impl->inputs = DescribeValues(graph.inputs());
  impl->outputs = DescribeValues(graph.outputs());
  return std::make_unique<Session>(std::move(impl));
}

}  // namespace api_internal

namespace {

StatusOr<std::unique_ptr<Session>> Create(const ir::Graph& graph, const SessionOptions& options) {
  runtime::SessionOptions engine;
  engine.threads = options.threads;
  engine.thread_policy = options.thread_policy == ThreadPolicy::kFixed
                             ? runtime::ThreadPolicy::kFixed
                             : runtime::ThreadPolicy::kAdaptive;
  engine.use_onednn = options.use_onednn;
  engine.optimize = options.optimize;
  ASSIGN_OR_RETURN(std::unique_ptr<runtime::Session> session,
                   runtime::Session::Create(graph, engine));
  return api_internal::WrapSession(std::move(session), graph, options);
}

}  // namespace

StatusOr<std::unique_ptr<Session>> Session::Open(const std::string& model_path,
                                                 const SessionOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> graph, ir::LoadModel(model_path));
  return Create(*graph, options);
}

StatusOr<std::unique_ptr<Session>> Session::OpenBytes(std::string_view onnx_bytes,
                                                      const SessionOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> graph,
                   ir::ParseModel(onnx_bytes, "model bytes", ir::LoadOptions{}));
  return Create(*graph, options);
}

Session::Session(std::unique_ptr<api_internal::SessionImpl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

StatusOr<NamedTensors> Session::Run(const NamedTensors& inputs) {
  return impl_->session->Run(inputs);
}

StatusOr<LatencyStats> Session::Bench(const NamedTensors& inputs, const BenchOptions& options) {
  // One run first: it checks the inputs (naming a wrong one) and compiles the plan.
  RETURN_IF_ERROR(impl_->session->Run(inputs).status());
  ASSIGN_OR_RETURN(runtime::LatencyStats stats,
                   runtime::MeasureLatency(*impl_->session, inputs,
                                           {.warmup = options.warmup, .iters = options.iters}));
  return LatencyStats{.median_ms = stats.median_ms,
                      .p90_ms = stats.p90_ms,
                      .min_ms = stats.min_ms,
                      .times_ms = std::move(stats.times_ms)};
}

const std::vector<TensorInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo>& Session::outputs() const { return impl_->outputs; }
const SessionOptions& Session::options() const { return impl_->options; }

}  // namespace qtune
