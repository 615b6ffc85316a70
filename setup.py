"""setup.py declares what pyproject.toml cannot: the kernels' shared library (a plain C
library, built without Python's headers) and its cffi declarations module
(threadcost/_native.py, cffi's ABI mode), both from native/build_native.py."""

import sys
from pathlib import Path

from setuptools import setup

sys.path.insert(0, str(Path(__file__).resolve().parent / "native"))
import build_native  # noqa: E402

setup(ext_modules=[build_native.kernels_extension()],
      cffi_modules=["native/build_native.py:ffibuilder"])
