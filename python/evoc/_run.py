"""Reading a run directory that ``evoc run`` wrote (docs/python.md).

A run directory holds log.jsonl (one record per generation), gen_NNNN/
population.json (each generation's population, best first, and its
offspring), best.json (the best robot with its trained weights) and
state.json (what a resume continues from)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Union


class Run:
    """A run directory, read lazily.

    generations: the log.jsonl records (a list of dicts, one per generation);
    population(g): generation g's members (dicts: id, parent, born, fitness,
    losses, genome, robot ...); best: best.json as a dict; best_body():
    the best robot as an evoc.Body; lineage(id): the chain of ancestors of a
    design, itself first; dataframe(): the generations as a pandas DataFrame."""

    def __init__(self, path: Union[str, os.PathLike]):
        self.path = Path(path)
        if not (self.path / "log.jsonl").exists() and not (self.path / "state.json").exists():
            raise FileNotFoundError(f"{self.path}: not a run directory (no log.jsonl or state.json)")

    @property
    def generations(self) -> List[Dict[str, Any]]:
        log = self.path / "log.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]

    @property
    def num_generations(self) -> int:
        return len(self.generations)

    def _generation_file(self, g: int) -> Path:
        f = self.path / f"gen_{g:04d}" / "population.json"
        if not f.exists():
            raise FileNotFoundError(f"{f}: no such generation in this run")
        return f

    def population(self, g: int = -1) -> List[Dict[str, Any]]:
        """Generation g's population (g = -1: the last), best first."""
        if g < 0:
            g += self.num_generations
        return json.loads(self._generation_file(g).read_text())["population"]

    def offspring(self, g: int) -> List[Dict[str, Any]]:
        """The members generation g produced (its children)."""
        return json.loads(self._generation_file(g).read_text()).get("offspring", [])

    @property
    def best(self) -> Dict[str, Any]:
        """best.json: the best design (id, fitness, losses, genome, points,
        springs, params)."""
        return json.loads((self.path / "best.json").read_text())

    def best_body(self):
        """The best robot as an evoc.Body, with its trained weights: (body, params)."""
        from . import bodies_from_json

        bodies, params = bodies_from_json(str(self.path / "best.json"))
        return bodies[0], (params[0] if params else None)

    def members(self) -> Dict[int, Dict[str, Any]]:
        """Every design seen in any generation's population or offspring, by id."""
        out: Dict[int, Dict[str, Any]] = {}
        for g in range(self.num_generations):
            try:
                doc = json.loads(self._generation_file(g).read_text())
            except FileNotFoundError:
                continue
            for m in doc.get("population", []) + doc.get("offspring", []):
                if isinstance(m, dict) and "id" in m:
                    out.setdefault(int(m["id"]), m)
        return out

    def lineage(self, design: Optional[int] = None) -> List[Dict[str, Any]]:
        """The ancestors of a design (default: the best), itself first, each
        {id, parent, born, fitness}; stops where a parent is unknown (-1)."""
        known = self.members()
        d = int(self.best["id"]) if design is None else int(design)
        chain = []
        while d in known and len(chain) <= len(known):
            m = known[d]
            chain.append({k: m.get(k) for k in ("id", "parent", "born", "fitness")})
            d = int(m.get("parent", -1))
        return chain

    def dataframe(self):
        """The generations as a pandas DataFrame (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.generations)

    def __repr__(self) -> str:
        return f"<evoc.Run {self.path} ({self.num_generations} generations)>"


def open_run(path: Union[str, os.PathLike]) -> Run:
    """Open a run directory written by ``evoc run`` (or ``Experiment.run``)."""
    return Run(path)
