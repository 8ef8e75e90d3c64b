#include "quant/weight_only_export.h"

#include <fmt/format.h>

#include <cmath>

#include "core/float_convert.h"
#include "quant/conv_weight_blocks.h"
#include "quant/placement_rules.h"

namespace qtune::quant {

bool UsesLowBitPath(const QuantSite& site) {
  const QuantizerConfig& c = site.config;
  return site.kind == QuantSite::Kind::kWeight &&
         (c.format == QuantFormat::kInt4 || c.block_size > 0 ||
          c.algorithm != WeightAlgorithm::kRtn || !site.input_scale.empty());
}

namespace {

MatrixQuantSpec SpecOf(const QuantSite& site, int64_t group) {
  const QuantizerConfig& c = site.config;
  MatrixQuantSpec spec;
  spec.bits = c.bits;
  spec.symmetric = c.symmetric;
  spec.group = group;
  spec.fp16_scales = c.scale_type == ScaleType::kFloat16;
  spec.clip_search = c.algorithm == WeightAlgorithm::kClip;
  spec.channel_weight = site.input_mean_square;
  return spec;
}

// A Conv weight [O, I, k...] blocked along I (conv_weight_blocks.h).
StatusOr<LowBitWeight> QuantizeConvLowBitWeight(const ir::Node& layer, const QuantSite& site,
                                                const Tensor& weight, const std::string& what) {
  const QuantizerConfig& c = site.config;
  if (weight.dtype() != DataType::kFloat32 || weight.rank() < 3) {
    return InvalidArgumentError(
        fmt::format("{} is {} of rank {}; low-bit conv weights must be "
                    "float32 of rank >= 3",
                    what, DataTypeName(weight.dtype()), weight.rank()));
  }
  if (c.bits != 4 && c.bits != 8) {
    return InvalidArgumentError(fmt::format("{}: {} bits are not supported", what, c.bits));
  }
  const ConvWeightShape shape = ConvShapeOf(weight.sizes());
  const int64_t k = shape.in;
  if (c.block_size <= 0 || k % c.block_size != 0) {
    return InvalidArgumentError(
        fmt::format("{}: input channels = {} need a block_size that divides them (got {})", what, k,
                    c.block_size));
  }
  for (const auto* v : {&site.input_scale, &site.input_mean_square}) {
    if (!v->empty() && static_cast<int64_t>(v->size()) != k) {
      return InvalidArgumentError(
          fmt::format("{}: {} input channel values for {} input channels", what, v->size(), k));
    }
  }
  LowBitWeight out;
  out.reduction_axis = 1;
  out.fp16_scales = c.scale_type == ScaleType::kFloat16;
  out.conv = true;
  const std::vector<float> m = ConvWeightToMatrix(weight.data<float>(), shape, site.input_scale);
  const int64_t n = shape.out * shape.spatial;
  out.matrix = QuantizeMatrix(m.data(), k, n, n, 1, SpecOf(site, c.block_size));
  return out;
}

}  // namespace

StatusOr<LowBitWeight> QuantizeLowBitWeight(const ir::Node& layer, const QuantSite& site,
                                            const Tensor& weight) {
  const QuantizerConfig& c = site.config;
  const std::string what = fmt::format("weight '{}' of {}", site.value, layer.DebugName());
  if (layer.op_type() == "Conv") return QuantizeConvLowBitWeight(layer, site, weight, what);
  if (layer.op_type() != "MatMul" && layer.op_type() != "Gemm") {
    return InvalidArgumentError(what + ": " + QuantFormatName(c.format) +
                                " weight-only quantization applies to MatMul, Gemm and Conv only");
  }
  if (weight.dtype() != DataType::kFloat32 || weight.rank() != 2) {
    return InvalidArgumentError(
        fmt::format("{} is {} of rank {}; low-bit weights must be 2-D "
                    "float32",
                    what, DataTypeName(weight.dtype()), weight.rank()));
  }
  if (c.bits != 4 && c.bits != 8) {
    return InvalidArgumentError(fmt::format("{}: {} bits are not supported", what, c.bits));
  }
  LowBitWeight out;
  out.reduction_axis = *ReductionAxis(layer, 2);
  out.transposed = out.reduction_axis == 1;
  out.fp16_scales = c.scale_type == ScaleType::kFloat16;
  const int64_t k = weight.sizes()[out.reduction_axis];
  const int64_t n = weight.sizes()[1 - out.reduction_axis];
  const int64_t group = c.block_size > 0 ? c.block_size : k;
  if (k % group != 0) {
    return InvalidArgumentError(
        fmt::format("{}: K = {} is not a multiple of block_size {}", what, k, group));
  }
  for (const auto* v : {&site.input_scale, &site.input_mean_square}) {
    if (!v->empty() && static_cast<int64_t>(v->size()) != k) {
      return InvalidArgumentError(
          fmt::format("{}: {} input channel values for K = {}", what, v->size(), k));
    }
  }
  // Row k of W (K x N) times s[k] (AWQ); the layer's input is divided by s.
  std::vector<float> scaled;
  const float* data = weight.data<float>();
  const int64_t row_stride = out.transposed ? 1 : n, col_stride = out.transposed ? k : 1;
  if (!site.input_scale.empty()) {
    scaled.assign(data, data + weight.num_elements());
    for (int64_t r = 0; r < k; ++r) {
      for (int64_t col = 0; col < n; ++col)
        scaled[r * row_stride + col * col_stride] *= site.input_scale[r];
    }
    data = scaled.data();
  }
  MatrixQuantSpec spec;
  spec.bits = c.bits;
  spec.symmetric = c.symmetric;
  spec.group = group;
  spec.fp16_scales = out.fp16_scales;
  spec.clip_search = c.algorithm == WeightAlgorithm::kClip;
  spec.channel_weight = site.input_mean_square;
  out.matrix = QuantizeMatrix(data, k, n, row_stride, col_stride, spec);
  return out;
}

Status InsertInputScale(ir::Graph& graph, ir::Node* layer, const std::vector<float>& scale,
                        const std::string& base, int conv_rank) {
  ir::Value* x = layer->input(0);
  std::vector<int64_t> sizes = {static_cast<int64_t>(scale.size())};
  if (conv_rank >= 3) {  // [1, C, 1...]: x is [N, C, spatial...]
    sizes.assign(static_cast<size_t>(conv_rank), 1);
    sizes[1] = static_cast<int64_t>(scale.size());
  }
  ASSIGN_OR_RETURN(Tensor inv, Tensor::Allocate(DataType::kFloat32, sizes));
  for (size_t i = 0; i < scale.size(); ++i) inv.data<float>()[i] = 1.0f / scale[i];
  ASSIGN_OR_RETURN(
      ir::Value * inv_value,
      graph.AddInitializer(graph.UniqueValueName(base + "_awq_inv_scale"), std::move(inv)));
  ir::NodeSpec spec;
  spec.op_type = "Mul";
  spec.name = graph.UniqueNodeName(base + "_awq_Mul");
  spec.inputs = {x, inv_value};
  spec.output_names = {graph.UniqueValueName(base + "_awq_scaled_input")};
  ASSIGN_OR_RETURN(ir::Node * mul, graph.AddNode(std::move(spec)));
  mul->output(0)->set_type(x->type());
  graph.SetNodeInput(layer, 0, mul->output(0));
  return Status::Ok();
}

namespace {

StatusOr<ir::Value*> AddTensor(ir::Graph& graph, const std::string& name, DataType type,
                               std::vector<int64_t> sizes, const std::vector<uint8_t>& bytes) {
  ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(type, std::move(sizes)));
  std::copy(bytes.begin(), bytes.end(), static_cast<uint8_t*>(t.raw_data()));
  return graph.AddInitializer(graph.UniqueValueName(name), std::move(t));
}

}  // namespace

