"""From per-design records to the study's numbers (docs/science.md, "Statistics").

Every number is a row of one table (summary.csv): per generation the mean
of each measure with its bootstrap interval, per condition the trend tests,
and per generation and overall the difference from the reference condition.
"""

import math
import random

import stats

# fitness is no measure of differentiability; it is here so that a rise in
# learning_gain can be read against it (with fitness = max(-loss),
# learning_gain = fitness + loss[0]: selecting on one selects on the other).
# springs, the body's size, likewise. MEASURE_adj is what is left of a
# measure once fitness and size are accounted for (adjust): a trend in it, or
# a difference between conditions, is one that fitness and size do not
# explain.
ADJUSTED = ("learning_gain", "monotonicity", "grad_norm_cv")
SCOPE_MEASURES = {
    "population": ("learning_gain", "monotonicity", "grad_norm_cv", "fitness", "springs")
    + tuple(m + "_adj" for m in ADJUSTED),
    "offspring": ("learning_gain", "monotonicity", "grad_norm_cv", "fitness"),
}
# The family that Holm's adjustment (p_holm) covers, fixed before looking:
# the sign-flip tests (trend per condition, slope difference from the
# reference) of the differentiability measures, raw and adjusted, in the
# population scope. Other rows are descriptive and carry no p_holm.
HOLM_KINDS = ("trend_slope_sign_flip", "slope_difference_sign_flip")
HOLM_MEASURES = ADJUSTED + tuple(m + "_adj" for m in ADJUSTED)
COLUMNS = (
    "kind",
    "condition",
    "versus",
    "scope",
    "measure",
    "generation",
    "n_seeds",
    "n_designs",
    "estimate",
    "ci_low",
    "ci_high",
    "statistic",
    "z",
    "p",
    "p_holm",
)


def _row(**kw):
    row = {c: "" for c in COLUMNS}
    row.update(kw)
    return row


def _rng(*key):
    # One stream per number, seeded by its name, so that a number does not
    # change when another condition or measure is added.
    return random.Random("/".join(str(k) for k in key))


def adjust(records, scope="population", covariates=("fitness", "springs")):
    """Adds MEASURE_adj to every record of `scope`: the residual of MEASURE
    on the covariates, one least-squares fit over every condition, seed and
    generation together (so no condition's trend is fitted away). Returns
    {measure: coefficients or None}; a record without every value gets NaN."""
    fits = {}
    for measure in ADJUSTED:
        rows = [
            r
            for r in records
            if r["scope"] == scope
            and all(
                r.get(k) is not None and math.isfinite(r[k]) for k in (measure,) + covariates
            )
        ]
        fit = stats.ols_fit([r[measure] for r in rows], [[r[k] for r in rows] for k in covariates])
        fits[measure] = fit[0] if fit else None
        for r in records:
            if r["scope"] == scope:
                r[measure + "_adj"] = math.nan
        if fit:
            for r, e in zip(rows, fit[1]):
                r[measure + "_adj"] = e
    return fits


def group(records):
    """{(condition, scope, measure): {generation: {seed: [values]}}}, finite only."""
    cells = {}
    for r in records:
        for measure in SCOPE_MEASURES[r["scope"]]:
            v = r.get(measure)
            if v is None or not math.isfinite(v):
                continue
            key = (r["condition"], r["scope"], measure)
            cells.setdefault(key, {}).setdefault(r["generation"], {}).setdefault(
                r["seed"], []
            ).append(v)
    return cells


def seed_series(cell, seeds, generations):
    """Per seed, (generations, per-generation means) where the seed has data."""
    out = []
    for s in seeds:
        xs = [g for g in range(generations) if cell.get(g, {}).get(s)]
        out.append((xs, [stats.mean(cell[g][s]) for g in xs]))
    return out


