"""qtune: ONNX quantization, latency-driven Q/DQ autotuning and a CPU inference engine
(docs/python.md). onnxruntime users: qtune.InferenceSession takes the same calls
(docs/coming-from-onnxruntime.md)."""
from ._qtune import *  # noqa: F401,F403  Session, load, load_tuned, inspect, errors, ...
from ._qtune import __version__  # noqa: F401
from ._api import autotune, eval, quantize, set_progress_callback, tune  # noqa: F401
from ._calibration import CalibrationDataReader  # noqa: F401
from ._results import (AutotuneResult, LayerResult, QuantizeResult, TuneResult,  # noqa: F401
                       TuneRow)
from ._session import (ExecutionMode, GraphOptimizationLevel, InferenceSession,  # noqa: F401
                       ModelMetadata, NodeArg, RunOptions, SessionOptions, get_all_providers,
                       get_available_providers, get_device)
