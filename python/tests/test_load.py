"""evoc.load: experiments that check, and located errors for those that do not."""

import pytest

import evoc
from conftest import SMALL, FAST


def test_bad_file_diagnostics(tmp_path):
    bad = tmp_path / "bad.evo"
    bad.write_text('import "physics/mass_spring.evo";\n\nworld {\n  dim = 2;\n  steps = nope;\n}\n')
    with pytest.raises(evoc.CompileError) as e:
        evoc.load(bad)
    diags = e.value.diagnostics
    assert diags, "no diagnostics"
    f, line, col, msg = diags[0]
    assert f.endswith("bad.evo") and line == 5 and col > 0 and msg
    assert f"bad.evo:{line}:{col}: error:" in str(e.value)


def test_bad_file_matches_evoc_check(tmp_path, evoc_cli):
    import subprocess

    bad = tmp_path / "bad.evo"
    bad.write_text("world {\n  dim = 4;\n  steps = 1;\n}\nbody lattice {\n")
    with pytest.raises(evoc.CompileError) as e:
        evoc.load(bad)
    p = subprocess.run([evoc_cli, "check", str(bad)], capture_output=True, text=True)
    assert p.returncode != 0
    for f, line, col, msg in e.value.diagnostics:
        assert f"{f}:{line}:{col}: error: {msg}" in p.stderr


def test_text_and_errors():
    text = SMALL.read_text()
    exp = evoc.load(text, set=FAST)
    assert exp.dim == 2 and exp.steps == 40 and exp.body_kind == "lattice"
    with pytest.raises(FileNotFoundError):
        evoc.load("no/such/file.evo")
    with pytest.raises(evoc.CompileError) as e:
        evoc.load(text.replace("steps = 400", "steps = -1"))
    assert e.value.diagnostics[0][0] == "<string>.evo"


def test_help_explains_shapes():
    doc = evoc.simulate.__doc__
    for word in ("bodies", "params", "steps", "trajectory", "(N,)", "(T, P, dim)"):
        assert word in doc
