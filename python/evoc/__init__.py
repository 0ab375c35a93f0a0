"""evoc from Python: load an experiment, simulate bodies, evolve, read runs.

The functions here are a thin layer over the same C++ library calls the
``evoc`` tool makes (``evoc check``, ``evoc sim``, ``evoc run``, ``evoc
render``); arrays go in and out as numpy float64. See docs/python.md.

    import evoc
    exp = evoc.load("examples/eldir_small.evo", set={"world.steps": 100})
    bodies = exp.sample(4)
    res = exp.simulate(bodies)          # losses (4,), one grad dict per body
    exp.run(out="runs/small")           # the evolution, resumable
    run = evoc.open_run("runs/small")
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _evoc
from ._run import Run, open_run

__all__ = [
    "Body",
    "CompileError",
    "EvocError",
    "Experiment",
    "Run",
    "SimResult",
    "load",
    "open_run",
    "render",
    "bodies_from_json",
]

__version__ = _evoc.version()

#: Raised for bad input the C++ core refuses (a malformed robot, a parameter
#: of the wrong shape, an unreadable file); a subclass of ValueError.
EvocError = _evoc.EvocError

_STDLIB = str(Path(__file__).parent / "stdlib")

Diagnostic = Tuple[str, int, int, str]
Params = Mapping[str, np.ndarray]


class CompileError(Exception):
    """An experiment that does not check or compile.

    ``diagnostics`` holds (file, line, column, message) for every error, the
    located errors ``evoc check`` prints."""

    def __init__(self, diagnostics: List[Diagnostic]):
        self.diagnostics = list(diagnostics)
        lines = [f"{f}:{l}:{c}: error: {m}" for f, l, c, m in self.diagnostics]
        super().__init__("\n".join(lines))


class Body:
    """One robot: points and springs (and its genome, when a body model made it).

    Build one from arrays with ``Body(points, springs, rest, stiffness,
    actuation)``: points (P, dim) float, springs (S, 2) int point indices,
    rest / stiffness / actuation (S,) float. They are checked as ROBOTS.json
    is (indices in range, positive rest lengths, finite numbers)."""

    __slots__ = ("_b",)

    def __init__(self, points: Any, springs: Any, rest: Any, stiffness: Any, actuation: Any):
        pts = np.ascontiguousarray(points, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] not in (2, 3):
            raise ValueError(f"points must have shape (P, 2) or (P, 3), not {pts.shape}")
        spr = np.asarray(springs)
        if spr.ndim != 2 or spr.shape[1] != 2:
            raise ValueError(f"springs must have shape (S, 2), not {spr.shape}")
        if spr.size and not np.issubdtype(spr.dtype, np.integer):
            raise TypeError(f"springs must hold integer point indices, not {spr.dtype}")
        spr = np.ascontiguousarray(spr, dtype=np.int64)
        props = []
        for name, v in (("rest", rest), ("stiffness", stiffness), ("actuation", actuation)):
            a = np.asarray(v, dtype=np.float64)
            if a.shape != (spr.shape[0],):
                raise ValueError(f"{name} must have shape ({spr.shape[0]},), not {a.shape}")
            props.append(a)
        prop = np.ascontiguousarray(np.stack(props, axis=1).reshape(spr.shape[0], 3))
        self._b = _evoc.body_from_arrays(pts, spr, prop)

    @classmethod
    def _wrap(cls, b: Any) -> "Body":
        obj = cls.__new__(cls)
        obj._b = b
        return obj

    @property
    def dim(self) -> int:
        return self._b.dim

    @property
    def points(self) -> np.ndarray:
        """Initial positions, (P, dim) float64 (a copy)."""
        return self._b.points()

    @property
    def springs(self) -> np.ndarray:
        """Spring endpoints, (S, 2) int64."""
        return np.asarray(self._b.spring_ends(), dtype=np.int64).reshape(-1, 2)

    @property
    def rest(self) -> np.ndarray:
        """Rest lengths, (S,) float64."""
        return self._b.spring_props()[:, 0].copy()

    @property
    def stiffness(self) -> np.ndarray:
        return self._b.spring_props()[:, 1].copy()

    @property
    def actuation(self) -> np.ndarray:
        return self._b.spring_props()[:, 2].copy()

    @property
    def parts(self) -> Optional[Dict[str, List[int]]]:
        """The points of each named part (grammar and voxel bodies), else None."""
        return self._b.parts()

    @property
    def genome(self) -> Optional[dict]:
        """The genome (as population.json stores it), when a body model made this body."""
        g = self._b.genome_json
        return None if g is None else json.loads(g)

    def to_json(self) -> dict:
        """This robot as a ROBOTS.json entry ({"points": ..., "springs": ...})."""
        return json.loads(self._b.to_json())

    def __repr__(self) -> str:
        return f"<evoc.Body {self._b.num_points} points, {self._b.num_springs} springs, dim {self.dim}>"


def bodies_from_json(source: Union[str, os.PathLike, dict], experiment: Optional["Experiment"] = None):
    """Robots from JSON in any form ``evoc sim --robots`` reads: ROBOTS.json,
    one robot (a run's best.json), or a generation's population.json (genomes
    expressed by ``experiment``'s body). ``source`` is a path, JSON text or a
    dict. Returns (bodies, params): params is the trained weights the file
    holds (best.json), else None."""
    name = "ROBOTS.json"
    if isinstance(source, dict):
        text = json.dumps(source)
    elif isinstance(source, os.PathLike) or (isinstance(source, str) and not source.lstrip().startswith("{")):
        name = str(source)
        if not Path(name).is_file():
            raise FileNotFoundError(f"{name}: no such file")
        text = Path(name).read_text()
    else:
        text = source
    dim = experiment.dim if experiment is not None else 0
    bodies, params = _evoc.bodies_from_json(text, name, dim, experiment._e if experiment else None)
    return [Body._wrap(b) for b in bodies], params


class SimResult:
    """What ``Experiment.simulate`` returns, one entry per body.

    losses: (N,) float64, the loss of each body (NaN where not valid);
    grads: list of N dicts {field: array}, d loss / d controller parameter,
    each array shaped as the parameter; params: the parameters used (after
    training when iterations > 0); curves: list of N learning curves;
    valid / errors: per body; trajectory (when asked): list of N arrays
    (T, P, dim) of point positions; point_grads (when asked): list of N
    arrays (P, dim), d loss / d initial positions; body_grads (when asked):
    list of N dicts {body field: array}, d loss / d the springs' rest lengths
    ("spring.rest", (S,)), stiffness and actuation (and the world objects'
    "object.half" (O*dim,) and "object.mass" (O,) where there are objects)."""

    def __init__(self, rows: List[dict]):
        self.rows = rows
        self.losses = np.array([r["loss"] for r in rows], dtype=np.float64)
        self.grads: List[Dict[str, np.ndarray]] = [dict(r["grad"]) for r in rows]
        self.params: List[Dict[str, np.ndarray]] = [dict(r["params"]) for r in rows]
        self.best_params: List[Dict[str, np.ndarray]] = [dict(r["best_params"]) for r in rows]
        self.curves: List[np.ndarray] = [r["losses"] for r in rows]
        self.valid = np.array([r["valid"] for r in rows], dtype=bool)
        self.errors: List[str] = [r["error"] for r in rows]
        self.point_grads: Optional[List[np.ndarray]] = (
            [r.get("point_grad") for r in rows] if rows and "point_grad" in rows[0] else None
        )
        self.body_grads: Optional[List[Dict[str, np.ndarray]]] = (
            [dict(r["body_grad"]) if "body_grad" in r else None for r in rows]
            if rows and any("body_grad" in r for r in rows)
            else None
        )
        self.trajectory: Optional[List[np.ndarray]] = (
            [r.get("trajectory") for r in rows] if rows and "trajectory" in rows[0] else None
        )

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"<evoc.SimResult {len(self.rows)} bodies, losses={self.losses}>"


def _params_list(params: Any, n: int) -> Optional[List[Dict[str, np.ndarray]]]:
    """None, one dict for every body, or a list of n dicts -> n dicts of f64 arrays."""
    if params is None:
        return None
    if isinstance(params, Mapping):
        params = [params] * n
    params = list(params)
    if len(params) != n:
        raise ValueError(f"params: {len(params)} parameter sets for {n} bodies")
    out = []
    for i, p in enumerate(params):
        if not isinstance(p, Mapping):
            raise TypeError(f"params[{i}] must be a dict of arrays, not {type(p).__name__}")
        d = {}
        for k, v in p.items():
            a = np.ascontiguousarray(np.asarray(v, dtype=np.float64))
            if not np.all(np.isfinite(a)):
                raise ValueError(f"params[{i}]['{k}'] holds NaN or inf")
            d[str(k)] = a
        out.append(d)
    return out


class Experiment:
    """A checked and compiled .evo experiment (from ``evoc.load``)."""

    def __init__(self, e: Any, source: str, text: Optional[str], overrides, backend: str):
        self._e = e
        self._source = source
        self._text = text
        self._overrides = list(overrides)
        self._backend = backend

    @property
    def dim(self) -> int:
        """2 or 3."""
        return self._e.dim

    @property
    def steps(self) -> int:
        """States per rollout (world.steps, after --set overrides)."""
        return self._e.steps

    @property
    def body_kind(self) -> Optional[str]:
        """The body model ("lattice", "grammar", "voxel", "cells"), or None."""
        return self._e.body_kind

    def sample(self, n: int = 1, seed: Optional[int] = None) -> List[Body]:
        """n bodies drawn from the file's body model (seed: evolve.seed by
        default, as ``evoc sim`` draws a fixed body), each with its genome."""
        return [Body._wrap(b) for b in self._e.sample(int(n), seed)]

    def express(self, genome: Union[dict, str]) -> Body:
        """The body a genome (population.json's "genome") expresses."""
        text = genome if isinstance(genome, str) else json.dumps(genome)
        return Body._wrap(self._e.from_genome(text))

    def simulate(
        self,
        bodies: Union[Body, Sequence[Body]],
        params: Union[None, Params, Sequence[Params]] = None,
        *,
        steps: Optional[int] = None,
        iterations: int = 0,
        trajectory: bool = False,
        point_grads: bool = False,
        body_grads: bool = False,
        threads: int = 0,
    ) -> SimResult:
        """Roll out each body and differentiate its loss, as ``evoc sim`` does.

        Args:
          bodies: a Body or a list of N bodies.
          params: the controllers' weights: None (drawn from evolve.seed and
            each body's index, as ``evoc sim`` without --params), one dict
            {field: array} for every body, or a list of N such dicts. Each
            array has the field's shape (e.g. w1: (hidden, inputs)); float64.
          steps: states per rollout (default world.steps).
          iterations: 0 for one forward and backward pass; K > 0 trains K
            iterations first (``evoc sim --iterations K``).
          trajectory: also return each body's point positions, (T, P, dim).
          point_grads: also d loss / d initial positions, (P, dim) per body
            (iterations = 0 only; the CPU back ends).
          body_grads: also d loss / d the springs' rest lengths, stiffness
            and actuation, {"spring.rest": (S,), ...} per body (iterations =
            0 only; the CPU back ends). The first call compiles the
            experiment a second time, with body gradients.
          threads: worker threads (0: one per core).

        Returns:
          SimResult: ``losses`` (N,), ``grads`` (N dicts of arrays shaped as
          the parameters), ``params``, ``curves``, ``valid``, ``errors`` and
          with trajectory=True ``trajectory`` (N arrays (T, P, dim)).
          Equal bit for bit to ``evoc sim`` on the same robots and weights."""
        if isinstance(bodies, Body):
            bodies = [bodies]
        bodies = list(bodies)
        for i, b in enumerate(bodies):
            if not isinstance(b, Body):
                raise TypeError(f"bodies[{i}] is a {type(b).__name__}, not an evoc.Body")
        if steps is not None and int(steps) < 2:
            raise ValueError("steps must be at least 2")
        if int(iterations) < 0:
            raise ValueError("iterations must be >= 0")
        for name, asked in (("point_grads", point_grads), ("body_grads", body_grads)):
            if asked and (int(iterations) > 0 or self._backend == "cuda"):
                raise ValueError(f"{name} needs iterations = 0 and a CPU back end (cpu, interp)")
        rows = self._e.simulate(
            [b._b for b in bodies],
            _params_list(params, len(bodies)),
            int(steps or 0),
            int(iterations),
            int(threads),
            bool(trajectory),
            bool(point_grads),
            bool(body_grads),
        )
        return SimResult(rows)

    def train(
        self,
        body: Body,
        params: Optional[Params] = None,
        *,
        iterations: Optional[int] = None,
        steps: Optional[int] = None,
    ) -> dict:
        """Learn one body's controller (the experiment's optimiser, evolve.learn
        iterations by default). Returns {"losses": learning curve, "params":
        final weights, "best_params": weights of the lowest loss, "loss"}."""
        it = self._e.iterations if iterations is None else int(iterations)
        r = self.simulate([body], None if params is None else [params], steps=steps, iterations=max(it, 1))
        if not r.valid[0]:
            raise EvocError(r.errors[0])
        return {"losses": r.curves[0], "params": r.params[0], "best_params": r.best_params[0], "loss": r.losses[0]}

    def _file_args(self, tmp: Optional[str]) -> List[str]:
        args = [self._source if self._text is None else tmp]
        for k, v in self._overrides:
            args += ["--set", f"{k}={v}"]
        return args + ["--stdlib", _STDLIB]

    def run(
        self,
        out: Optional[str] = None,
        *,
        resume: Optional[str] = None,
        threads: int = 0,
        progress: Union[bool, Callable[[dict], Any]] = True,
    ) -> "Run":
        """Evolve, as ``evoc run FILE --out OUT`` (or ``--resume DIR``) does;
        returns the run directory opened (``evoc.open_run``).

        progress: True shows a tqdm bar where tqdm is installed; a callable
        gets each generation's log.jsonl record. Ctrl-C stops the run after
        the generation in progress is committed (KeyboardInterrupt is raised);
        ``run(resume=DIR)`` continues it, ending exactly as an uninterrupted
        run."""
        if out is not None and resume is not None and Path(out) != Path(resume):
            raise ValueError("give either out or resume")
        d = resume if resume is not None else out
        if d is None:
            raise ValueError("run needs out=DIR (or resume=DIR)")
        tmp = None
        if self._text is not None:
            import tempfile

            fd, tmp = tempfile.mkstemp(suffix=".evo")
            with os.fdopen(fd, "w") as f:
                f.write(self._text)
        args = self._file_args(tmp) + (["--resume", d] if resume is not None else ["--out", d])
        args += ["--backend", self._backend, "--threads", str(int(threads))]
        hook = _progress_hook(d, progress)
        try:
            rc = _evoc.run_command("run", args, hook)
        finally:
            if tmp:
                os.unlink(tmp)
            if hasattr(hook, "close"):
                hook.close()
        if rc != 0:
            raise EvocError(f"evoc run failed (exit {rc}); its messages are on stderr")
        return open_run(d)


class _Progress:
    """Called after every committed generation: reports the newest log.jsonl record."""

    def __init__(self, d: str, progress: Any):
        self.log = Path(d) / "log.jsonl"
        self.seen = 0
        self.callback = progress if callable(progress) else None
        self.bar = None
        if progress is True:
            try:
                from tqdm.auto import tqdm

                self.bar = tqdm(unit="gen")
            except ImportError:
                self.bar = None

    def __call__(self) -> bool:
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        for line in lines[self.seen :]:
            rec = json.loads(line)
            if self.callback:
                self.callback(rec)
            if self.bar is not None:
                self.bar.update(1)
                self.bar.set_postfix(best=rec.get("best_fitness"))
        self.seen = len(lines)
        return False

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _progress_hook(d: str, progress: Any) -> _Progress:
    return _Progress(d, progress)


def load(
    path_or_text: Union[str, os.PathLike],
    set: Optional[Mapping[str, Any]] = None,
    *,
    backend: str = "cpu",
    stdlib: Iterable[str] = (),
) -> Experiment:
    """Check and compile an experiment once: a .evo path, or its text.

    Args:
      path_or_text: a path to a .evo file, or the program's text (anything
        holding a newline or a ``{`` is taken as text; its imports resolve
        against the stdlib and the current directory).
      set: ``--set`` overrides, e.g. {"world.steps": 100, "evolve.population": 8}.
      backend: "cpu" (LLVM JIT, the default), "interp" or "cuda".
      stdlib: extra folders searched for imports.

    Raises:
      CompileError: with ``.diagnostics`` [(file, line, column, message)].
      FileNotFoundError: no such file."""
    s = os.fspath(path_or_text)
    text = None
    if "\n" in s or "{" in s:
        text, name = s, "<string>.evo"
    else:
        name = s
        if not Path(s).is_file():
            raise FileNotFoundError(f"{s}: no such .evo file")
    overrides = [(str(k), _setting(v)) for k, v in (set or {}).items()]
    dirs = [os.fspath(d) for d in stdlib] + [_STDLIB]
    e, diags = _evoc.compile(name, text, overrides, dirs, backend)
    if e is None:
        raise CompileError(diags)
    return Experiment(e, name, text, overrides, backend)


def _setting(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def render(run_dir: Union[str, os.PathLike], *, video: Optional[str] = None, design: Optional[int] = None) -> str:
    """(Re)write a run directory's report.html (``evoc render RUN_DIR``), or
    with video="x.mp4"/"x.gif" a video of the best robot (needs ffmpeg).
    Returns the path written."""
    d = os.fspath(run_dir)
    if not Path(d).exists():
        raise FileNotFoundError(f"{d}: no such run directory")
    args = [d]
    if video:
        args += ["--video", video]
    if design is not None:
        args += ["--design", str(int(design))]
    rc = _evoc.run_command("render", args, None)
    if rc != 0:
        raise EvocError(f"evoc render failed (exit {rc}); its messages are on stderr")
    return video or str(Path(d) / "report.html")


def simulate(
    experiment: Experiment,
    bodies: Union[Body, Sequence[Body]],
    params: Union[None, Params, Sequence[Params]] = None,
    **kw: Any,
) -> SimResult:
    """Roll out N bodies through an experiment and differentiate their losses
    (``evoc sim``; the same as ``experiment.simulate(...)``).

    Args:
      experiment: from evoc.load.
      bodies: a Body or a list of N bodies (Experiment.sample,
        evoc.bodies_from_json, or evoc.Body(points, springs, rest,
        stiffness, actuation) with points (P, dim), springs (S, 2) int,
        rest / stiffness / actuation (S,)).
      params: None (weights drawn from evolve.seed and the body's index), one
        dict {field: array} for all bodies, or N dicts; each array float64
        shaped as the controller's field (e.g. "w1": (hidden, inputs)).
      steps: states per rollout, T (default world.steps).
      iterations: 0: one forward and backward pass; K > 0: K learning
        iterations first, with the experiment's optimiser.
      trajectory: also return the point positions at every step.
      point_grads: also d loss / d the initial positions (iterations = 0).
      body_grads: also d loss / d the springs' rest lengths, stiffness and
        actuation (iterations = 0; compiles the experiment once more).
      threads: worker threads (0: one per core).

    Returns:
      SimResult with
        losses: (N,) float64 (NaN for an invalid body; see valid, errors);
        grads: N dicts {field: array shaped as the field}, d loss / d param;
        params / best_params: N dicts, the weights after the last update /
          of the lowest loss (the weights used, when iterations = 0);
        curves: N arrays (max(1, K) + (K > 0),), the loss of every pass;
        trajectory: with trajectory=True, N arrays (T, P, dim);
        point_grads: with point_grads=True, N arrays (P, dim): d loss / d
          initial positions (the points after the lift onto the ground);
        body_grads: with body_grads=True, N dicts {"spring.rest": (S,),
          "spring.stiffness": (S,), "spring.actuation": (S,), ...}.
      Equal bit for bit to ``evoc sim FILE --robots R.json`` on the same
      bodies and weights.

    Raises:
      TypeError / ValueError: bodies or params of the wrong type, shape, or
        with NaN; evoc.EvocError: parameters that do not fit the controller."""
    return experiment.simulate(bodies, params, **kw)


def train(experiment: Experiment, body: Body, params: Optional[Params] = None, **kw) -> dict:
    """Learn one body's controller: ``experiment.train(body, params, iterations=, steps=)``."""
    return experiment.train(body, params, **kw)


def run(experiment: Experiment, out: Optional[str] = None, **kw) -> Run:
    """Evolve: ``experiment.run(out=DIR | resume=DIR, threads=, progress=)``."""
    return experiment.run(out, **kw)


__all__ += ["simulate", "train", "run"]
