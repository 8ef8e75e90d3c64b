"""Quantize with calibration data from memory (any iterable of {input name: batch} dicts,
like a PyTorch DataLoader), then compare the int8 model with fp32: qtune.quantize.

    PYTHONPATH=build/python python3 examples/python/quantize_from_arrays.py [OUT.onnx]
"""
import os
import sys
import tempfile

import numpy as np

import qtune

model = "models/fmnist/fmnist_resnet.onnx"
output = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(), "fmnist_int8.onnx")
samples = np.load("models/fmnist/calib_512.npy")[:128]


def loader(batch_size=32):
    """What a DataLoader yields: one dict of arrays per batch."""
    for start in range(0, len(samples), batch_size):
        yield {"input": samples[start:start + batch_size]}


summary = qtune.quantize(model, output, calib=loader())
print("quantized layers", summary["quantized_layers"], "float layers", summary["float_layers"])

test = np.load("models/fmnist/test_2000.npy")[:200].astype(np.float32)
fp32 = qtune.Session(model).run({"input": test})["logits"]
int8 = qtune.Session(output).run({"input": test})["logits"]
agreement = float(np.mean(np.argmax(fp32, axis=1) == np.argmax(int8, axis=1)))
print("top-1 agreement %.3f" % agreement)
assert agreement > 0.95, agreement
