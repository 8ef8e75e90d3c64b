"""quantize, tune, autotune and eval: the extension's functions with calibration data
streamed from memory (_calibration.py), typed results (_results.py) and an optional
per-call progress callback. Messages and progress go to Python's logging (docs/python.md,
"Logging and progress")."""
import contextlib
import threading

from . import _qtune
from ._calibration import calibration_specs
from ._results import AutotuneResult, QuantizeResult, TuneResult

# A per-call progress= replaces the process-wide callback for the call; calls with one
# do not overlap (the callback slot is process-wide).
_progress_lock = threading.Lock()
_global_callback = None


def set_progress_callback(callback):
    """qtune.set_progress_callback(fn(label, done, total) or None), as the extension's,
    remembered so that a call with progress= restores it afterwards."""
    global _global_callback
    _qtune.set_progress_callback(callback)
    _global_callback = callback


set_progress_callback.__doc__ = _qtune.set_progress_callback.__doc__


@contextlib.contextmanager
def _progress(callback):
    if callback is None:
        yield
        return
    with _progress_lock:
        _qtune.set_progress_callback(callback)
        try:
            yield
        finally:
            _qtune.set_progress_callback(_global_callback)


def quantize(model, output, calib, recipe="int8", threads=1, max_samples=0, progress=None):
    """Quantizes MODEL (.onnx) with RECIPE (a preset name or YAML file), calibrating on
    CALIB (a path, arrays, a dict, a reader with get_next() or an iterable of dict batches,
    streamed), and writes the QDQ model to OUTPUT. Returns a QuantizeResult.
    progress: fn(label, done, total) for this call (else the logger 'qtune.progress')."""
    with calibration_specs(calib, max_samples) as specs, _progress(progress):
        raw = _qtune.quantize(model, output, specs, recipe=recipe, threads=threads,
                              max_samples=max_samples)
    return QuantizeResult.from_json(raw)


def tune(model, calib, output, candidates=(), threads=(1,), strategy="min-latency",
         min_sqnr=20.0, calib_samples=0, iters=10, rounds=3, autotune_dir="",
         qtune_binary=None, progress=None, work_dir="", force_new=False):
    """`qtune tune MODEL --calib CALIB -o OUTPUT --json`; returns a TuneResult. calib takes
    what quantize() takes. work_dir: keep the candidates and the state log there, so a rerun
    takes the rows measured before from it (`--work-dir`, `--force-new`)."""
    with calibration_specs(calib, calib_samples) as specs, _progress(progress):
        raw = _qtune.tune(model, specs, output, candidates=list(candidates),
                          threads=list(threads), strategy=strategy, min_sqnr=min_sqnr,
                          calib_samples=calib_samples, iters=iters, rounds=rounds,
                          autotune_dir=autotune_dir, qtune_binary=qtune_binary,
                          work_dir=work_dir, force_new=force_new)
    return TuneResult.from_json(raw)


def autotune(model, output, calib, work_dir, mode="default", threads=1, min_sqnr=0.0,
             calib_samples=0, seed=0, qtune_binary=None, progress=None):
    """`qtune autotune MODEL -o OUTPUT --calib CALIB --work-dir WORK_DIR --json`; returns
    an AutotuneResult (the report). calib takes what quantize() takes."""
    with calibration_specs(calib, calib_samples) as specs, _progress(progress):
        raw = _qtune.autotune(model, output, specs, work_dir, mode=mode, threads=threads,
                              min_sqnr=min_sqnr, calib_samples=calib_samples, seed=seed,
                              qtune_binary=qtune_binary)
    return AutotuneResult.from_json(raw)


def eval(fp32, quantized, data, labels=None, batch=64, layer_samples=64, worst=10, threads=1,
         progress=None):
    """`qtune eval FP32 QUANTIZED --data DATA [--labels Y.npy] --json` as a dict; DATA takes
    what quantize()'s calib takes."""
    with calibration_specs(data) as specs, _progress(progress):
        return _qtune.eval(fp32, quantized, specs, labels=labels, batch=batch,
                           layer_samples=layer_samples, worst=worst, threads=threads)
