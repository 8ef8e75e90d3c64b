// Splitting row-wise native loops over OpenMP threads: rows are grouped into pieces of
// about kRowPieceElements values (smaller pieces cost more to schedule than they save),
// the pieces split statically over the threads. One thread, or one piece, runs inline.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace qtune::runtime {

inline constexpr int64_t kRowPieceElements = 16384;

// fn(first_row, end_row) over pieces covering [0, rows); threads <= 0 means
// omp_get_max_threads().
template <typename Fn>
void ForRowPieces(int64_t rows, int64_t row_length, int threads, const Fn& fn) {
  if (rows <= 0) return;
  const int64_t rows_per_piece =
      std::max<int64_t>(1, kRowPieceElements / std::max<int64_t>(1, row_length));
  const int64_t pieces = (rows + rows_per_piece - 1) / rows_per_piece;
  if (threads <= 0) threads = omp_get_max_threads();
  if (threads <= 1 || pieces <= 1) {
    fn(int64_t{0}, rows);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t p = 0; p < pieces; ++p) {
    fn(p * rows_per_piece, std::min(rows, (p + 1) * rows_per_piece));
  }
}

// fn(row) for every row in [0, rows), split as ForRowPieces.
template <typename Fn>
void ParallelRows(int64_t rows, int64_t row_length, int threads, const Fn& fn) {
  ForRowPieces(rows, row_length, threads, [&](int64_t first, int64_t end) {
    for (int64_t r = first; r < end; ++r) fn(r);
  });
}

}  // namespace qtune::runtime
