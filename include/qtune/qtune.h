// qtune/qtune.h: all of qtune's public C++ API (docs/cmake.md, "The C++ API").
//
//   find_package(qtune REQUIRED)                  # or: pkg-config --cflags --libs qtune
//   target_link_libraries(app PRIVATE qtune::qtune)
//
//   #include <qtune/qtune.h>
//
// The surface, one header each:
//   qtune/session.h     Session: run a float or QDQ ONNX model on qtune's CPU engine
//   qtune/quantize.h    Quantize: post-training quantization to a QDQ model
//   qtune/autotune.h    Autotune: measure Q/DQ placements, write the fastest model
//   qtune/tune.h        Tune: pick the fastest accurate engine configuration, save a checkpoint
//   qtune/checkpoint.h  LoadTuned / ReadCheckpoint: deploy or read that checkpoint
//   qtune/status.h, qtune/tensor.h: the Status/StatusOr errors and the Tensor they all use
//
// Everything else qtune has (graph IR, passes, kernels, quantizers) is internal: not
// installed, free to change between versions.
#pragma once

#include "autotune.h"
#include "checkpoint.h"
#include "quantize.h"
#include "session.h"
#include "status.h"
#include "tensor.h"
#include "tune.h"
