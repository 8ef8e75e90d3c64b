// The engine behind qtune::Session (include/qtune/session.h): a runtime::Session and the
// model's declared inputs and outputs. Private to src/api/ (not installed).
#pragma once

#include <memory>
#include <vector>

#include "ir/graph.h"
#include "qtune/session.h"
#include "runtime/session.h"

namespace qtune::api_internal {

struct SessionImpl {
  std::unique_ptr<runtime::Session> session;
  SessionOptions options;
  std::vector<TensorInfo> inputs, outputs;
};

// The declared inputs and outputs of `graph` (as loaded, before any pass).
std::vector<TensorInfo> DescribeValues(const std::vector<ir::Value*>& values);

// Wraps an engine session created from `graph` (the infos are read from it).
std::unique_ptr<Session> WrapSession(std::unique_ptr<runtime::Session> session,
                                     const ir::Graph& graph, const SessionOptions& options);

}  // namespace qtune::api_internal
