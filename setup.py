"""Builds the Python package fastsmt: the extension fastsmt._fastsmt comes from the project's
CMake (target fastsmt_python, from the in-tree static libraries), the pure Python files from
python/fastsmt. Metadata: pyproject.toml. Install: python3 -m pip install --no-build-isolation .

FASTSMT_CMAKE_ARGS (environment) adds CMake arguments, e.g. "-DFASTSMT_NATIVE=ON".
"""
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    """Configures the project with CMake in the build folder and builds the extension target."""

    def build_extension(self, ext):
        build = os.path.join(os.path.abspath(self.build_temp), "cmake")
        args = [
            "-DFASTSMT_PYTHON=ON",
            "-DFASTSMT_TESTS=OFF",
            "-DFASTSMT_CUDA=OFF",
            "-DCMAKE_BUILD_TYPE=Release",
            "-DPython3_EXECUTABLE=" + sys.executable,
        ] + shlex.split(os.environ.get("FASTSMT_CMAKE_ARGS", ""))
        subprocess.run(["cmake", "-S", HERE, "-B", build] + args, check=True)
        subprocess.run(["cmake", "--build", build, "--target", "fastsmt_python",
                        "-j", str(os.cpu_count() or 1)], check=True)
        built = os.path.join(build, "python", "fastsmt", "_fastsmt.abi3.so")
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(built, dest)


setup(
    ext_modules=[Extension("fastsmt._fastsmt", sources=[], py_limited_api=True)],
    cmdclass={"build_ext": CMakeBuild},
    # out of the README's CMake folder "build"; "build-*/" is ignored by git
    options={"build": {"build_base": "build-python"}, "bdist_wheel": {"py_limited_api": "cp310"}},
)
