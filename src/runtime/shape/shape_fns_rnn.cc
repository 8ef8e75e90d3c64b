// Shape functions of the recurrent ops LSTM, GRU and RNN. Outputs (all of X's type):
//   Y    [seq, dirs, batch, hidden]   layout 1: [batch, seq, dirs, hidden]
//   Y_h  [dirs, batch, hidden]        layout 1: [batch, dirs, hidden]
//   Y_c  (LSTM only) as Y_h
// dirs is 2 for direction "bidirectional", else 1; hidden is the hidden_size attribute or,
// when absent, R's last dimension.
#include <string>
#include <vector>

#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {
namespace {

StatusOr<std::vector<ValueInfo>> RecurrentShape(const ShapeArgs& args) {
  const ir::Node& node = args.node;
  if (!args.has_input(0) || !args.has_input(1) || !args.has_input(2)) {
    return ShapeError(node, "needs inputs X, W and R");
  }
  const ValueInfo& x = args.input(0);
  const ValueInfo& r = args.input(2);
  if (x.sizes.size() != 3 || r.sizes.size() != 3) {
    return ShapeError(node, "X and R must have rank 3");
  }
  const std::string direction = node.GetString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return ShapeError(
        node, "direction '" + direction + "' is not one of forward, reverse, bidirectional");
  }
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const bool batch_major = args.opset >= 14 && node.GetInt("layout", 0) != 0;
  const int64_t seq = x.sizes[batch_major ? 1 : 0];
  const int64_t batch = x.sizes[batch_major ? 0 : 1];
  const int64_t hidden = node.GetInt("hidden_size", r.sizes[2]);
  if (hidden <= 0) return ShapeError(node, "hidden_size must be positive");
  std::vector<ValueInfo> out;
  out.push_back(MakeInfo(x.dtype, batch_major ? std::vector<int64_t>{batch, seq, dirs, hidden}
                                              : std::vector<int64_t>{seq, dirs, batch, hidden}));
  const std::vector<int64_t> state = batch_major ? std::vector<int64_t>{batch, dirs, hidden}
                                                 : std::vector<int64_t>{dirs, batch, hidden};
  for (size_t i = 1; i < node.num_outputs(); ++i) out.push_back(MakeInfo(x.dtype, state));
  return out;
}

}  // namespace

void RegisterRecurrentShapes(ShapeRegistry& registry) {
  registry.Register("LSTM", RecurrentShape);
  registry.Register("GRU", RecurrentShape);
  registry.Register("RNN", RecurrentShape);
}

}  // namespace qtune::runtime
