// Writes the seed corpus of the fuzz targets: small models built with the GraphBuilder
// (one per family of ops, so mutations reach many kernels and shape rules, data-dependent
// sizes included) and a few .npy and .npz files. Run from the repository root after
// changing it:
//   build/tests/fuzz/qtune_fuzz_make_corpus tests/fuzz/corpus
// models/fmnist/fmnist_resnet.onnx is copied in as the one real model.
#include <cstdio>
#include <string>
#include <vector>

#include "core/npy.h"
#include "core/npz.h"
#include "core/tensor.h"
#include "corpus_builders.h"
#include "ir/builder.h"
#include "ir/onnx_io.h"

namespace qtune {

void WriteOpFamilyCorpus(const std::string& dir);  // make_corpus_ops.cc
void WriteLowBitCorpus(const std::string& dir);    // make_corpus_lowbit.cc

namespace {

using ir::Attribute;
using ir::GraphBuilder;
using ir::Value;

using corpus::Floats;
using corpus::Ints;
using corpus::Save;

void Conv(const std::string& dir) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {1, 2, 6, 6});
  Value* c = b.Op(
      "Conv",
      {x, b.Initializer("w", Floats({3, 2, 3, 3}, -0.5f)), b.Initializer("b", Floats({3}, 0.1f))},
      {Attribute::Ints("pads", {1, 1, 1, 1})});
  Value* r = b.Op("Relu", {c});
  Value* p = b.Op("MaxPool", {r},
                  {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Ints("strides", {2, 2})});
  Value* a = b.Op("GlobalAveragePool", {p});
  Value* f = b.Op("Flatten", {a});
  Value* g =
      b.Op("Gemm",
           {f, b.Initializer("gw", Floats({4, 3}, -0.3f)), b.Initializer("gb", Floats({4}, 0.0f))},
           {Attribute::Int("transB", 1)});
  b.Output(b.Op("Softmax", {g}, {Attribute::Int("axis", 1)}));
  Save(b, dir, "conv_pool_gemm");
}

void Elementwise(const std::string& dir) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, Shape({Dim::Symbolic("batch"), Dim::Known(4)}));
  Value* y = b.Input("y", DataType::kFloat32, {4});
  Value* s = b.Op("Add", {x, y});
  Value* m = b.Op("Mul", {s, b.Initializer("k", Floats({1}, 2.0f))});
  Value* d = b.Op("Div", {m, b.Op("Sigmoid", {y})});
  Value* c = b.Op("Clip", {d, b.Initializer("lo", Tensor::Scalar<float>(-1.0f)),
                           b.Initializer("hi", Tensor::Scalar<float>(1.0f))});
  Value* w = b.Op("Where", {b.Op("Greater", {c, y}), c, b.Op("Neg", {c})});
  b.Output(b.Op("Tanh", {b.Op("Sub", {w, b.Op("Exp", {x})})}));
  b.Output(b.Op("ReduceMean", {x}, {Attribute::Ints("axes", {1})}, {.domain = ""}));
  Save(b, dir, "elementwise");
}

void ShapeOps(const std::string& dir) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {2, 3, 4});
  Value* r = b.Op("Reshape", {x, b.Initializer("shape", Ints({6, 4}))});
  Value* t = b.Op("Transpose", {r}, {Attribute::Ints("perm", {1, 0})});
  Value* sl =
      b.Op("Slice", {t, b.Initializer("starts", Ints({0, 1})), b.Initializer("ends", Ints({3, 5})),
                     b.Initializer("axes", Ints({0, 1}))});
  Value* cat = b.Op("Concat", {sl, sl}, {Attribute::Int("axis", 0)});
  Value* g =
      b.Op("Gather", {cat, b.Initializer("idx", Ints({0, 2, 1}))}, {Attribute::Int("axis", 1)});
  Value* u = b.Op("Unsqueeze", {g, b.Initializer("uaxes", Ints({0}))});
  Value* sh = b.Op("Shape", {u});
  b.Output(b.Op("Squeeze", {u, b.Initializer("saxes", Ints({0}))}));
  b.Output(sh);
  Save(b, dir, "shape_ops");
}

