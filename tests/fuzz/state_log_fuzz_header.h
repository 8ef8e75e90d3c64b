// The state-log header the state_log fuzz target opens with and make_json_corpus.cc writes
// its seed logs with, so seed records replay.
#pragma once

#include "measure/state_log.h"

namespace qtune::fuzz {

inline measure::StateHeader FuzzStateHeader() {
  measure::StateHeader header;
  header.qtune_version = "0.1.0";
  header.model_sha256 = std::string(64, 'a');
  header.options = {{"mode", "quick"}, {"threads", 1}, {"seed", 0}};
  return header;
}

}  // namespace qtune::fuzz
