"""A script written for onnxruntime (the Python package), as its users write them. The test
(test_onnxruntime_compat.py) runs it with its import line changed to `import qtune as ort`
and nothing else, and compares what it saves with ONNX Runtime's outputs.

Usage: ort_script.py MODEL INPUT.npy OUT_DIR
"""
import os
import sys

import numpy as np
import onnxruntime as ort

model_path, input_path, out_dir = sys.argv[1:4]

options = ort.SessionOptions()
options.intra_op_num_threads = 2
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
session = ort.InferenceSession(model_path, sess_options=options,
                               providers=["CPUExecutionProvider"])
print("providers", session.get_providers())

for arg in session.get_inputs():
    print("input", arg.name, arg.shape, arg.type)
for arg in session.get_outputs():
    print("output", arg.name, arg.shape, arg.type)

x = np.load(input_path).astype(np.float32)
feed = {session.get_inputs()[0].name: x}
outputs = session.run(None, feed)
os.makedirs(out_dir, exist_ok=True)
for arg, value in zip(session.get_outputs(), outputs):
    np.save(os.path.join(out_dir, arg.name + ".npy"), value)

first_name = session.get_outputs()[0].name
(first,) = session.run([first_name], feed)
assert np.array_equal(first, outputs[0]), "run([name]) differs from run(None)[0]"
print("ok", len(outputs))