void TileExpand(const std::string& dir) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {1, 3});
  Value* t = b.Op("Tile", {x, b.Initializer("reps", Ints({2, 2}))});
  Value* e = b.Op("Expand", {x, b.Initializer("eshape", Ints({2, 3}))});
  Value* p = b.Op("Pad", {e, b.Initializer("pads", Ints({0, 0, 0, 3}))});  // [2, 6]
  b.Output(b.Op("Add", {p, t}));
  Save(b, dir, "tile_expand_pad");
}

void MatMulNorm(const std::string& dir) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {1, 4, 8});
  Value* m = b.Op("MatMul", {x, b.Initializer("w", Floats({8, 8}, -1.0f))});
  Value* n =
      b.Op("LayerNormalization",
           {m, b.Initializer("g", Floats({8}, 1.0f)), b.Initializer("bb", Floats({8}, 0.0f))},
           {Attribute::Int("axis", -1)});
  Value* k = b.Op("Transpose", {n}, {Attribute::Ints("perm", {0, 2, 1})});
  Value* att = b.Op("Softmax", {b.Op("MatMul", {n, k})}, {Attribute::Int("axis", -1)});
  b.Output(b.Op("ReduceSum", {b.Op("MatMul", {att, n}), b.Initializer("ax", Ints({1}))}));
  Save(b, dir, "matmul_norm");
}

void Quantized(const std::string& dir) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {1, 2, 4, 4});
  Value* scale = b.Initializer("s", Tensor::Scalar<float>(0.05f));
  Value* zp = b.Initializer("zp", Tensor::Scalar<uint8_t>(128));
  Value* q = b.Op("QuantizeLinear", {x, scale, zp});
  Value* dq = b.Op("DequantizeLinear", {q, scale, zp});
  std::vector<int8_t> wq(2 * 2 * 3 * 3);
  for (size_t i = 0; i < wq.size(); ++i) wq[i] = static_cast<int8_t>(static_cast<int>(i % 9) - 4);
  Value* w =
      b.Op("DequantizeLinear", {b.Initializer("wq", Tensor::FromVector<int8_t>({2, 2, 3, 3}, wq)),
                                b.Initializer("ws", Tensor::Scalar<float>(0.1f))});
  Value* c = b.Op("Conv", {dq, w}, {Attribute::Ints("pads", {1, 1, 1, 1})});
  Value* q2 = b.Op("QuantizeLinear", {c, scale, zp});
  b.Output(b.Op("DequantizeLinear", {q2, scale, zp}));
  Save(b, dir, "qdq_conv");
}

// Ops whose output sizes depend on values: NonMaxSuppression with the selected boxes
// gathered, Compress -> Unique, a Reshape whose shape is computed from the data, and
// CenterCropPad/Col2Im (sizes from constant inputs, opset 18).
void Detection(const std::string& dir) {
  GraphBuilder b(17);
  Value* boxes = b.Input("boxes", DataType::kFloat32, {1, 6, 4});
  Value* scores = b.Input("scores", DataType::kFloat32, {1, 2, 6});
  Value* selected =
      b.Op("NonMaxSuppression",
           {boxes, scores, b.Initializer("max_out", Ints({3})),
            b.Initializer("iou", Floats({1}, 0.5f)), b.Initializer("score_min", Floats({1}, 0.0f))},
           {Attribute::Int("center_point_box", 0)});
  Value* box_index = b.Op("Gather", {selected, b.Initializer("col", Tensor::Scalar<int64_t>(2))},
                          {Attribute::Int("axis", 1)});
  Value* flat = b.Op("Squeeze", {boxes, b.Initializer("sq", Ints({0}))});
  b.Output(b.Op("Gather", {flat, box_index}, {Attribute::Int("axis", 0)}));
  b.Output(selected);
  Save(b, dir, "detection_nms");
}

