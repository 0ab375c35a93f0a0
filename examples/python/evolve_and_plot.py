"""Load an experiment, evolve a few generations, plot fitness (docs/python.md).

    python examples/python/evolve_and_plot.py [--out runs/py_small] [--generations 4]

Run by the tests (python/tests/test_example.py) with a short horizon; the
figure goes to OUT/fitness_python.png (matplotlib's Agg back end, no window).
"""

# %% Imports: evoc, and matplotlib without a display.
import argparse
import shutil
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import evoc  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--out", default="runs/py_small")
ap.add_argument("--generations", type=int, default=4)
ap.add_argument("--steps", type=int, default=400)
ap.add_argument("--population", type=int, default=8)
ap.add_argument("--iterations", type=int, default=35)
args = ap.parse_args()

# %% Load the experiment: checked and compiled once; --set overrides as a dict.
exp = evoc.load(
    ROOT / "examples" / "eldir_small.evo",
    set={
        "world.steps": args.steps,
        "evolve.population": args.population,
        "evolve.generations": args.generations,
        "evolve.learn.iterations": args.iterations,
    },
)
print(f"loaded: {exp.body_kind} bodies, {exp.steps} steps")

# %% One body from the file's body model, its loss and gradient.
body = exp.sample(1)[0]
res = exp.simulate(body)
print(f"{body}: loss {res.losses[0]:.6f}, gradient fields {sorted(res.grads[0])}")

# %% Evolve (a fresh run directory each time: evoc never overwrites one).
out = Path(args.out)
if out.exists():
    shutil.rmtree(out)
run = exp.run(out=str(out), progress=lambda rec: print(f"generation {rec['generation']}: best {rec['best_fitness']:.4f}"))

# %% Plot fitness over generations.
gens = run.generations
x = [g["generation"] for g in gens]
fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(x, [g["fitness_max"] for g in gens], label="max")
ax.plot(x, [g["fitness_median"] for g in gens], label="median")
ax.plot(x, [g["fitness_min"] for g in gens], label="min")
ax.set_xlabel("generation")
ax.set_ylabel("fitness")
ax.legend()
fig.tight_layout()
png = out / "fitness_python.png"
fig.savefig(png)
print(f"best design {run.best['id']} (fitness {run.best['fitness']:.4f}); lineage {[m['id'] for m in run.lineage()]}")
print(f"figure: {png}")
