"""Calibration data the way onnxruntime users have it (docs/python.md, "Calibration data"):
an onnxruntime-style reader (get_next() -> dict or None), any iterable of dict batches or
a dict of arrays, streamed batch by batch (never all in memory), with the same result as
the same samples in one file; typed results and a per-call progress callback. Run by
ctest (python.calibration)."""
import dataclasses
import logging
import os
import tracemalloc
import weakref

import numpy as np
import pytest

import qtune
from qtune import _calibration

SOURCE_DIR = os.environ["QTUNE_SOURCE_DIR"]
MODEL = os.path.join(SOURCE_DIR, "models/fmnist/fmnist_resnet.onnx")
CALIB = os.path.join(SOURCE_DIR, "models/fmnist/calib_512.npy")


@pytest.fixture(scope="module")
def calib64():
    return np.load(CALIB)[:64]


@pytest.fixture(scope="module")
def from_file(calib64, tmp_path_factory):
    folder = tmp_path_factory.mktemp("file")
    path = str(folder / "calib.npy")
    np.save(path, calib64)
    return qtune.quantize(MODEL, str(folder / "q.onnx"), calib=path)


class Reader(qtune.CalibrationDataReader):
    """As onnxruntime.quantization users write them: batches of 16 from get_next()."""

    def __init__(self, samples, batch=16):
        self.batches = iter([{"input": samples[i:i + batch]} for i in range(0, len(samples), batch)])

    def get_next(self):
        return next(self.batches, None)


class DuckReader:
    """A reader that is not a qtune.CalibrationDataReader: get_next() is enough."""

    def __init__(self, samples):
        self.left = [samples[i:i + 24] for i in range(0, len(samples), 24)]

    def get_next(self):
        return {"input": self.left.pop(0)} if self.left else None


@pytest.mark.parametrize("make", [
    lambda s: Reader(s), lambda s: DuckReader(s),
    lambda s: ({"input": s[i:i + 10]} for i in range(0, len(s), 10)),
    lambda s: {"input": s}])
def test_readers_iterables_and_dicts_calibrate_like_the_same_samples_in_a_file(
        make, calib64, from_file, tmp_path):
    result = qtune.quantize(MODEL, str(tmp_path / "q.onnx"), calib=make(calib64))
    assert any(layer.quantized for layer in result.layers)
    assert [layer.to_dict() for layer in result.layers] == from_file.to_dict()["layers"]
    assert "64 samples" in result.calibration_source


def test_batches_are_streamed_one_at_a_time_with_memory_bounded(tmp_path):
    """40 batches of 1 MB: concatenating them would take 40 MB; streaming keeps at most two
    batches alive and the traced peak under four batches."""
    alive = [0, 0]  # now, most

    def released():
        alive[0] -= 1

    def batches():
        rng = np.random.default_rng(0)
        for _ in range(40):
            array = rng.random((256, 1024), dtype=np.float32)  # 1 MiB
            alive[0] += 1
            alive[1] = max(alive[1], alive[0])
            weakref.finalize(array, released)
            yield {"input": array}

    tracemalloc.start()
    try:
        with _calibration.calibration_specs(batches()) as specs:
            _, peak = tracemalloc.get_traced_memory()
            (spec,) = specs
            assert spec.startswith("input=")
            streamed = np.load(spec.split("=", 1)[1], mmap_mode="r")
            assert streamed.shape == (40 * 256, 1024) and streamed.dtype == np.float32
            expected_rng = np.random.default_rng(0)
            for i in range(40):
                np.testing.assert_array_equal(streamed[i * 256:(i + 1) * 256],
                                              expected_rng.random((256, 1024), dtype=np.float32))
            del streamed
    finally:
        tracemalloc.stop()
    assert alive[1] <= 2, alive
    assert peak < 4 * (1 << 20), peak
    assert not os.path.exists(os.path.dirname(spec.split("=", 1)[1]))  # removed after


def test_max_samples_stops_reading_an_endless_reader(tmp_path, calib64):
    pulled = []

    def endless():
        while True:
            pulled.append(1)
            yield {"input": calib64[:16]}

    result = qtune.quantize(MODEL, str(tmp_path / "q.onnx"), calib=endless(), max_samples=32)
    assert len(pulled) == 2
    assert "32 samples" in result.calibration_source


@pytest.mark.parametrize("batches,match", [
    ([{"input": np.zeros((2, 1, 28, 28), np.float32)},
      {"input": np.zeros((2, 1, 28, 27), np.float32)}], "batch 1 .*28, 27"),
    ([{"input": np.zeros((2, 1, 28, 28), np.float32)},
      {"input": np.zeros((2, 1, 28, 28), np.float64)}], "batch 1 .*float64"),
    ([{"input": np.zeros((2, 1, 28, 28), np.float32)}, {"other": np.zeros((2, 1), np.float32)}],
     "batch 1 has inputs"),
    ([{"input": np.float32(1)}], "scalar"),
    ([7], "batch 0 is a int"),
])
def test_inconsistent_batches_are_invalid_argument_naming_the_batch(batches, match, tmp_path):
    with pytest.raises(qtune.InvalidArgument, match=match):
        qtune.quantize(MODEL, str(tmp_path / "q.onnx"), calib=iter(batches))


def test_results_are_typed_with_to_dict_and_dict_access(from_file):
    assert isinstance(from_file, qtune.QuantizeResult)
    assert dataclasses.is_dataclass(from_file)
    raw = from_file.to_dict()
    assert raw["output"] == from_file.output == from_file["output"]
    assert from_file.quantized_layers == raw["quantized_layers"] > 0
    assert [layer.node for layer in from_file.layers] == [row["node"] for row in raw["layers"]]
    raw["layers"].clear()  # a copy
    assert from_file.layers and from_file.to_dict()["layers"]


def test_a_per_call_progress_callback_gets_the_calls_progress_then_logging_again(
        calib64, tmp_path, caplog):
    calls = []
    qtune.quantize(MODEL, str(tmp_path / "q.onnx"), calib=calib64,
                   progress=lambda label, done, total: calls.append((label, done, total)))
    assert calls and calls[0][1] == 0 and calls[-1][1] == calls[-1][2] > 0
    with caplog.at_level(logging.INFO, logger="qtune.progress"):
        qtune.quantize(MODEL, str(tmp_path / "q2.onnx"), calib=calib64)
    assert any(r.name == "qtune.progress" for r in caplog.records)
    count = len(calls)
    qtune.quantize(MODEL, str(tmp_path / "q3.onnx"), calib=calib64)
    assert len(calls) == count  # the per-call callback is gone


def test_tune_takes_a_reader_and_returns_a_typed_result(calib64, tmp_path):
    output = str(tmp_path / "t.qtc")
    result = qtune.tune(MODEL, Reader(calib64), output, candidates=["fp32", "int8"], iters=2,
                        rounds=1, qtune_binary=os.environ["QTUNE_BINARY"])
    assert isinstance(result, qtune.TuneResult)
    assert result.checkpoint == output and result.candidate in ("fp32", "int8")
    assert [row.candidate for row in result.table] == ["fp32", "int8"]
    assert result.to_dict()["table"][0]["candidate"] == "fp32"


def test_the_extension_takes_only_paths_so_nothing_is_gathered_in_memory(calib64, tmp_path):
    with pytest.raises(qtune.InvalidArgument, match="call qtune.quantize"):
        qtune._qtune.quantize(MODEL, str(tmp_path / "q.onnx"), [{"input": calib64}])
