// Reference TfIdfVectorizer: the IDF and TFIDF modes with weights, int64 input, 1-grams
// counted once whatever the skip, and malformed pools refused naming the node (the ONNX
// node tests cover TF mode on int32 only).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/reference_test_util.h"

namespace qtune::runtime::testing {
namespace {

// Pool: 1-grams {2, 3}, 2-grams {(2,3), (3,2)}; output coordinates 3, 2, 1, 0.
std::vector<Attribute> PoolAttributes(const std::string& mode, int64_t min_n, int64_t skip) {
  return {Attribute::String("mode", mode),
          Attribute::Int("min_gram_length", min_n),
          Attribute::Int("max_gram_length", 2),
          Attribute::Int("max_skip_count", skip),
          Attribute::Ints("ngram_counts", {0, 2}),
          Attribute::Ints("ngram_indexes", {3, 2, 1, 0}),
          Attribute::Ints("pool_int64s", {2, 3, 2, 3, 3, 2}),
          Attribute::Floats("weights", {0.5f, 2.0f, 4.0f, 8.0f})};
}

TEST(ReferenceTfIdf, ModesWeightAndUnigramsCountOnceWhateverTheSkip) {
  Tensor x = Tensor::FromVector<int64_t>({5}, {2, 3, 2, 3, 7});
  Tensor tf = Run1({.op_type = "TfIdfVectorizer",
                    .inputs = {x},
                    .attributes = PoolAttributes("TF", 1, 3),
                    .opset = 9});
  // 1-grams: 2 x2, 3 x2 (once, not per skip). 2-grams with skips 0..3: (2,3) at
  // distance 1 twice and distance 3 once; (3,2) at distance 1 once.
  EXPECT_EQ(Values<float>(tf), (std::vector<float>{1, 3, 2, 2}));
  Tensor idf = Run1({.op_type = "TfIdfVectorizer",
                     .inputs = {x},
                     .attributes = PoolAttributes("IDF", 1, 0),
                     .opset = 9});
  EXPECT_EQ(Values<float>(idf), (std::vector<float>{8, 4, 2, 0.5f}));
  Tensor tfidf = Run1({.op_type = "TfIdfVectorizer",
                       .inputs = {x},
                       .attributes = PoolAttributes("TFIDF", 2, 0),
                       .opset = 9});
  EXPECT_EQ(Values<float>(tfidf), (std::vector<float>{8, 8, 0, 0}));
}

TEST(ReferenceTfIdf, APoolThatDoesNotSplitIntoNgramsNamesTheNode) {
  std::vector<Attribute> attributes = PoolAttributes("TF", 1, 0);
  attributes[6] = Attribute::Ints("pool_int64s", {2, 3, 2, 3, 3});  // 3 items for 2-grams
  auto result = RunOp({.op_type = "TfIdfVectorizer",
                       .inputs = {Tensor::FromVector<int32_t>({2}, {2, 3})},
                       .attributes = attributes,
                       .opset = 9,
                       .name = "tfidf_bad"});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("tfidf_bad"), std::string::npos)
      << result.status().ToString();
}

}  // namespace
}  // namespace qtune::runtime::testing
