"""pytest tests of qtune's log messages and progress inside Python (docs/python.md, "Logging
and progress"): they reach the `logging` logger "qtune" or the progress callback, never
stderr. Run by ctest (python.logging) with PYTHONPATH at the build's python/ folder and
QTUNE_SOURCE_DIR set."""
import logging
import os

import numpy as np
import pytest

import qtune

SOURCE_DIR = os.environ["QTUNE_SOURCE_DIR"]
MODEL = os.path.join(SOURCE_DIR, "models/fmnist/fmnist_resnet.onnx")
CALIB = os.path.join(SOURCE_DIR, "models/fmnist/calib_512.npy")


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)

    def of(self, name):
        return [(r.levelname, r.getMessage()) for r in self.records if r.name == name]


@pytest.fixture
def records():
    """A handler on logger "qtune" (and so on "qtune.progress"), everything let through;
    qtune's own level, the callback and the logger restored afterwards."""
    handler = Records()
    logger = logging.getLogger("qtune")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(logging.NOTSET)
    qtune.set_progress_callback(None)
    qtune.set_log_level("info")


def calib_with_a_nan():
    # 64 samples, one NaN pixel: calibration warns about the values it poisons.
    data = np.load(CALIB)[:64].copy()
    data[3, 0, 5, 5] = np.nan
    return data


def test_quantize_messages_reach_the_qtune_logger_with_their_levels(records, tmp_path, capfd):
    qtune.quantize(MODEL, str(tmp_path / "q.onnx"), calib=calib_with_a_nan())
    messages = records.of("qtune")
    assert any(level == "INFO" and msg.startswith("calibrating 9 tensors on 64 samples")
               for level, msg in messages), messages
    assert ("WARNING", "calibration: value 'input' held 1 NaN or infinite values (ignored)") \
        in messages, messages
    out, err = capfd.readouterr()
    assert err == "" and out == ""


def test_set_log_level_filters_before_python(records, tmp_path):
    qtune.set_log_level("warning")
    qtune.quantize(MODEL, str(tmp_path / "q.onnx"), calib=calib_with_a_nan())
    levels = {level for level, _ in records.of("qtune")}
    assert levels == {"WARNING"}, records.of("qtune")
    with pytest.raises(qtune.InvalidArgument, match="unknown log level 'loud'"):
        qtune.set_log_level("loud")


def test_progress_callback_sees_increasing_counts_to_the_total(records, tmp_path, capfd):
    seen = []
    qtune.set_progress_callback(lambda label, done, total: seen.append((label, done, total)))
    qtune.quantize(MODEL, str(tmp_path / "q.onnx"), calib=CALIB)
    calibrating = [(done, total) for label, done, total in seen if label == "calibrating"]
    assert len(calibrating) > 2, seen
    counts = [done for done, _ in calibrating]
    assert counts[0] == 0 and counts[-1] == 512 and counts == sorted(counts), counts
    assert {total for _, total in calibrating} == {512}
    assert records.of("qtune.progress") == []  # the callback replaces the progress lines
    out, err = capfd.readouterr()
    assert err == "" and out == ""


def test_without_a_callback_progress_is_info_lines_on_qtune_progress(records, tmp_path):
    qtune.quantize(MODEL, str(tmp_path / "q.onnx"), calib=CALIB)
    lines = records.of("qtune.progress")
    assert {level for level, _ in lines} == {"INFO"}
    texts = [msg for _, msg in lines]
    assert texts[0].startswith("calibrating: 0% (0/512)"), texts
    assert texts[-1].startswith("calibrating: 100% (512/512)"), texts
    assert 3 <= len(texts) <= 12, texts  # the start, one per 10% step, the end


def test_a_raising_callback_is_reported_once_and_dropped(records, tmp_path, capfd):
    calls = []

    def broken(label, done, total):
        calls.append(done)
        raise RuntimeError("callback broke")

    qtune.set_progress_callback(broken)
    summary = qtune.quantize(MODEL, str(tmp_path / "q.onnx"), calib=CALIB)
    assert summary["output"] == str(tmp_path / "q.onnx")
    assert len(calls) > 2  # still called after raising
    reports = [msg for level, msg in records.of("qtune") if "callback broke" in msg]
    assert len(reports) == 1 and reports[0].startswith("the progress callback"), reports
    assert capfd.readouterr().err == ""


def test_set_progress_callback_needs_a_callable():
    with pytest.raises(qtune.InvalidArgument, match="expects a callable"):
        qtune.set_progress_callback(42)
