"""Tests of the qtune Python module (docs/python.md), run by ctest with PYTHONPATH set
to the build's python/ folder. Environment: QTUNE_SOURCE_DIR (the repository root) and
QTUNE_BINARY (the `qtune` CLI these results are checked against)."""
import os
import resource
import subprocess
import tempfile
import threading
import unittest

import numpy as np

import qtune

SOURCE_DIR = os.environ["QTUNE_SOURCE_DIR"]
QTUNE_BINARY = os.environ["QTUNE_BINARY"]
MODEL = os.path.join(SOURCE_DIR, "models/fmnist/fmnist_resnet.onnx")
TEST_DATA = os.path.join(SOURCE_DIR, "models/fmnist/test_2000.npy")
CALIB_DATA = os.path.join(SOURCE_DIR, "models/fmnist/calib_512.npy")


def fmnist_batch(n):
    return np.load(TEST_DATA)[:n].astype(np.float32)


def cli_run(model, batch):
    """The `qtune run` outputs of `model` on `batch` ({name: array})."""
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = os.path.join(tmp, "in.npy"), os.path.join(tmp, "out.npz")
        np.save(inp, batch)
        subprocess.run([QTUNE_BINARY, "run", model, "--input", "input=" + inp, "--output", out],
                       check=True, stdout=subprocess.DEVNULL)
        with np.load(out) as archive:
            return {name: archive[name] for name in archive.files}


