"""Builds the qtune extension module with CMake (python/CMakeLists.txt) for pip:

    pip install --no-build-isolation .                   # offline, Debian's setuptools
    QTUNE_BUILD_DIR=build pip install --no-build-isolation .   # reuse a configured build

Without QTUNE_BUILD_DIR the build goes to build-pip/ in the source tree (configured once,
then incremental). The module is the same file `PYTHONPATH=build/python` imports; the qtune binary goes beside it
as qtune_bin/qtune, where qtune.tune() and qtune.autotune() look for it.
"""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.path.abspath(os.environ.get("QTUNE_BUILD_DIR") or os.path.join(ROOT, "build-pip"))
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir, *generator,
                                   "-DCMAKE_BUILD_TYPE=Release", "-DQTUNE_BUILD_TESTS=OFF",
                                   "-DQTUNE_BUILD_PYTHON=ON",
                                   "-DPython3_EXECUTABLE=" + sys.executable])
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "qtune_python", "qtune",
                               "-j", str(os.cpu_count() or 1)])
        built = glob.glob(os.path.join(build_dir, "python", "qtune*.so"))
        if len(built) != 1:
            raise RuntimeError("qtune: expected one qtune*.so in %s/python, found %s"
                               % (build_dir, built))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)
        # The qtune binary beside the module (qtune_bin/qtune): tune() and autotune() run
        # `qtune measure-worker` children and find it there (python/tune_binding.cc).
        binary_dir = os.path.join(os.path.dirname(target), "qtune_bin")
        os.makedirs(binary_dir, exist_ok=True)
        shutil.copy2(os.path.join(build_dir, "src", "cli", "qtune"), os.path.join(binary_dir, "qtune"))


# setuptools' own build and egg-info folders stay out of the CMake build/ folder.
os.makedirs(os.path.join(ROOT, "build-pip", "setuptools"), exist_ok=True)
setup(
    ext_modules=[CMakeExtension("qtune")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": os.path.join(ROOT, "build-pip", "setuptools")},
             "egg_info": {"egg_base": os.path.join(ROOT, "build-pip")}},
    zip_safe=False,
)
