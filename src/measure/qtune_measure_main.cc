// qtune-measure: the library's own measuring child (measure_executable.h). `qtune-measure
// measure-worker` serves measure_worker.h's protocol on stdin/stdout, as the hidden
// `qtune measure-worker` does; InProcessBenchmark and `qtune worker` start it. It is not meant
// to be run by hand.
#include <cstdio>
#include <cstring>

#include "measure/measure_executable.h"

namespace {

constexpr char kUsage[] =
    "Usage: qtune-measure measure-worker\n"
    "  Serves latency measurements for qtune's autotune and tune (one JSON request per line\n"
    "  on stdin, one JSON reply per line on stdout; docs/bench.md). Started by the qtune\n"
    "  library; not meant to be run by hand.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "measure-worker") == 0) {
    return qtune::measure::ServeMeasureWorkerOnStdio("qtune-measure");
  }
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fputs(kUsage, stderr);
  return 2;
}
