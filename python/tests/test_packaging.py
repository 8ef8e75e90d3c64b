"""pip in a venv (docs/python.md, "Installing with pip"): a fresh --system-site-packages
venv installs qtune with `pip install --no-build-isolation` from a source copy that carries
a stale build-pip/ from elsewhere, then imports and runs it; an interpreter without
setuptools, wheel and numpy fails in one line naming them; setup.py's build folders are
keyed by source and interpreter, and a foreign CMake cache is cleared. Run by ctest
(python.packaging) with QTUNE_BUILD_DIR at the configured build, which the install reuses."""
import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

SOURCE_DIR = os.environ["QTUNE_SOURCE_DIR"]
MODEL = os.path.join(SOURCE_DIR, "models/fmnist/fmnist_resnet.onnx")
CALIB = os.path.join(SOURCE_DIR, "models/fmnist/calib_512.npy")


def load_setup():
    spec = importlib.util.spec_from_file_location("qtune_setup", os.path.join(SOURCE_DIR, "setup.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: setup() is not called
    return module


def test_build_folders_are_keyed_by_source_and_interpreter(tmp_path):
    setup = load_setup()
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    os.makedirs(a)
    os.makedirs(b)
    assert setup.build_key(a, sys.executable) == setup.build_key(a, sys.executable)
    assert setup.build_key(a, sys.executable) != setup.build_key(b, sys.executable)
    os.symlink(a, str(tmp_path / "link"))
    assert setup.build_key(str(tmp_path / "link"), sys.executable) == setup.build_key(a, sys.executable)
    assert setup.pip_build_base(a, sys.executable).startswith(os.path.join(a, "build-pip", ""))


def test_a_cmake_cache_of_another_source_folder_is_cleared(tmp_path):
    setup = load_setup()
    build = tmp_path / "build"
    build.mkdir()
    (build / "CMakeCache.txt").write_text("CMAKE_HOME_DIRECTORY:INTERNAL=/somewhere/else\n")
    assert setup.clear_if_foreign(str(build), str(tmp_path))
    assert not build.exists()
    build.mkdir()
    (build / "CMakeCache.txt").write_text("CMAKE_HOME_DIRECTORY:INTERNAL=%s\n" % tmp_path)
    assert not setup.clear_if_foreign(str(build), str(tmp_path))
    assert (build / "CMakeCache.txt").exists()
    assert not setup.clear_if_foreign(str(tmp_path / "none"), str(tmp_path))


def test_an_interpreter_without_the_build_modules_fails_in_one_line_naming_them(tmp_path):
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import qtune_build; "
            "qtune_build.build_wheel(sys.argv[2])")
    result = subprocess.run([str(venv / "bin" / "python"), "-c", code,
                             os.path.join(SOURCE_DIR, "python", "packaging"), str(tmp_path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "lacks setuptools, wheel, numpy" in lines[0] and str(venv) in lines[0]


def copy_source_with_a_stale_build_pip(dest):
    """What setup.py needs of the source (QTUNE_BUILD_DIR skips CMake's configure), plus a
    build-pip/ as an install from another folder leaves it: absolute paths to there."""
    for name in ("setup.py", "pyproject.toml"):
        shutil.copy2(os.path.join(SOURCE_DIR, name), dest / name)
    (dest / "docs").mkdir()
    shutil.copy2(os.path.join(SOURCE_DIR, "docs", "python.md"), dest / "docs" / "python.md")
    shutil.copytree(os.path.join(SOURCE_DIR, "python", "qtune"), dest / "python" / "qtune",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(os.path.join(SOURCE_DIR, "python", "packaging"), dest / "python" / "packaging",
                    ignore=shutil.ignore_patterns("__pycache__"))
    # The folder it was copied from still exists: its absolute paths name real files.
    stale = dest / "build-pip"
    (stale / "qtune.egg-info").mkdir(parents=True)
    (stale / "qtune.egg-info" / "SOURCES.txt").write_text("".join(
        os.path.join(SOURCE_DIR, path) + "\n" for path in
        ("pyproject.toml", "setup.py", "python/qtune/__init__.py", "python/qtune/_session.py")))
    (stale / "CMakeCache.txt").write_text("CMAKE_HOME_DIRECTORY:INTERNAL=%s\n" % SOURCE_DIR)
    (stale / "0123456789ab" / "cmake").mkdir(parents=True)
    (stale / "0123456789ab" / "cmake" / "CMakeCache.txt").write_text(
        "CMAKE_HOME_DIRECTORY:INTERNAL=%s\n" % SOURCE_DIR)


def test_pip_install_into_a_fresh_venv_then_import_and_run(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    copy_source_with_a_stale_build_pip(source)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=120)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "QTUNE_BINARY")}
    env.update(QTUNE_BUILD_DIR=os.environ["QTUNE_BUILD_DIR"], PIP_NO_INDEX="1",
               PATH="/usr/bin:/bin")
    install = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-build-isolation",
                              "--no-cache-dir", "."], cwd=str(source), env=env,
                             capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    script = ("import sys, numpy as np, qtune; print(qtune.__file__); "
              "s = qtune.InferenceSession(sys.argv[1]); "
              "print(s.run(None, {'input': np.load(sys.argv[2])[:2]})[0].shape); "
              "r = qtune.tune(sys.argv[1], np.load(sys.argv[2])[:32], sys.argv[3], "
              "candidates=['fp32'], iters=2, rounds=1); print(r.candidate)")
    env.pop("QTUNE_BUILD_DIR")
    check = subprocess.run([str(venv / "bin" / "python"), "-c", script, MODEL, CALIB,
                            str(tmp_path / "venv.qtc")], env=env, cwd=str(tmp_path),
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stderr
    lines = check.stdout.splitlines()
    assert lines[0].startswith(str(venv)) and lines[0].endswith(os.path.join("qtune", "__init__.py"))
    assert lines[1:] == ["(2, 10)", "fp32"]
