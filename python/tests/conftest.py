"""Shared fixtures. ctest sets the environment (python/CMakeLists.txt); run by hand with

    FOURDGS_C_LIBRARY=build/capi/libfourdgs-c.so.0 PYTHONPATH=python \\
        /usr/bin/python3 -m pytest python/tests

FOURDGS_CLI (the 4dgs tool) enables the cross-checks against the C++ PLY code.
"""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return Path(os.environ.get("FOURDGS_TEST_DATA", ROOT / "tests" / "data"))


@pytest.fixture(scope="session")
def corpus() -> Path:
    return Path(os.environ.get("FOURDGS_CORPUS", ROOT / "conformance" / "corpus"))


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("FOURDGS_CLI", str(ROOT / "build" / "src" / "cli" / "4dgs"))
    if not os.path.exists(path):
        pytest.skip(f"the 4dgs tool is not built ({path}); set FOURDGS_CLI")
    return path
