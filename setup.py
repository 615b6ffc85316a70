"""setup.py exists only because cffi declares its extension through cffi_modules."""

from setuptools import setup

setup(cffi_modules=["native/build_native.py:ffibuilder"])
