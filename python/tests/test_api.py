"""pytest tests of qtune.inspect, Session.bench, qtune.load, in-memory quantize calibration
data, the examples and the offline pip install (docs/python.md). Run by ctest (python.pytest)
with PYTHONPATH at the build's python/ folder; QTUNE_SOURCE_DIR, QTUNE_BINARY and
QTUNE_BUILD_DIR come from there."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import qtune

SOURCE_DIR = os.environ["QTUNE_SOURCE_DIR"]
QTUNE_BINARY = os.environ["QTUNE_BINARY"]
MODEL = os.path.join(SOURCE_DIR, "models/fmnist/fmnist_resnet.onnx")
CALIB = os.path.join(SOURCE_DIR, "models/fmnist/calib_512.npy")


def cli_json(*args):
    out = subprocess.run([QTUNE_BINARY, *args, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("ckpt") / "fmnist.qtc")
    subprocess.run([QTUNE_BINARY, "tune", MODEL, "--calib", CALIB, "-o", path, "--candidates",
                    "fp32,int8", "--calib-samples", "64", "--iters", "2", "--rounds", "1"],
                   check=True, capture_output=True)
    return path


def test_inspect_model_is_the_cli_json():
    assert qtune.inspect(MODEL) == cli_json("inspect", MODEL)


def test_inspect_checkpoint_is_the_cli_json(checkpoint):
    info = qtune.inspect(checkpoint)
    assert info == cli_json("inspect", checkpoint)
    assert info["tuning"]["candidate"] in ("fp32", "int8")


def test_inspect_missing_file_raises_not_found_naming_it():
    with pytest.raises(qtune.NotFound, match="nope.onnx"):
        qtune.inspect("nope.onnx")


def test_bench_returns_the_cli_keys_with_plausible_numbers():
    result = qtune.Session(MODEL).bench(iters=5, warmup=1, shapes={"input": [1, 1, 28, 28]})
    for key in ("median_ms", "p90_ms", "min_ms", "compile_ms", "steps", "threads", "iters"):
        assert key in result, key
    assert 0 < result["min_ms"] <= result["median_ms"] <= result["p90_ms"] < 1000
    assert result["iters"] == 5 and result["threads"] == 1 and result["steps"] > 0


def test_bench_needs_sizes_for_free_dimensions_and_sane_counts():
    session = qtune.Session(MODEL)
    with pytest.raises(qtune.InvalidArgument, match="input"):
        session.bench(iters=2)
    with pytest.raises(qtune.InvalidArgument, match="iters"):
        session.bench(iters=0, shapes={"input": [1, 1, 28, 28]})


def test_load_runs_the_checkpoint_like_the_cli(checkpoint, tmp_path):
    batch = np.load(CALIB)[:4].astype(np.float32)
    session = qtune.load(MODEL, checkpoint)
    logits = session.run({"input": batch})["logits"]
    inp, out = str(tmp_path / "in.npy"), str(tmp_path / "out.npz")
    np.save(inp, batch)
    subprocess.run([QTUNE_BINARY, "run", MODEL, "--checkpoint", checkpoint, "--input",
                    "input=" + inp, "-o", out], check=True, capture_output=True)
    with np.load(out) as cli:
        np.testing.assert_array_equal(logits, cli["logits"])
    assert session.bench(iters=2, warmup=0, shapes={"input": [1, 1, 28, 28]})["median_ms"] > 0


@pytest.fixture(scope="module")
def calib64():
    return np.load(CALIB)[:64]


def quantized_layers(calib, tmp_path):
    summary = qtune.quantize(MODEL, str(tmp_path / "q.onnx"), calib=calib)
    return summary["layers"]


def test_quantize_accepts_arrays_dicts_and_batches_like_a_file(calib64, tmp_path):
    path = str(tmp_path / "calib.npy")
    np.save(path, calib64)
    from_file = quantized_layers(path, tmp_path)
    assert any(layer["quantized"] for layer in from_file)
    assert quantized_layers(calib64, tmp_path) == from_file
    assert quantized_layers({"input": calib64}, tmp_path) == from_file
    batches = ({"input": calib64[i:i + 16]} for i in range(0, 64, 16))  # a generator
    assert quantized_layers(batches, tmp_path) == from_file
    assert quantized_layers([{"input": calib64[:40]}, {"input": calib64[40:]}], tmp_path) == from_file


@pytest.mark.parametrize("calib,match", [(42, "calib must be"), ([], "empty"), ({}, "empty"),
                                         ([{"input": np.zeros((2, 1, 28, 28), np.float32)}, "x.npy"], "mixes"),
                                         ({"nope": np.zeros((2, 1, 28, 28), np.float32)}, "nope")])
def test_quantize_bad_calibration_data_is_invalid_argument(calib, match, tmp_path):
    with pytest.raises(qtune.Error, match=match):
        qtune.quantize(MODEL, str(tmp_path / "q.onnx"), calib=calib)


@pytest.mark.parametrize("example", sorted(
    f for f in os.listdir(os.path.join(SOURCE_DIR, "examples/python")) if f.endswith(".py")))
def test_example_runs(example):
    env = dict(os.environ)
    result = subprocess.run([sys.executable, os.path.join("examples/python", example)],
                            cwd=SOURCE_DIR, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_offline_pip_install_into_a_target_dir_imports(tmp_path):
    """pip install --no-build-isolation . with Debian's setuptools, nothing downloaded
    (--no-index); QTUNE_BUILD_DIR reuses this build so the test does not rebuild."""
    target = str(tmp_path / "site")
    env = dict(os.environ, QTUNE_BUILD_DIR=os.environ["QTUNE_BUILD_DIR"], PIP_NO_INDEX="1")
    result = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation",
                             "--no-deps", "--no-index", "--no-cache-dir", "--target", target,
                             SOURCE_DIR], env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = target
    env.pop("QTUNE_BINARY", None)
    env["PATH"] = "/usr/bin:/bin"  # no qtune there: tune() must find the one pip installed
    script = ("import qtune, sys; print(qtune.__file__); "
              "print(qtune.Session(sys.argv[1]).inputs[0]['name']); "
              "r = qtune.tune(sys.argv[1], sys.argv[2], sys.argv[3], candidates=['fp32'], "
              "iters=2, rounds=1); print(r['candidate'])")
    check = subprocess.run([sys.executable, "-c", script, MODEL, CALIB, str(tmp_path / "pip.qtc")],
                           env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stderr
    assert check.stdout.splitlines() == [os.path.join(target, "qtune", "__init__.py"),
                                         "input", "fp32"]
    assert os.access(os.path.join(target, "qtune", "qtune_bin", "qtune-measure"), os.X_OK)


def test_tune_returns_the_cli_json_shape_and_a_loadable_checkpoint(tmp_path):
    output = str(tmp_path / "py.qtc")
    result = qtune.tune(MODEL, np.load(CALIB)[:64], output, candidates=["fp32", "int8"],
                        iters=2, rounds=1, qtune_binary=QTUNE_BINARY)
    cli = cli_json("tune", MODEL, "--calib", CALIB, "-o", str(tmp_path / "cli.qtc"),
                   "--candidates", "fp32,int8", "--calib-samples", "64", "--iters", "2",
                   "--rounds", "1")
    assert set(result.to_dict()) == set(cli)
    assert [row.candidate for row in result.table] == ["fp32", "int8"]
    assert result["checkpoint"] == output and os.path.exists(output + ".sha256")
    session = qtune.load(MODEL, output)
    assert session.run({"input": np.load(CALIB)[:2]})["logits"].shape == (2, 10)


def test_tune_resumes_from_its_work_dir(tmp_path):
    work = str(tmp_path / "work")
    calib = np.load(CALIB)[:64]  # an array: written to a new temporary file each call

    def tune(name):
        return qtune.tune(MODEL, calib, str(tmp_path / name), candidates=["fp32", "int8"],
                          iters=2, rounds=1, qtune_binary=QTUNE_BINARY, work_dir=work)

    first = tune("a.qtc")
    assert [row.raw["replayed"] for row in first.table] == [False, False]
    again = tune("b.qtc")  # the same candidate files: nothing measured again
    assert [row.raw["replayed"] for row in again.table] == [True, True]
    assert [row.latency_ms for row in again.table] == [row.latency_ms for row in first.table]


def test_autotune_takes_batches_and_returns_the_report_it_writes(tmp_path):
    work = str(tmp_path / "work")
    batches = ({"input": b} for b in np.split(np.load(CALIB)[:64], 4))  # streamed
    report = qtune.autotune(MODEL, str(tmp_path / "tuned.onnx"), batches, work, mode="quick",
                            calib_samples=64, qtune_binary=QTUNE_BINARY)
    assert report["format"] == "qtune-autotune-report"
    with open(os.path.join(work, "report.json")) as f:
        assert json.load(f) == report.to_dict()
    assert report.measured == report["counts"]["measured"] > 0
    assert qtune.Session(str(tmp_path / "tuned.onnx")).inputs[0]["name"] == "input"


def test_tune_needs_no_qtune_on_the_path(tmp_path, monkeypatch):
    """The module finds the library's own qtune-measure (here in the build tree)."""
    monkeypatch.delenv("QTUNE_BINARY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    result = qtune.tune(MODEL, CALIB, str(tmp_path / "x.qtc"), candidates=["fp32"], iters=2,
                        rounds=1)
    assert result["candidate"] == "fp32"
    assert os.path.exists(str(tmp_path / "x.qtc"))


