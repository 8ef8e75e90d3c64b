// Seed models for the op families the engine gained with data-dependent sizes: recurrent
// nets, signal processing, sampling and losses, the less common ops, sequences and
// optionals, and a Loop whose state grows (make_corpus.cc calls WriteOpFamilyCorpus).
#include <cstdio>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "corpus_builders.h"
#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "ir/subgraph.h"

namespace qtune {
namespace {

using ir::Attribute;
using ir::GraphBuilder;
using ir::Value;

using corpus::Floats;
using corpus::Ints;
using corpus::Save;

// LSTM (bidirectional, initial states) -> GRU -> RNN on a [5, 1, 3] sequence.
void Recurrent(const std::string& dir) {
  GraphBuilder b(14);
  Value* x = b.Input("x", DataType::kFloat32, {5, 1, 3});
  Value* h0 = b.Input("h0", DataType::kFloat32, {2, 1, 4});
  std::vector<Value*> lstm = b.MultiOp(
      "LSTM",
      {x, b.Initializer("lw", Floats({2, 16, 3}, -0.5f)),
       b.Initializer("lr", Floats({2, 16, 4}, -0.4f)), b.Initializer("lb", Floats({2, 32}, 0.0f)),
       nullptr, h0, h0},
      3, {Attribute::Int("hidden_size", 4), Attribute::String("direction", "bidirectional")});
  Value* seq = b.Op("Reshape", {lstm[0], b.Initializer("s", Ints({5, 1, 8}))});
  std::vector<Value*> gru =
      b.MultiOp("GRU",
                {seq, b.Initializer("gw", Floats({1, 12, 8}, -0.3f)),
                 b.Initializer("gr", Floats({1, 12, 4}, -0.2f))},
                2, {Attribute::Int("hidden_size", 4), Attribute::Int("linear_before_reset", 1)});
  Value* gseq = b.Op("Squeeze", {gru[0], b.Initializer("ax", Ints({1}))});
  std::vector<Value*> rnn = b.MultiOp("RNN",
                                      {gseq, b.Initializer("rw", Floats({1, 2, 4}, -0.2f)),
                                       b.Initializer("rr", Floats({1, 2, 2}, 0.1f))},
                                      2, {Attribute::Int("hidden_size", 2)});
  b.Output(rnn[1]);
  b.Output(lstm[2]);
  Save(b, dir, "recurrent");
}

// A window, STFT, the magnitude through a mel matrix, and a DFT of the frames.
void Signal(const std::string& dir) {
  GraphBuilder b(17);
  Value* signal = b.Input("signal", DataType::kFloat32, {1, 64, 1});
  Value* window = b.Op("HannWindow", {b.Initializer("wlen", Tensor::Scalar<int64_t>(16))});
  Value* frames = b.Op("STFT", {signal, b.Initializer("step", Tensor::Scalar<int64_t>(8)), window});
  Value* re = b.Op("ReduceSumSquare", {frames},
                   {Attribute::Ints("axes", {-1}), Attribute::Int("keepdims", 0)});
  Value* mel = b.Op("MelWeightMatrix", {b.Initializer("bins", Tensor::Scalar<int64_t>(4)),
                                        b.Initializer("dft", Tensor::Scalar<int64_t>(16)),
                                        b.Initializer("rate", Tensor::Scalar<int64_t>(8000)),
                                        b.Initializer("lo", Tensor::Scalar<float>(0.0f)),
                                        b.Initializer("hi", Tensor::Scalar<float>(4000.0f))});
  b.Output(b.Op("MatMul", {re, mel}));
  b.Output(b.Op("DFT", {signal}, {Attribute::Int("axis", 1)}));
  Save(b, dir, "signal");
}

// GridSample and RoiAlign on a feature map; a softmax cross-entropy and an NLL loss.
void SamplingLoss(const std::string& dir) {
  GraphBuilder b(16);
  Value* x = b.Input("x", DataType::kFloat32, {1, 2, 5, 5});
  Value* grid = b.Input("grid", DataType::kFloat32, {1, 3, 3, 2});
  b.Output(b.Op("GridSample", {x, grid}, {Attribute::Int("align_corners", 1)}));
  b.Output(b.Op("RoiAlign",
                {x, b.Initializer("rois", Floats({2, 4}, 0.5f)),
                 b.Initializer("batch", Tensor::FromVector<int64_t>({2}, {0, 0}))},
                {Attribute::Int("output_height", 2), Attribute::Int("output_width", 2)}));
  Value* logits = b.Input("logits", DataType::kFloat32, {3, 4});
  Value* labels = b.Input("labels", DataType::kInt64, {3});
  b.Output(b.Op("SoftmaxCrossEntropyLoss", {logits, labels}));
  b.Output(b.Op("NegativeLogLikelihoodLoss", {logits, labels},
                {Attribute::String("reduction", "sum"), Attribute::Int("ignore_index", 1)}));
  Save(b, dir, "sampling_loss");
}

// Einsum, Det, Shrink, MeanVarianceNormalization, ReverseSequence, EyeLike, BitShift and
// TfIdfVectorizer.
void LessCommon(const std::string& dir) {
  GraphBuilder b(17);
  Value* a = b.Input("a", DataType::kFloat32, {2, 3, 3});
  Value* m = b.Op("Einsum", {a, a}, {Attribute::String("equation", "bij,bjk->bik")});
  b.Output(b.Op("Det", {m}));
  b.Output(
      b.Op("MeanVarianceNormalization", {b.Op("Shrink", {a})}, {Attribute::Ints("axes", {1, 2})}));
  b.Output(b.Op("ReverseSequence", {a, b.Initializer("lens", Ints({3, 1}))},
                {Attribute::Int("batch_axis", 0), Attribute::Int("time_axis", 1)}));
  Value* ids = b.Input("ids", DataType::kInt64, {2, 6});
  b.Output(
      b.Op("TfIdfVectorizer", {ids},
           {Attribute::String("mode", "TF"), Attribute::Int("min_gram_length", 1),
            Attribute::Int("max_gram_length", 2), Attribute::Int("max_skip_count", 1),
            Attribute::Ints("ngram_counts", {0, 3}), Attribute::Ints("ngram_indexes", {0, 1, 2, 3}),
            Attribute::Ints("pool_int64s", {1, 2, 3, 1, 2})}));
  Value* bits = b.Input("bits", DataType::kUint8, {4});
  b.Output(b.Op("BitShift", {bits, b.Initializer("by", Tensor::FromVector<uint8_t>({1}, {2}))},
                {Attribute::String("direction", "LEFT")}));
  b.Output(b.Op("EyeLike", {b.Op("Squeeze", {b.Op("Slice", {a, b.Initializer("s0", Ints({0})),
                                                            b.Initializer("e0", Ints({1}))}),
                                             b.Initializer("ax0", Ints({0}))})}));
  Save(b, dir, "less_common_ops");
}

// SplitToSequence -> SequenceInsert -> SequenceAt / ConcatFromSequence, and optionals.
void Sequences(const std::string& dir) {
  GraphBuilder b(18);
  Value* x = b.Input("x", DataType::kFloat32, {6, 2});
  Value* seq = b.Op("SplitToSequence", {x, b.Initializer("parts", Ints({1, 2, 3}))});
  Value* more = b.Op("SequenceInsert", {seq, x});
  b.Output(b.Op("ConcatFromSequence", {more}, {Attribute::Int("axis", 0)}));
  b.Output(b.Op("SequenceAt", {more, b.Initializer("pos", Tensor::Scalar<int64_t>(-2))}));
  b.Output(b.Op("SequenceLength", {more}));
  Value* opt = b.Op("Optional", {x});
  b.Output(b.Op("OptionalHasElement", {opt}));
  b.Output(b.Op("OptionalGetElement", {opt}));
  Save(b, dir, "sequences");
}

// A Loop whose state grows by one row per iteration, its trip count an input.
void GrowingLoop(const std::string& dir) {
  GraphBuilder body(13);
  body.Input("i", DataType::kInt64, std::vector<int64_t>{});
  Value* cond = body.Input("cond", DataType::kBool, std::vector<int64_t>{});
  Value* acc = body.Input("acc", DataType::kFloat32, Shape({Dim::Unknown(), Dim::Known(2)}));
  body.Output(body.Op("Identity", {cond}));
  body.Output(body.Op("Concat", {acc, body.Initializer("row", Floats({1, 2}, 1.0f))},
                      {Attribute::Int("axis", 0)}));
  auto body_graph = body.Build();
  auto attr = ir::SubgraphAttribute("body", *body_graph, 0);
  if (!attr.ok()) {
    std::fprintf(stderr, "growing_loop: %s\n", attr.status().ToString().c_str());
    return;
  }
  GraphBuilder b(13);
  Value* m = b.Input("m", DataType::kInt64, std::vector<int64_t>{});
  Value* start = b.Input("start", DataType::kFloat32, {1, 2});
  b.Output(b.Op("Loop", {m, nullptr, start}, {*attr}));
  Save(b, dir, "growing_loop");
}

}  // namespace

void WriteOpFamilyCorpus(const std::string& dir) {
  Recurrent(dir);
  Signal(dir);
  SamplingLoss(dir);
  LessCommon(dir);
  Sequences(dir);
  GrowingLoop(dir);
}

}  // namespace qtune
