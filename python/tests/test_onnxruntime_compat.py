"""qtune.InferenceSession against onnxruntime's API (docs/coming-from-onnxruntime.md): the
onnxruntime script ort_script.py run with `import qtune as ort` gives ONNX Runtime's
outputs (tools/ort, Node.js) to 1e-5 on the models in models/; providers, NodeArg,
run() output selection and errors, SessionOptions, get_modelmeta, sequence and optional
values. Run by ctest (python.onnxruntime_compat)."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import qtune

SOURCE_DIR = os.environ["QTUNE_SOURCE_DIR"]
MODEL = os.path.join(SOURCE_DIR, "models/fmnist/fmnist_resnet.onnx")
CALIB = os.path.join(SOURCE_DIR, "models/fmnist/calib_512.npy")
NODE_TESTS = "/usr/share/libonnx-testdata/data/node"


def ort_peer():
    node = shutil.which("node")
    if node is None or not os.path.isdir(os.path.join(SOURCE_DIR, "tools/ort/node_modules")):
        if os.environ.get("CI") == "true":
            pytest.fail("ONNX Runtime (node and tools/ort/node_modules) is missing under CI=true")
        pytest.skip("ONNX Runtime (node and tools/ort/node_modules) is not installed")
    return node


# (model, an input batch of the model's one input)
CASES = {
    "fmnist": (MODEL, lambda: np.load(CALIB)[:8]),
    "ppocr_cls": (os.path.join(SOURCE_DIR, "models/ppocr/ppocr_cls.onnx"),
                  lambda: np.random.default_rng(0).random((2, 3, 48, 192), dtype=np.float32)),
    "ppocrv4_det": (os.path.join(SOURCE_DIR, "models/ppocr/ppocrv4_det.onnx"),
                    lambda: np.random.default_rng(1).random((1, 3, 64, 96), dtype=np.float32)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_onnxruntime_script_runs_unchanged_and_matches_onnx_runtime(case, tmp_path):
    node = ort_peer()
    model, make_input = CASES[case]
    x = make_input()
    feed = str(tmp_path / "x.npy")
    np.save(feed, x)
    with open(os.path.join(os.path.dirname(__file__), "ort_script.py")) as f:
        script = f.read()
    assert script.count("import onnxruntime as ort\n") == 1
    (tmp_path / "script.py").write_text(
        script.replace("import onnxruntime as ort\n", "import qtune as ort\n"))
    run = subprocess.run([sys.executable, str(tmp_path / "script.py"), model, feed,
                          str(tmp_path / "qtune")], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1].startswith("ok ")
    assert "providers ['CPUExecutionProvider']" in run.stdout
    input_name = qtune.InferenceSession(model).get_inputs()[0].name
    subprocess.run([node, os.path.join(SOURCE_DIR, "tools/ort/ort_run.js"), model,
                    str(tmp_path / "ort"), input_name + "=" + feed], check=True,
                   capture_output=True, timeout=300)
    names = [arg.name for arg in qtune.InferenceSession(model).get_outputs()]
    for name in names:
        expected = np.load(tmp_path / "ort" / (name + ".npy"))
        got = np.load(tmp_path / "qtune" / (name + ".npy"))
        assert got.shape == expected.shape and got.dtype == expected.dtype, name
        scale = max(1.0, float(np.abs(expected).max()))
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5 * scale, err_msg=name)


def test_inputs_and_outputs_are_node_args_as_onnxruntime_gives_them():
    session = qtune.InferenceSession(MODEL)
    (inp,) = session.get_inputs()
    (out,) = session.get_outputs()
    assert (inp.name, inp.shape, inp.type) == ("input", ["N", 1, 28, 28], "tensor(float)")
    assert (out.name, out.shape, out.type) == ("logits", ["N", 10], "tensor(float)")
    assert isinstance(inp, qtune.NodeArg)


def test_run_returns_a_list_in_the_requested_order_equal_to_session_run():
    session = qtune.InferenceSession(MODEL)
    x = np.load(CALIB)[:4]
    everything = session.run(None, {"input": x})
    assert isinstance(everything, list) and len(everything) == 1
    np.testing.assert_array_equal(everything[0], qtune.Session(MODEL).run({"input": x})["logits"])
    np.testing.assert_array_equal(session.run(["logits"], {"input": x})[0], everything[0])
    assert len(session.run(["logits", "logits"], {"input": x})) == 2
    assert len(session.run([], {"input": x}, qtune.RunOptions())) == 1


def test_unknown_output_and_input_names_are_errors_naming_them():
    session = qtune.InferenceSession(MODEL)
    x = np.load(CALIB)[:1]
    with pytest.raises(qtune.InvalidArgument, match="'probs'.*'logits'"):
        session.run(["probs"], {"input": x})
    with pytest.raises(qtune.InvalidArgument, match="image"):
        session.run(None, {"image": x})


@pytest.mark.parametrize("providers", [None, ["CPUExecutionProvider"],
                                       [("CPUExecutionProvider", {})], "CPUExecutionProvider"])
def test_the_cpu_provider_is_accepted(providers):
    session = qtune.InferenceSession(MODEL, providers=providers)
    assert session.get_providers() == ["CPUExecutionProvider"]
    assert qtune.get_available_providers() == ["CPUExecutionProvider"]


@pytest.mark.parametrize("provider", ["CUDAExecutionProvider", "TensorrtExecutionProvider"])
def test_other_providers_are_refused_naming_them(provider):
    with pytest.raises(qtune.InvalidArgument, match="CPU only.*" + provider):
        qtune.InferenceSession(MODEL, providers=[provider, "CPUExecutionProvider"])


def test_session_options_threads_and_optimization_level():
    options = qtune.SessionOptions()
    assert options.intra_op_num_threads == 0
    options.intra_op_num_threads = 2
    session = qtune.InferenceSession(MODEL, sess_options=options)
    assert session.session.threads == 2
    assert session.get_session_options() is options
    assert qtune.InferenceSession(MODEL).session.threads == 1  # 0: qtune's default
    x = np.load(CALIB)[:4]
    options.graph_optimization_level = qtune.GraphOptimizationLevel.ORT_DISABLE_ALL
    unoptimized = qtune.InferenceSession(MODEL, options).run(None, {"input": x})[0]
    np.testing.assert_allclose(unoptimized, session.run(None, {"input": x})[0], atol=1e-4)
    options.inter_op_num_threads = 4  # accepted, no effect
    options.execution_mode = qtune.ExecutionMode.ORT_SEQUENTIAL
    with pytest.raises(AttributeError):
        options.intra_op_threads = 2  # a typo is not silently accepted
    options.intra_op_num_threads = -1
    with pytest.raises(qtune.InvalidArgument, match="intra_op_num_threads"):
        qtune.InferenceSession(MODEL, options)


def test_model_from_bytes_and_its_metadata():
    with open(MODEL, "rb") as f:
        session = qtune.InferenceSession(f.read())
    meta = session.get_modelmeta()
    assert meta.producer_name == "pytorch"
    assert isinstance(meta.custom_metadata_map, dict)
    assert isinstance(meta.version, int) and isinstance(meta.graph_name, str)


def node_model(name):
    path = os.path.join(NODE_TESTS, name, "model.onnx")
    if not os.path.exists(path):
        pytest.skip("libonnx-testdata is not installed")
    return path


def test_a_sequence_output_is_a_list_of_arrays():
    session = qtune.InferenceSession(node_model("test_sequence_insert_at_back"))
    kinds = [arg.type for arg in session.get_inputs()]
    assert kinds[0].startswith("seq(tensor(") and kinds[1].startswith("tensor(")
    assert session.get_outputs()[0].type.startswith("seq(")
    dtype = np.int64 if "int64" in kinds[0] else np.float32
    elements = [np.array([1, 2], dtype), np.array([3], dtype)]
    feed = {session.get_inputs()[0].name: elements,
            session.get_inputs()[1].name: np.array([7, 8, 9], dtype)}
    (result,) = session.run(None, feed)
    assert isinstance(result, list) and len(result) == 3
    np.testing.assert_array_equal(result[2], [7, 8, 9])


def test_an_empty_optional_input_is_none():
    session = qtune.InferenceSession(node_model("test_optional_has_element_empty"))
    (inp,) = session.get_inputs()
    assert inp.type.startswith("optional(")
    (has,) = session.run(None, {inp.name: None})
    assert not bool(has)
