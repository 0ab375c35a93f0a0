"""Statistics for the differentiability study (docs/science.md, "Statistics").

Standard library only, deterministic: every resampling takes a
random.Random seeded by the caller. The unit of replication is the seed (an
independent run); designs within a seed and generation share ancestry, so
they are resampled inside their seed, never pooled across seeds as if
independent.
"""

import math


def mean(xs):
    """Arithmetic mean of a non-empty sequence."""
    return math.fsum(xs) / len(xs)


def finite(xs):
    """The finite numbers of xs (None and NaN dropped)."""
    return [x for x in xs if x is not None and math.isfinite(x)]


def percentile(sorted_xs, q):
    """The q-quantile (0 <= q <= 1) of sorted values, linear interpolation."""
    if not sorted_xs:
        return math.nan
    pos = q * (len(sorted_xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (pos - lo) * (sorted_xs[hi] - sorted_xs[lo])


def mean_of_means(groups):
    """Mean over groups (seeds) of each group's mean; empty groups skipped."""
    means = [mean(g) for g in groups if g]
    return mean(means) if means else math.nan


def bootstrap_ci(groups, rng, resamples=1000, level=0.95):
    """Two-level percentile bootstrap of mean_of_means(groups).

    Seeds are drawn with replacement, then the designs of each drawn seed
    with replacement. Returns (estimate, low, high); (nan, nan, nan) without
    data. With one seed only the designs vary, so the interval then speaks
    for that run alone.
    """
    groups = [g for g in groups if g]
    if not groups:
        return math.nan, math.nan, math.nan
    est = mean_of_means(groups)
    stats = []
    n = len(groups)
    for _ in range(resamples):
        picked = rng.choices(groups, k=n)
        stats.append(mean([mean(rng.choices(g, k=len(g))) for g in picked]))
    stats.sort()
    alpha = (1 - level) / 2
    return est, percentile(stats, alpha), percentile(stats, 1 - alpha)


def bootstrap_diff_ci(groups_a, groups_b, rng, resamples=1000, level=0.95):
    """Bootstrap interval of mean_of_means(a) - mean_of_means(b).

    The conditions ran on the same seeds, so when both have the same seeds
    (groups aligned by index, both non-empty) seeds are drawn as pairs;
    otherwise each side is resampled on its own.
    """
    pairs = [(a, b) for a, b in zip(groups_a, groups_b) if a and b]
    paired = len(pairs) == len(groups_a) == len(groups_b) and pairs
    ga = [g for g in groups_a if g]
    gb = [g for g in groups_b if g]
    if not ga or not gb:
        return math.nan, math.nan, math.nan
    est = mean_of_means(ga) - mean_of_means(gb)
    stats = []
    for _ in range(resamples):
        if paired:
            picked = rng.choices(pairs, k=len(pairs))
            sa = [a for a, _ in picked]
            sb = [b for _, b in picked]
        else:
            sa = rng.choices(ga, k=len(ga))
            sb = rng.choices(gb, k=len(gb))
        ma = mean([mean(rng.choices(g, k=len(g))) for g in sa])
        mb = mean([mean(rng.choices(g, k=len(g))) for g in sb])
        stats.append(ma - mb)
    stats.sort()
    alpha = (1 - level) / 2
    return est, percentile(stats, alpha), percentile(stats, 1 - alpha)


def normal_two_sided_p(z):
    """P(|Z| >= |z|) for a standard normal Z."""
    return math.erfc(abs(z) / math.sqrt(2))


def mann_kendall_s(xs):
    """Kendall's S of a series against its order, and Var(S) under H0.

    S = sum over i < j of sign(x_j - x_i). The variance is corrected for
    ties: (n(n-1)(2n+5) - sum_t t(t-1)(2t+5)) / 18, t the size of each
    group of equal values.
    """
    n = len(xs)
    s = 0
    for i in range(n):
        for j in range(i + 1, n):
            d = xs[j] - xs[i]
            s += (d > 0) - (d < 0)
    counts = {}
    for x in xs:
        counts[x] = counts.get(x, 0) + 1
    ties = sum(t * (t - 1) * (2 * t + 5) for t in counts.values())
    var = (n * (n - 1) * (2 * n + 5) - ties) / 18.0
    return s, var


def mann_kendall(series):
    """Mann-Kendall trend test over one or several independent series.

    `series` is a list of series (one per seed; each in generation order).
    S and Var(S) add over series (the regional Kendall test), so several
    short runs pool their evidence. Returns a dict with s, var, z (with the
    continuity correction) and p (two-sided, normal approximation). The test
    assumes the values of a series are independent under H0; a population
    carried from generation to generation is autocorrelated, which makes p
    too small (docs/science.md, "Statistics").
    """
    s_total, var_total = 0, 0.0
    for xs in series:
        if len(xs) >= 2:
            s, var = mann_kendall_s(xs)
            s_total += s
            var_total += var
    if var_total <= 0:
        return {"s": s_total, "var": var_total, "z": math.nan, "p": math.nan}
    if s_total > 0:
        z = (s_total - 1) / math.sqrt(var_total)
    elif s_total < 0:
        z = (s_total + 1) / math.sqrt(var_total)
    else:
        z = 0.0
    return {"s": s_total, "var": var_total, "z": z, "p": normal_two_sided_p(z)}


def ols_slope(xs, ys):
    """Least-squares slope of ys on xs (nan when xs do not vary)."""
    mx, my = mean(xs), mean(ys)
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return math.nan
    return math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def ols_fit(ys, columns):
    """Least squares of ys on an intercept and the predictor columns.

    Returns (coefficients, residuals): coefficients[0] is the intercept,
    coefficients[k] that of columns[k - 1]; solved by Gaussian elimination
    with partial pivoting on the normal equations of the centred
    predictors. None when a predictor does not vary or two are collinear.
    """
    n, k = len(ys), len(columns)
    if n <= k + 1 or any(len(c) != n for c in columns):
        return None
    means = [mean(c) for c in columns]
    my = mean(ys)
    xc = [[c[i] - m for i in range(n)] for c, m in zip(columns, means)]
    yc = [y - my for y in ys]
    a = [[math.fsum(xc[r][i] * xc[c][i] for i in range(n)) for c in range(k)] for r in range(k)]
    b = [math.fsum(xc[r][i] * yc[i] for i in range(n)) for r in range(k)]
    scale = max((abs(a[r][r]) for r in range(k)), default=0.0)
    for col in range(k):  # forward elimination
        piv = max(range(col, k), key=lambda r: abs(a[r][col]))
        if abs(a[piv][col]) <= 1e-12 * scale:
            return None
        a[col], a[piv], b[col], b[piv] = a[piv], a[col], b[piv], b[col]
        for r in range(col + 1, k):
            f = a[r][col] / a[col][col]
            for c in range(col, k):
                a[r][c] -= f * a[col][c]
            b[r] -= f * b[col]
    beta = [0.0] * k
    for r in reversed(range(k)):
        beta[r] = (b[r] - math.fsum(a[r][c] * beta[c] for c in range(r + 1, k))) / a[r][r]
    intercept = my - math.fsum(bj * m for bj, m in zip(beta, means))
    residuals = [
        ys[i] - intercept - math.fsum(beta[j] * columns[j][i] for j in range(k)) for i in range(n)
    ]
    return [intercept] + beta, residuals


def mean_slope(series):
    """Mean over series of each series' least-squares slope.

    `series` is a list of (xs, ys) pairs (a seed's generations and values).
    """
    slopes = [ols_slope(xs, ys) for xs, ys in series if len(xs) >= 2]
    slopes = [b for b in slopes if math.isfinite(b)]
    return mean(slopes) if slopes else math.nan


def slope_permutation_test(series, rng, permutations=2000):
    """Permutation test of the mean slope: values shuffled over generations.

    `series` as for mean_slope. Under H0 (no trend, the values of a series
    exchangeable over its generations) every order is equally likely.
    Returns (mean slope, two-sided p), p with the +1 correction (never 0).
    """
    observed = mean_slope(series)
    if not math.isfinite(observed):
        return observed, math.nan
    tol = 1e-12 * max(1.0, abs(observed))
    hits = 0
    work = [(list(xs), list(ys)) for xs, ys in series]
    for _ in range(permutations):
        for _, ys in work:
            rng.shuffle(ys)
        hits += abs(mean_slope(work)) >= abs(observed) - tol
    return observed, (hits + 1) / (permutations + 1)


def sign_flip_test(values, rng, resamples=20000):
    """Test that values (one per seed) are centred on 0: their signs flipped.

    Exact (every sign pattern) for up to 16 values, Monte Carlo beyond.
    Valid however each value arose (a slope of an autocorrelated series is
    fine), but coarse with few seeds: the smallest p is 2 / 2^n. Returns
    (mean, two-sided p).
    """
    values = finite(values)
    n = len(values)
    if n == 0:
        return math.nan, math.nan
    observed = mean(values)
    tol = 1e-12 * max(1.0, abs(observed))
    if n <= 16:
        hits = 0
        for mask in range(1 << n):
            m = mean([-v if mask >> i & 1 else v for i, v in enumerate(values)])
            hits += abs(m) >= abs(observed) - tol
        return observed, hits / (1 << n)
    hits = 0
    for _ in range(resamples):
        m = mean([v if rng.random() < 0.5 else -v for v in values])
        hits += abs(m) >= abs(observed) - tol
    return observed, (hits + 1) / (resamples + 1)


def holm(ps):
    """Holm's step-down adjustment of a family of p-values (same order back).

    Controls the family-wise error rate under any dependence between the
    tests. NaN entries are no tests: they stay NaN and do not count in the
    family's size.
    """
    order = sorted((p, i) for i, p in enumerate(ps) if p == p)
    out = [math.nan] * len(ps)
    m, running = len(order), 0.0
    for k, (p, i) in enumerate(order):
        running = max(running, min(1.0, (m - k) * p))
        out[i] = running
    return out
