"""Build the native hand-evaluation extension (the rest is configured in pyproject.toml)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "felt._native",
            sources=["libs/felt/native/felt_native.c"],
            extra_compile_args=["-O3", "-std=c11"],
        )
    ]
)