def test_a_given_qtune_binary_that_is_not_an_executable_is_named(tmp_path):
    with pytest.raises(qtune.FailedPrecondition, match="qtune_binary '/nonexistent/qtune'"):
        qtune.tune(MODEL, CALIB, str(tmp_path / "x.qtc"), qtune_binary="/nonexistent/qtune")


def test_eval_is_the_cli_json_and_takes_arrays(tmp_path):
    quantized = str(tmp_path / "q.onnx")
    qtune.quantize(MODEL, quantized, calib=np.load(CALIB)[:64])
    data = os.path.join(SOURCE_DIR, "models/fmnist/test_2000.npy")
    labels = os.path.join(SOURCE_DIR, "models/fmnist/test_2000_labels.npy")
    short = str(tmp_path / "test_200.npy")
    np.save(short, np.load(data)[:200])
    short_labels = str(tmp_path / "labels_200.npy")
    np.save(short_labels, np.load(labels)[:200])
    result = qtune.eval(MODEL, quantized, short, labels=short_labels, threads=2)
    cli = cli_json("eval", MODEL, quantized, "--data", short, "--labels", short_labels,
                   "--threads", "2")
    assert result == cli
    assert result["top1_agreement"] > 0.95
    assert qtune.eval(MODEL, quantized, np.load(short), threads=2)["outputs"] == cli["outputs"]


