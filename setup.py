"""Builds the qtune package for pip: python/qtune/*.py and the extension qtune._qtune, built
with CMake (python/CMakeLists.txt) for the interpreter running pip:

    python3 -m venv --system-site-packages v && v/bin/pip install --no-build-isolation .
    QTUNE_BUILD_DIR=build pip install --no-build-isolation .   # reuse a configured build

Without QTUNE_BUILD_DIR the CMake build goes to build-pip/<key>/cmake, where <key> is a
hash of this source folder's real path and of the interpreter: a build-pip/ copied along
with the source (another key) is never read, and a build folder whose CMakeCache.txt
belongs to another source folder is cleared. setuptools' own folders live under the same
key. The measuring child, qtune-measure, goes beside the extension as
qtune/qtune_bin/qtune-measure, where qtune.tune() and qtune.autotune() find it. python/packaging/qtune_build.py (the
build backend) checks first that the interpreter has setuptools, wheel and numpy.
"""
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig

ROOT = os.path.dirname(os.path.abspath(__file__))


def build_key(root, executable):
    """12 hex digits naming the build of `root` for `executable`: venvs of one interpreter
    share it (same real path), a copied source tree or another interpreter does not."""
    text = os.path.realpath(root) + "\0" + os.path.realpath(executable) + "\0" + (
        sysconfig.get_config_var("EXT_SUFFIX") or "")
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def cached_source_dir(build_dir):
    """The source folder a CMake build folder was configured for (CMAKE_HOME_DIRECTORY in
    its CMakeCache.txt), or None when there is no cache."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt"), encoding="utf-8",
                  errors="replace") as cache:
            for line in cache:
                if line.startswith("CMAKE_HOME_DIRECTORY:"):
                    return line.split("=", 1)[1].strip()
    except FileNotFoundError:
        return None
    return ""


def clear_if_foreign(build_dir, root):
    """Removes `build_dir` when its CMakeCache.txt names another source folder (a build
    folder copied with the source, or moved). Returns True when it did."""
    cached = cached_source_dir(build_dir)
    if cached is None or os.path.realpath(cached) == os.path.realpath(root):
        return False
    shutil.rmtree(build_dir)
    return True


def pip_build_base(root=ROOT, executable=sys.executable):
    return os.path.join(root, "build-pip", build_key(root, executable))


if __name__ == "__main__":
    from setuptools import Extension, setup
    from setuptools.command.build_ext import build_ext

    class CMakeExtension(Extension):
        def __init__(self, name):
            super().__init__(name, sources=[])

    class CMakeBuild(build_ext):
        def build_extension(self, ext):
            given = os.environ.get("QTUNE_BUILD_DIR")
            if given:
                build_dir = os.path.abspath(given)
                # Used as it is (its own source folder, its own Python): the built
                # extension's suffix is checked below.
                if cached_source_dir(build_dir) is None:
                    sys.exit("qtune: QTUNE_BUILD_DIR=%s is not a configured CMake build "
                             "(no CMakeCache.txt); configure it first or leave "
                             "QTUNE_BUILD_DIR unset" % build_dir)
            else:
                build_dir = os.path.join(pip_build_base(), "cmake")
                clear_if_foreign(build_dir, ROOT)
                generator_args = []  # an existing build keeps its generator
                if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")) and \
                        shutil.which("ninja"):
                    generator_args = ["-G", "Ninja"]
                configure = ["cmake", "-S", ROOT, "-B", build_dir, *generator_args,
                             "-DCMAKE_BUILD_TYPE=Release", "-DQTUNE_BUILD_TESTS=OFF",
                             "-DQTUNE_BUILD_PYTHON=ON", "-DPython3_EXECUTABLE=" + sys.executable]
                try:  # pybind11 from pip (an isolated build's requirement), else Debian's
                    import pybind11
                    configure.append("-Dpybind11_DIR=" + pybind11.get_cmake_dir())
                except ImportError:
                    pass
                subprocess.check_call(configure)
            subprocess.check_call(["cmake", "--build", build_dir, "--target", "qtune_python",
                                   "qtune_measure_exe", "-j", str(os.cpu_count() or 1)])
            suffix = sysconfig.get_config_var("EXT_SUFFIX")
            built = os.path.join(build_dir, "python", "qtune", "_qtune" + suffix)
            if not os.path.exists(built):
                found = glob.glob(os.path.join(build_dir, "python", "qtune", "_qtune*"))
                sys.exit("qtune: %s has no _qtune%s for %s (found %s); the build was made for "
                         "another Python: leave QTUNE_BUILD_DIR unset or configure it with "
                         "-DPython3_EXECUTABLE=%s" % (build_dir, suffix, sys.executable,
                                                     found or "none", sys.executable))
            target = self.get_ext_fullpath(ext.name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(built, target)
            # The measuring child beside the extension (qtune/qtune_bin/qtune-measure): tune()
            # and autotune() run it and find it there (src/measure/measure_executable.h).
            binary_dir = os.path.join(os.path.dirname(target), "qtune_bin")
            os.makedirs(binary_dir, exist_ok=True)
            shutil.copy2(os.path.join(build_dir, "libexec", "qtune", "qtune-measure"),
                         os.path.join(binary_dir, "qtune-measure"))

    base = os.path.relpath(pip_build_base(), ROOT)  # setuptools wants relative paths
    os.makedirs(os.path.join(ROOT, base, "setuptools"), exist_ok=True)
    setup(
        packages=["qtune"],
        package_dir={"qtune": "python/qtune"},
        ext_modules=[CMakeExtension("qtune._qtune")],
        cmdclass={"build_ext": CMakeBuild},
        options={"build": {"build_base": os.path.join(base, "setuptools")},
                 "egg_info": {"egg_base": base}},
        zip_safe=False,
    )
