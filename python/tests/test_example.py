"""The example script runs (short horizon) and draws its figure."""

import subprocess
import sys

import pytest

from conftest import ROOT


def test_example_script(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed (pip install matplotlib)")
    out = tmp_path / "run"
    p = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "python" / "evolve_and_plot.py"), "--out", str(out),
         "--generations", "2", "--steps", "40", "--population", "4", "--iterations", "2"],
        capture_output=True, text=True,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert (out / "fitness_python.png").stat().st_size > 1000
    assert "generation 1: best" in p.stdout