void CompressUnique(const std::string& dir) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {8});
  Value* m = b.Input("m", DataType::kFloat32, {4, 3});
  Value* kept = b.Op("Compress", {x, b.Op("Greater", {x, b.Initializer("t", Floats({1}, 0.0f))})});
  std::vector<Value*> u = b.MultiOp("Unique", {kept}, 4, {Attribute::Int("sorted", 1)});
  for (Value* v : u) b.Output(v);
  Value* rows = b.Op("Compress",
                     {m, b.Initializer("cond", Tensor::FromVector<bool>({3}, {true, false, true}))},
                     {Attribute::Int("axis", 0)});
  std::vector<Value*> ua =
      b.MultiOp("Unique", {rows}, 4, {Attribute::Int("axis", 1), Attribute::Int("sorted", 0)});
  b.Output(ua[0]);
  b.Output(b.Op("NonZero", {x}));
  Save(b, dir, "compress_unique");
}

void DataDependentReshape(const std::string& dir) {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {2, 6});
  // rows = ceil(max |x|) (0, 1 or 2 for the fuzzer's inputs): Reshape(x, [rows, -1]).
  Value* top = b.Op("ReduceMax", {b.Op("Abs", {x})}, {Attribute::Int("keepdims", 0)});
  Value* rows = b.Op("Cast", {b.Op("Ceil", {top})}, {Attribute::Int("to", 7)});
  Value* shape = b.Op("Concat",
                      {b.Op("Unsqueeze", {rows, b.Initializer("ax", Ints({0}))}),
                       b.Initializer("rest", Ints({-1}))},
                      {Attribute::Int("axis", 0)});
  b.Output(b.Op("Relu", {b.Op("Reshape", {x, shape})}));
  Save(b, dir, "data_dependent_reshape");
}

void CropCol2Im(const std::string& dir) {
  GraphBuilder b(18);
  Value* x = b.Input("x", DataType::kFloat32, {1, 2, 5, 5});
  b.Output(b.Op("CenterCropPad", {x, b.Initializer("crop", Ints({4, 6}))},
                {Attribute::Ints("axes", {2, 3})}));
  Value* cols = b.Input("cols", DataType::kFloat32, {1, 4, 9});
  b.Output(b.Op("Col2Im", {cols, b.Initializer("image", Ints({4, 4})),
                           b.Initializer("block", Ints({2, 2}))}));
  Save(b, dir, "crop_col2im");
}

void Npy(const std::string& dir) {
  auto write = [&](const std::string& name, const Tensor& t) {
    Status s = WriteNpy(dir + "/npy/" + name, t);
    if (!s.ok()) std::fprintf(stderr, "%s: %s\n", name.c_str(), s.ToString().c_str());
  };
  write("f32_2x3.npy", Floats({2, 3}, 1.0f));
  write("i64_scalar.npy", Tensor::Scalar<int64_t>(-7));
  write("u8_4.npy", Tensor::FromVector<uint8_t>({4}, {0, 1, 254, 255}));
  write("bool_2x2.npy", Tensor::FromVector<bool>({2, 2}, {true, false, false, true}));
  write("f32_empty_0x3.npy", Floats({0, 3}, 0.0f));
  NpzEntries entries;
  entries.emplace_back("x", Floats({1, 4}, 0.5f));
  entries.emplace_back("labels", Tensor::FromVector<int64_t>({3}, {1, 2, 3}));
  for (bool compress : {false, true}) {
    Status s = WriteNpz(dir + "/npy/" + (compress ? "compressed.npz" : "stored.npz"), entries,
                        {.compress = compress});
    if (!s.ok()) std::fprintf(stderr, "npz: %s\n", s.ToString().c_str());
  }
}

}  // namespace
}  // namespace qtune

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR (with model/ and npy/ folders)\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  qtune::Conv(dir);
  qtune::Elementwise(dir);
  qtune::ShapeOps(dir);
  qtune::TileExpand(dir);
  qtune::MatMulNorm(dir);
  qtune::Quantized(dir);
  qtune::Detection(dir);
  qtune::CompressUnique(dir);
  qtune::DataDependentReshape(dir);
  qtune::CropCol2Im(dir);
  qtune::WriteOpFamilyCorpus(dir);
  qtune::WriteLowBitCorpus(dir);
  qtune::Npy(dir);
  return 0;
}