Status ReplaceWithMatMulNBits(ir::Graph& graph, ir::Node* layer, const LowBitWeight& weight,
                              const std::string& base) {
  const QuantizedMatrix& m = weight.matrix;
  if (m.bits != 4) return InvalidArgumentError("MatMulNBits export takes 4-bit weights");
  const bool gemm = layer->op_type() == "Gemm";
  if (gemm && (layer->GetInt("transA", 0) != 0 || layer->GetFloat("alpha", 1.0f) != 1.0f ||
               layer->GetFloat("beta", 1.0f) != 1.0f)) {
    return InvalidArgumentError(layer->DebugName() +
                                ": MatMulNBits export needs a Gemm with transA = 0 and alpha = "
                                "beta = 1");
  }
  const int64_t k = m.k, n = m.n, blocks = m.k / m.group, blob = m.group / 2;
  // B [N, blocks, blob]: column j's codes along K, two per byte, low nibble first; the
  // symmetric INT4 code q is stored as q + 8 (the default zero point).
  std::vector<int8_t> column(static_cast<size_t>(k));
  std::vector<uint8_t> b_bytes;
  b_bytes.reserve(static_cast<size_t>(n * blocks * blob));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t r = 0; r < k; ++r) {
      const int8_t q = m.codes[static_cast<size_t>(r * n + j)];
      column[static_cast<size_t>(r)] = static_cast<int8_t>(m.symmetric ? q + 8 : q);
    }
    std::vector<uint8_t> packed = PackNibbles(column);
    b_bytes.insert(b_bytes.end(), packed.begin(), packed.end());
  }
  ASSIGN_OR_RETURN(ir::Value * b, AddTensor(graph, base + "_nbits_B", DataType::kUint8,
                                            {n, blocks, blob}, b_bytes));
  ASSIGN_OR_RETURN(Tensor scales, Tensor::Allocate(DataType::kFloat32, {n, blocks}));
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t g = 0; g < blocks; ++g) {
      scales.data<float>()[j * blocks + g] = m.scales[static_cast<size_t>(g * n + j)];
    }
  }
  ASSIGN_OR_RETURN(
      ir::Value * s,
      graph.AddInitializer(graph.UniqueValueName(base + "_nbits_scales"), std::move(scales)));
  std::vector<ir::Value*> inputs = {layer->input(0), b, s};
  if (!m.symmetric) {
    const int64_t zp_row = (blocks + 1) / 2;
    std::vector<uint8_t> zp_bytes;
    std::vector<int8_t> row(static_cast<size_t>(blocks));
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t g = 0; g < blocks; ++g) {
        row[static_cast<size_t>(g)] =
            static_cast<int8_t>(m.zero_points[static_cast<size_t>(g * n + j)]);
      }
      std::vector<uint8_t> packed = PackNibbles(row);
      zp_bytes.insert(zp_bytes.end(), packed.begin(), packed.end());
    }
    ASSIGN_OR_RETURN(ir::Value * zp, AddTensor(graph, base + "_nbits_zero_points", DataType::kUint8,
                                               {n * zp_row}, zp_bytes));
    inputs.push_back(zp);
  }
  ir::Value* old_out = layer->output(0);
  ir::NodeSpec spec;
  spec.op_type = "MatMulNBits";
  spec.domain = "com.microsoft";
  spec.name = graph.UniqueNodeName(layer->name() + "_MatMulNBits");
  spec.inputs = std::move(inputs);
  spec.output_names = {graph.UniqueValueName(old_out->name() + "_nbits")};
  spec.attributes = {ir::Attribute::Int("K", k), ir::Attribute::Int("N", n),
                     ir::Attribute::Int("bits", 4), ir::Attribute::Int("block_size", m.group)};
  ASSIGN_OR_RETURN(ir::Node * nbits, graph.AddNode(std::move(spec)));
  nbits->output(0)->set_type(old_out->type());
  ir::Value* result = nbits->output(0);
  if (gemm && layer->num_inputs() > 2 && layer->input(2) != nullptr) {
    ir::NodeSpec add;
    add.op_type = "Add";
    add.name = graph.UniqueNodeName(layer->name() + "_bias");
    add.inputs = {result, layer->input(2)};
    add.output_names = {graph.UniqueValueName(old_out->name() + "_nbits_bias")};
    ASSIGN_OR_RETURN(ir::Node * add_node, graph.AddNode(std::move(add)));
    add_node->output(0)->set_type(old_out->type());
    result = add_node->output(0);
  }
  const std::string out_name = old_out->name();
  graph.ReplaceAllUsesWith(old_out, result);
  ir::Value* weight_value = layer->input(1);
  RETURN_IF_ERROR(graph.RemoveNode(layer));
  if (weight_value->uses().empty() && !weight_value->is_graph_output() &&
      weight_value->is_initializer()) {
    RETURN_IF_ERROR(graph.RemoveValue(weight_value));
  }
  RETURN_IF_ERROR(graph.RenameValue(result, out_name));
  auto& imports = graph.info().opset_imports;
  if (imports.find("com.microsoft") == imports.end()) imports["com.microsoft"] = 1;
  return Status::Ok();
}

}  // namespace qtune::quant
