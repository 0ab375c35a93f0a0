"""Experiment.run and evoc.open_run: the CLI's run directory, read and reproduced."""

import json
import subprocess
from pathlib import Path

import pytest

import evoc
from conftest import SMALL, FAST, set_args

TIMING = {"seconds", "elapsed_seconds", "train_seconds", "designs_per_second", "robot_steps_per_second"}


def strip(x):
    """A record without the fields that measure time."""
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in TIMING}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def same_run(a: Path, b: Path):
    """The files two runs wrote agree but for timings (and resolved.evo's
    paths, report.html which embeds them)."""
    log_a = [strip(json.loads(l)) for l in (a / "log.jsonl").read_text().splitlines()]
    log_b = [strip(json.loads(l)) for l in (b / "log.jsonl").read_text().splitlines()]
    assert log_a == log_b
    for rel in ["best.json"] + [str(p.relative_to(a)) for p in sorted(a.glob("gen_*/population.json"))]:
        assert strip(json.loads((a / rel).read_text())) == strip(json.loads((b / rel).read_text())), rel
    sa = json.loads((a / "state.json").read_text())
    sb = json.loads((b / "state.json").read_text())
    assert strip(sa) == strip(sb)


@pytest.fixture(scope="module")
def cli_run(evoc_cli, tmp_path_factory):
    d = tmp_path_factory.mktemp("cli") / "run"
    subprocess.run([evoc_cli, "run", str(SMALL), "--out", str(d)] + set_args(FAST), check=True)
    return d


def test_open_run_reads_cli_run(cli_run):
    run = evoc.open_run(cli_run)
    gens = run.generations
    assert len(gens) == 2 and gens[0]["generation"] == 0
    pop = run.population(1)
    assert len(pop) == 4 and {"id", "fitness", "genome"} <= set(pop[0])
    assert run.best["fitness"] == max(g["best_fitness"] for g in gens)
    body, params = run.best_body()
    assert body.points.shape[1] == 2 and params
    chain = run.lineage()
    assert chain[0]["id"] == run.best["id"]
    try:
        import pandas  # noqa: F401
    except ImportError:
        return
    assert list(run.dataframe()["generation"]) == [0, 1]


def test_run_and_resume_equal_cli(cli_run, tmp_path):
    exp = evoc.load(SMALL, set={**FAST, "evolve.generations": 1})
    d = tmp_path / "py"
    seen = []
    run = exp.run(out=str(d), progress=seen.append)
    assert run.num_generations == 1 and len(seen) == 1
    exp2 = evoc.load(SMALL, set=FAST)
    run = exp2.run(resume=str(d), progress=False)
    assert run.num_generations == 2
    same_run(cli_run, d)


def test_stop_from_progress_is_resumable(tmp_path):
    exp = evoc.load(SMALL, set=FAST)
    d = tmp_path / "stopped"

    def stop(rec):
        raise KeyboardInterrupt  # what Ctrl-C raises in the progress hook

    with pytest.raises(KeyboardInterrupt):
        exp.run(out=str(d), progress=stop)
    assert evoc.open_run(d).num_generations == 1
    assert exp.run(resume=str(d), progress=False).num_generations == 2


def test_render(cli_run):
    path = evoc.render(cli_run)
    assert Path(path).exists()


def test_ctrl_c_stops_and_resumes(tmp_path):
    """SIGINT (Ctrl-C) in a Python process running a long evolution: it stops
    after a committed generation with KeyboardInterrupt; the run resumes."""
    import signal
    import sys
    import time

    d = tmp_path / "interrupted"
    settings = {**FAST, "world.steps": 200, "evolve.generations": 500}
    script = (
        "import sys, evoc\n"
        f"exp = evoc.load({str(SMALL)!r}, set={settings!r})\n"
        "try:\n"
        "    exp.run(out=sys.argv[1], progress=False)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted'); sys.exit(3)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", script, str(d)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    log = d / "log.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and not (log.exists() and log.read_text().count("\n") >= 1):
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 3 and "interrupted" in out, out + err
    n = evoc.open_run(d).num_generations
    assert 1 <= n < 500
    exp = evoc.load(SMALL, set={**settings, "evolve.generations": n + 1})
    assert exp.run(resume=str(d), progress=False).num_generations == n + 1