def analyse(records, conditions, seeds, generations, resamples=1000, permutations=2000):
    """Rows of summary.csv; conditions[0] is the reference for differences."""
    adjust(records)
    cells = group(records)
    rows = []
    for scope, measures in SCOPE_MEASURES.items():
        for measure in measures:
            slopes = {}
            for cond in conditions:
                cell = cells.get((cond, scope, measure), {})
                for g in range(generations):
                    groups = [cell.get(g, {}).get(s, []) for s in seeds]
                    est, lo, hi = stats.bootstrap_ci(
                        groups, _rng("mean", cond, scope, measure, g), resamples
                    )
                    rows.append(
                        _row(
                            kind="mean",
                            condition=cond,
                            scope=scope,
                            measure=measure,
                            generation=g,
                            n_seeds=sum(1 for x in groups if x),
                            n_designs=sum(len(x) for x in groups),
                            estimate=est,
                            ci_low=lo,
                            ci_high=hi,
                        )
                    )
                series = seed_series(cell, seeds, generations)
                slopes[cond] = [
                    stats.ols_slope(xs, ys) if len(xs) >= 2 else math.nan for xs, ys in series
                ]
                rows += _trend_rows(cond, scope, measure, series, slopes[cond], permutations)
            ref = conditions[0]
            for cond in conditions[1:]:
                rows += _difference_rows(
                    cells, cond, ref, scope, measure, seeds, generations, resamples, slopes
                )
    family = [
        r
        for r in rows
        if r["kind"] in HOLM_KINDS and r["scope"] == "population" and r["measure"] in HOLM_MEASURES
    ]
    for r, p in zip(family, stats.holm([r["p"] for r in family])):
        r["p_holm"] = p
    return rows


def _trend_rows(cond, scope, measure, series, slopes, permutations):
    common = {"condition": cond, "scope": scope, "measure": measure}
    n_seeds = sum(1 for xs, _ in series if len(xs) >= 2)
    mk = stats.mann_kendall([ys for _, ys in series])
    pairs = sum(len(ys) * (len(ys) - 1) // 2 for _, ys in series)
    slope, p_perm = stats.slope_permutation_test(
        series, _rng("perm", cond, scope, measure), permutations
    )
    flip_mean, p_flip = stats.sign_flip_test(slopes, _rng("flip", cond, scope, measure))
    return [
        _row(
            kind="trend_mann_kendall",
            n_seeds=n_seeds,
            estimate=mk["s"] / pairs if pairs else math.nan,  # Kendall's tau-a, pooled
            statistic=mk["s"],
            z=mk["z"],
            p=mk["p"],
            **common,
        ),
        _row(kind="trend_slope_permutation", n_seeds=n_seeds, estimate=slope, p=p_perm, **common),
        _row(
            kind="trend_slope_sign_flip",
            n_seeds=len(stats.finite(slopes)),
            estimate=flip_mean,
            statistic=sum(1 for b in stats.finite(slopes) if b > 0),  # seeds rising
            p=p_flip,
            **common,
        ),
    ]


def _difference_rows(cells, cond, ref, scope, measure, seeds, generations, resamples, slopes):
    common = {"condition": cond, "versus": ref, "scope": scope, "measure": measure}
    a = cells.get((cond, scope, measure), {})
    b = cells.get((ref, scope, measure), {})
    rows = []
    for g in range(generations):
        ga = [a.get(g, {}).get(s, []) for s in seeds]
        gb = [b.get(g, {}).get(s, []) for s in seeds]
        est, lo, hi = stats.bootstrap_diff_ci(
            ga, gb, _rng("diff", cond, ref, scope, measure, g), resamples
        )
        rows.append(
            _row(
                kind="difference",
                generation=g,
                n_seeds=sum(1 for x, y in zip(ga, gb) if x and y),
                n_designs=sum(len(x) + len(y) for x, y in zip(ga, gb)),
                estimate=est,
                ci_low=lo,
                ci_high=hi,
                **common,
            )
        )
    # Paired by seed: the same seed starts both conditions from the same bodies.
    diffs = [x - y for x, y in zip(slopes[cond], slopes[ref])]
    est, p = stats.sign_flip_test(diffs, _rng("slopediff", cond, ref, scope, measure))
    rows.append(
        _row(
            kind="slope_difference_sign_flip",
            n_seeds=len(stats.finite(diffs)),
            estimate=est,
            statistic=sum(1 for d in stats.finite(diffs) if d > 0),
            p=p,
            **common,
        )
    )
    return rows