class SessionTest(unittest.TestCase):
    def test_describes_inputs_and_outputs(self):
        session = qtune.Session(MODEL)
        self.assertEqual(session.inputs, [{"name": "input", "dtype": "float32", "shape": ("N", 1, 28, 28)}])
        self.assertEqual(session.outputs, [{"name": "logits", "dtype": "float32", "shape": ("N", 10)}])

    def test_run_matches_cli(self):
        batch = fmnist_batch(16)
        outputs = qtune.Session(MODEL).run({"input": batch})
        self.assertEqual(list(outputs), ["logits"])
        self.assertEqual(outputs["logits"].shape, (16, 10))
        self.assertEqual(outputs["logits"].dtype, np.float32)
        # The same engine and plan as the CLI: bit-identical.
        np.testing.assert_array_equal(outputs["logits"], cli_run(MODEL, batch)["logits"])

    def test_accuracy_on_test_set(self):
        labels = np.load(os.path.join(SOURCE_DIR, "models/fmnist/test_2000_labels.npy"))[:500]
        logits = qtune.Session(MODEL, threads=2).run({"input": fmnist_batch(500)})["logits"]
        self.assertGreater(float(np.mean(np.argmax(logits, axis=1) == labels)), 0.85)

    def test_non_contiguous_input_equals_contiguous(self):
        batch = fmnist_batch(8)
        strided = np.asfortranarray(batch)
        self.assertFalse(strided.flags["C_CONTIGUOUS"])
        session = qtune.Session(MODEL)
        np.testing.assert_array_equal(session.run({"input": strided})["logits"],
                                      session.run({"input": batch})["logits"])

    def test_two_sessions_in_two_threads(self):
        batches = [fmnist_batch(64), fmnist_batch(64)[::-1].copy()]
        expected = [qtune.Session(MODEL).run({"input": b})["logits"] for b in batches]
        sessions = [qtune.Session(MODEL), qtune.Session(MODEL)]
        results, errors = [None, None], []

        def work(i):
            try:
                for _ in range(20):
                    results[i] = sessions[i].run({"input": batches[i]})["logits"]
            except Exception as e:  # reported below, on the main thread
                errors.append(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        for got, want in zip(results, expected):
            np.testing.assert_array_equal(got, want)

    def test_repeated_runs_do_not_grow_memory(self):
        session = qtune.Session(MODEL)
        batch = fmnist_batch(4)
        for _ in range(50):
            session.run({"input": batch})
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for _ in range(1000):
            session.run({"input": batch})
        grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        self.assertLess(grown_kib, 8 * 1024, "1000 runs grew the peak RSS by %d KiB" % grown_kib)


class ErrorTest(unittest.TestCase):
    def test_missing_model_raises_with_path(self):
        with self.assertRaises(qtune.Error) as caught:
            qtune.Session("/nonexistent/model.onnx")
        self.assertIn("/nonexistent/model.onnx", str(caught.exception))
        self.assertIsInstance(caught.exception, RuntimeError)

    def test_wrong_input_name_is_invalid_argument(self):
        with self.assertRaises(qtune.InvalidArgument) as caught:
            qtune.Session(MODEL).run({"image": fmnist_batch(1)})
        self.assertIn("image", str(caught.exception))

    def test_wrong_rank_names_the_input(self):
        with self.assertRaises(qtune.Error) as caught:
            qtune.Session(MODEL).run({"input": np.zeros((28, 28), np.float32)})
        self.assertIn("input", str(caught.exception))

    def test_unsupported_dtype(self):
        with self.assertRaises(qtune.InvalidArgument) as caught:
            qtune.Session(MODEL).run({"input": np.zeros((1, 1, 28, 28), np.complex64)})
        self.assertIn("complex", str(caught.exception))

    def test_bad_threads(self):
        with self.assertRaises(qtune.InvalidArgument):
            qtune.Session(MODEL, threads=0)


class QuantizeTest(unittest.TestCase):
    def test_quantize_then_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            output = os.path.join(tmp, "fmnist_int8.onnx")
            summary = qtune.quantize(MODEL, output, calib=CALIB_DATA, max_samples=128)
            self.assertEqual(summary["output"], output)
            self.assertTrue(os.path.exists(output))
            batch = fmnist_batch(200)
            quantized = qtune.Session(output).run({"input": batch})["logits"]
            np.testing.assert_array_equal(quantized, cli_run(output, batch)["logits"])
            reference = qtune.Session(MODEL).run({"input": batch})["logits"]
            agree = np.mean(np.argmax(quantized, 1) == np.argmax(reference, 1))
            self.assertGreater(agree, 0.9)

    def test_missing_calibration_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(qtune.Error) as caught:
                qtune.quantize(MODEL, os.path.join(tmp, "q.onnx"), calib=os.path.join(tmp, "none.npy"))
            self.assertIn("none.npy", str(caught.exception))

    def test_unknown_recipe(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(qtune.Error) as caught:
                qtune.quantize(MODEL, os.path.join(tmp, "q.onnx"), calib=CALIB_DATA, recipe="int3")
            self.assertIn("int3", str(caught.exception))


class LoadTunedTest(unittest.TestCase):
    def test_matches_cli_checkpoint_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            checkpoint = os.path.join(tmp, "fmnist.qtc")
            subprocess.run([QTUNE_BINARY, "tune", MODEL, "--calib", CALIB_DATA, "--calib-samples", "64",
                            "--candidates", "int8", "--threads", "1", "-o", checkpoint],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            batch = fmnist_batch(32)
            got = qtune.load_tuned(MODEL, checkpoint).run({"input": batch})["logits"]
            with tempfile.TemporaryDirectory() as io:
                inp, out = os.path.join(io, "in.npy"), os.path.join(io, "out.npz")
                np.save(inp, batch)
                subprocess.run([QTUNE_BINARY, "run", MODEL, "--checkpoint", checkpoint, "--input",
                                "input=" + inp, "--output", out], check=True, stdout=subprocess.DEVNULL)
                with np.load(out) as archive:
                    np.testing.assert_array_equal(got, archive["logits"])

    def test_damaged_checkpoint_is_data_loss(self):
        with tempfile.TemporaryDirectory() as tmp:
            checkpoint = os.path.join(tmp, "bad.qtc")
            with open(checkpoint, "wb") as f:
                f.write(b"not a checkpoint")
            with self.assertRaises(qtune.DataLoss) as caught:
                qtune.load_tuned(MODEL, checkpoint)
            self.assertIn("bad.qtc", str(caught.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
