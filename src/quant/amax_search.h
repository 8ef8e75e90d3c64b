// Choosing a clipping range (amax) from an |x| histogram (abs_histogram.h): the
// percentile, entropy (KL divergence) and MSE methods behind the calibrators
// (calibrator.h). Pure functions of the histogram; docs/calibration.md explains each.
//
// Every result lies in [0, histogram.max_abs()]; an empty or all-zero histogram gives 0.
#pragma once

#include "quant/abs_histogram.h"
#include "quant/quant_types.h"

namespace qtune::quant {

// The `percentile` (in (0, 100]) of |x|, exact zeros included, interpolated linearly
// inside the bin where the cumulative count crosses it. 100 gives max_abs().
double PercentileAmax(const AbsHistogram& histogram, double percentile);

// TensorRT's entropy calibration: for every candidate bin edge i in [start_bin, used
// bins], the reference distribution P is the histogram cut at i with the clipped tail
// added to its last bin, Q is P's range folded into `levels` equal groups (each group's
// mass spread evenly over its nonzero bins); the amax is the edge i whose KL(P || Q) is
// least (ties: the largest i). As TensorRT does, bin 0 takes the count of bin 1 so that a
// spike of zeros (ReLU outputs) does not drive the choice. Falls back to max_abs() when
// the histogram has no more than `start_bin` used bins.
double EntropyAmax(const AbsHistogram& histogram, int levels = 128, int start_bin = 128);

// The amax minimizing the expected squared quantization error over the histogram for the
// target grid: int8 symmetric (scale amax / 127, levels -127..127) or float8 e4m3fn (scale
// amax / 448, values rounded to the e4m3 grid, saturating). Each bin's error is averaged
// over evenly spaced points inside it; exact zeros cost nothing. About 512 candidates
// evenly spaced up to max_abs() are tried.
double MseAmax(const AbsHistogram& histogram, QuantFormat format);

// Round-trip of one non-negative value through the target grid with this amax (> 0):
// what MseAmax measures. Exposed for tests.
double QuantizeDequantize(double value, double amax, QuantFormat format);

}  // namespace qtune::quant
