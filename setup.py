"""The compiled twin of kmeta/formats/runs.py.  ``optional``: without a C compiler (or
Python's headers) the install goes on and kmeta runs its pure-Python reference."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("kmeta.formats._runs", ["kmeta/formats/_runs.c"],
                             extra_compile_args=["-O2"], optional=True)])