def test_session_from_bytes_equals_session_from_path():
    with open(MODEL, "rb") as f:
        from_bytes = qtune.Session(f.read())
    from_path = qtune.Session(MODEL)
    x = np.load(CALIB)[:4]
    assert from_bytes.inputs == from_path.inputs
    np.testing.assert_array_equal(from_bytes.run({"input": x})["logits"],
                                  from_path.run({"input": x})["logits"])
    with pytest.raises(qtune.DataLoss, match="model bytes is not a valid ONNX model"):
        qtune.Session(b"not an onnx model")


def test_fp32_and_int8_outputs_match_onnx_runtime(tmp_path):
    """The second oracle: ONNX Runtime (tools/ort, Node.js) on the same inputs, for the float
    model and for qtune's own QDQ export. Under CI=true a missing node or ORT fails."""
    ort_run = os.path.join(SOURCE_DIR, "tools/ort/ort_run.js")
    node = shutil.which("node")
    if node is None or not os.path.isdir(os.path.join(SOURCE_DIR, "tools/ort/node_modules")):
        if os.environ.get("CI") == "true":
            pytest.fail("ONNX Runtime (node and tools/ort/node_modules) is missing under CI=true")
        pytest.skip("ONNX Runtime (node and tools/ort/node_modules) is not installed")
    quantized = str(tmp_path / "int8.onnx")
    qtune.quantize(MODEL, quantized, calib=np.load(CALIB)[:64])
    x = np.load(CALIB)[:8]
    feed = str(tmp_path / "x.npy")
    np.save(feed, x)
    for model, tolerance in ((MODEL, 1e-4), (quantized, 0.05)):
        out_dir = tmp_path / ("ort_" + os.path.basename(model))
        subprocess.run([node, ort_run, model, str(out_dir), "input=" + feed], check=True,
                       capture_output=True, timeout=120)
        expected = np.load(out_dir / "logits.npy")
        got = qtune.Session(model).run({"input": x})["logits"]
        scale = float(np.abs(expected).max())
        assert np.abs(got - expected).max() <= tolerance * scale, model
        assert (got.argmax(1) == expected.argmax(1)).all(), model
