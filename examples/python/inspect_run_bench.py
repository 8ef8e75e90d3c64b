"""Inspect a model, run it on a batch, and time it: qtune.inspect, qtune.Session.

    PYTHONPATH=build/python python3 examples/python/inspect_run_bench.py [MODEL] [DATA.npy]
"""
import sys

import numpy as np

import qtune

model = sys.argv[1] if len(sys.argv) > 1 else "models/fmnist/fmnist_resnet.onnx"
data = sys.argv[2] if len(sys.argv) > 2 else "models/fmnist/test_2000.npy"

info = qtune.inspect(model)
print("inputs ", [(i["name"], i["shape"]) for i in info["inputs"]])
print("nodes  ", info["num_nodes"], "parameters", info["num_parameters"])

session = qtune.Session(model, threads=1)
name = session.inputs[0]["name"]
batch = np.load(data)[:8].astype(np.float32)
logits = session.run({name: batch})[session.outputs[0]["name"]]
print("classes", np.argmax(logits, axis=1).tolist())

timing = session.bench(iters=20, warmup=3, shapes={name: [1] + list(batch.shape[1:])})
print("latency median %.3f ms, p90 %.3f ms" % (timing["median_ms"], timing["p90_ms"]))
