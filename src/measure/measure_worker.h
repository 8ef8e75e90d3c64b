// The measure worker: the child process (`qtune measure-worker`) in which
// InProcessBenchmark times candidates, so a hang or a crash of the engine on one candidate
// costs a restart, not the tuning run.
//
// Protocol (one JSON object per line each way; docs/bench.md):
//   request  {"candidate": PATH, "reference": PATH or "", "rounds": R, "iters": I,
//             "warmup": W, "threads": T, "shapes": {"input": [1, 3, 224, 224], ...},
//             "seed": S}
//            Only "candidate" is required; the defaults are rounds 3, iters 10, warmup 3,
//            threads 1, no shapes (the models' static sizes), seed 0.
//   reply    {"ok": true, "candidate_ms": [...], "reference_ms": [...],   one median per round
//             "candidate_iters": N, "reference_iters": M}                  timed runs per round
//            {"ok": false, "kind": "build" | "unparsable", "detail": MESSAGE}
// "build": the engine rejected a model (load, compile or run error; the engine's message).
// "unparsable": the request itself is malformed.
//
// Both models get the same seeded random inputs: floats uniform in [-1, 1], every other
// type zeros (always a valid index). After `warmup` untimed runs of each and one timed
// run (which sets its runs per round: `iters`, or more so that a round lasts at least
// 25 ms), every round times the candidate's runs, then the reference's, and records each
// one's median: interleaving makes machine drift hit both alike.
//
// The reference Session is kept between requests while its path, file size, mtime and
// thread count stay the same: the incumbent is re-measured against many candidates.
#pragma once

#include <cstdio>

namespace qtune::measure {

// Serves requests from `in` until EOF, flushing each reply to `out`; returns 0 at EOF.
// Never stops on a bad request or a bad model: those get an {"ok": false} reply.
int RunMeasureWorker(std::FILE* in, std::FILE* out);

}  // namespace qtune::measure
