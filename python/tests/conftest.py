"""Fixtures of the Python tests (docs/python.md): the repository, the evoc
tool the CLI comparisons run, and a small fast experiment."""

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "examples" / "eldir_small.evo"
# A few steps, a small population, two learning iterations: seconds per run.
FAST = {
    "world.steps": 40,
    "evolve.population": 4,
    "evolve.generations": 2,
    "evolve.learn.iterations": 2,
}


def evoc_bin():
    """The evoc tool: $EVOC_BIN (set by ctest), else build/evoc."""
    for c in (os.environ.get("EVOC_BIN"), str(ROOT / "build" / "evoc"), shutil.which("evoc")):
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return c
    return None


@pytest.fixture(scope="session")
def evoc_cli():
    b = evoc_bin()
    if b is None:
        pytest.skip("the evoc tool is not built (set EVOC_BIN); the CLI comparisons need it")
    return b


@pytest.fixture(scope="session")
def small():
    import evoc

    return evoc.load(SMALL, set=FAST)


def set_args(settings):
    out = []
    for k, v in settings.items():
        out += ["--set", f"{k}={v}"]
    return out
