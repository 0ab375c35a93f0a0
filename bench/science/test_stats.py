#!/usr/bin/env python3
"""Tests of the study's statistics on synthetic data (ctest: science_stats).

Deterministic: every draw comes from a random.Random with a fixed seed.
Runs in a few seconds with the Python 3 standard library.
"""

import itertools
import math
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import analyse  # noqa: E402
import runs  # noqa: E402
import stats  # noqa: E402


def trend_series(rng, seeds, generations, slope, noise=1.0):
    """Per seed, (generations, values): slope * g + a seed offset + noise."""
    out = []
    for _ in range(seeds):
        offset = rng.gauss(0, 1)
        xs = list(range(generations))
        out.append((xs, [slope * g + offset + rng.gauss(0, noise) for g in xs]))
    return out


def null_detections(test, rng, draws=200):
    """How many of `draws` trendless series (3 seeds x 8 generations, from rng) `test`
    calls a trend at p < 0.05; `test` may draw from rng as well."""
    return sum(test(trend_series(rng, seeds=3, generations=8, slope=0.0)) < 0.05 for _ in range(draws))


class MannKendall(unittest.TestCase):
    def test_variance_matches_exact_null_without_ties(self):
        # Under H0 every order is equally likely: Var(S) over all 5! orders.
        ss = [stats.mann_kendall_s(list(p))[0] for p in itertools.permutations(range(5))]
        exact = sum(s * s for s in ss) / len(ss)  # E[S] = 0
        self.assertAlmostEqual(stats.mann_kendall_s([0, 1, 2, 3, 4])[1], exact, places=12)
        self.assertAlmostEqual(exact, 5 * 4 * 15 / 18, places=12)

    def test_tie_correction_matches_exact_null(self):
        values = [1, 1, 2, 3, 3, 3]
        orders = set(itertools.permutations(values))
        ss = [stats.mann_kendall_s(list(p))[0] for p in orders]
        exact = sum(s * s for s in ss) / len(ss)
        self.assertAlmostEqual(stats.mann_kendall_s(values)[1], exact, places=12)
        # (n(n-1)(2n+5) - sum t(t-1)(2t+5)) / 18 = (510 - 18 - 66) / 18
        self.assertAlmostEqual(exact, 426 / 18, places=12)

    def test_s_by_hand(self):
        self.assertEqual(stats.mann_kendall_s([1, 2, 2, 3])[0], 5)
        self.assertEqual(stats.mann_kendall_s([3, 2, 1])[0], -3)

    def test_known_trend_detected(self):
        series = trend_series(random.Random(1), seeds=5, generations=15, slope=0.15)
        mk = stats.mann_kendall([ys for _, ys in series])
        self.assertGreater(mk["z"], 0)
        self.assertLess(mk["p"], 0.01)

    def test_falling_trend_detected_with_sign(self):
        series = trend_series(random.Random(2), seeds=5, generations=15, slope=-0.15)
        mk = stats.mann_kendall([ys for _, ys in series])
        self.assertLess(mk["z"], 0)
        self.assertLess(mk["p"], 0.01)

    def test_no_trend_mostly_not_detected(self):
        hits = null_detections(lambda s: stats.mann_kendall([ys for _, ys in s])["p"], random.Random(3))
        # Nominal 5% (10 of 200); allow sampling slack, not a broken test.
        self.assertLessEqual(hits, 20, f"{hits} of 200 null draws detected")

    def test_constant_series_has_no_p(self):
        mk = stats.mann_kendall([[1.0, 1.0, 1.0]])
        self.assertEqual(mk["s"], 0)
        self.assertTrue(math.isnan(mk["p"]))


class Slopes(unittest.TestCase):
    def test_ols_slope(self):
        self.assertAlmostEqual(stats.ols_slope([0, 1, 2, 3], [1, 3, 5, 7]), 2.0)
        self.assertTrue(math.isnan(stats.ols_slope([1, 1], [0, 1])))

    def test_permutation_detects_trend(self):
        series = trend_series(random.Random(4), seeds=5, generations=15, slope=0.15)
        slope, p = stats.slope_permutation_test(series, random.Random(5), permutations=2000)
        self.assertGreater(slope, 0.05)
        self.assertLess(p, 0.01)

    def test_permutation_mostly_quiet_without_trend(self):
        rng = random.Random(6)
        hits = null_detections(lambda s: stats.slope_permutation_test(s, rng, permutations=200)[1], rng)
        self.assertLessEqual(hits, 20, f"{hits} of 200 null draws detected")

    def test_sign_flip_exact(self):
        # All 3 positive: only the all-plus and all-minus patterns are as extreme.
        self.assertAlmostEqual(stats.sign_flip_test([1.0, 2.0, 3.0], random.Random(0))[1], 0.25)
        slopes = [0.2, 0.1, 0.3, 0.15, 0.25, 0.05, 0.12, 0.22]
        self.assertAlmostEqual(stats.sign_flip_test(slopes, random.Random(0))[1], 2 / 256)
        self.assertEqual(stats.sign_flip_test([1.0, -1.0], random.Random(0))[1], 1.0)


class Bootstrap(unittest.TestCase):
    @staticmethod
    def draw(rng, true_mean, seeds=10, designs=16):
        # A seed effect (sd 0.5) and design noise (sd 1): the two levels.
        return [
            [true_mean + off + rng.gauss(0, 1) for _ in range(designs)]
            for off in (rng.gauss(0, 0.5) for _ in range(seeds))
        ]

    def test_interval_covers_true_mean(self):
        groups = self.draw(random.Random(7), 2.0)
        est, lo, hi = stats.bootstrap_ci(groups, random.Random(8), resamples=2000)
        self.assertLess(lo, est)
        self.assertLess(est, hi)
        self.assertLess(lo, 2.0)
        self.assertLess(2.0, hi)

    def test_coverage_near_nominal(self):
        rng = random.Random(9)
        draws = 100
        covered = 0
        for _ in range(draws):
            _, lo, hi = stats.bootstrap_ci(self.draw(rng, 2.0), rng, resamples=200)
            covered += lo <= 2.0 <= hi
        # A percentile bootstrap over 10 seeds covers a little under 95%.
        self.assertGreaterEqual(covered, 85, f"covered {covered} of {draws}")

    def test_difference_of_equal_conditions_covers_zero(self):
        groups = self.draw(random.Random(10), 1.0)
        est, lo, hi = stats.bootstrap_diff_ci(groups, groups, random.Random(11), resamples=1000)
        self.assertEqual(est, 0.0)
        self.assertLess(lo, 0.0)
        self.assertLess(0.0, hi)

    def test_difference_detected(self):
        rng = random.Random(12)
        a, b = self.draw(rng, 2.0), self.draw(rng, 0.0)
        _, lo, _ = stats.bootstrap_diff_ci(a, b, random.Random(13), resamples=1000)
        self.assertGreater(lo, 0.0)

    def test_empty(self):
        self.assertTrue(math.isnan(stats.bootstrap_ci([[], []], random.Random(0))[0]))


class Metrics(unittest.TestCase):
    def test_as_metrics_cpp(self):
        gain, mono = runs.learning_metrics([0.0, -1.0, -0.5, -2.0])
        self.assertEqual(gain, 2.0)
        self.assertAlmostEqual(mono, 2 / 3)
        gain, mono = runs.learning_metrics([-0.25])  # not trained: one loss
        self.assertEqual(gain, 0.0)
        self.assertTrue(math.isnan(mono))
        self.assertTrue(math.isnan(runs.learning_metrics([0.0, float("nan")])[0]))

    def test_curve_fitness_as_sema_normalises_it(self):
        curve = [0.5, 0.25, 0.375]
        self.assertEqual(runs.curve_fitness("max(-loss)", curve), -0.25)
        self.assertEqual(runs.curve_fitness("first(-loss)", curve), -0.5)
        self.assertEqual(runs.curve_fitness("last(-loss)", curve), -0.375)
        self.assertEqual(runs.curve_fitness("mean(-loss)", curve), -0.375)
        self.assertEqual(runs.curve_fitness("min(loss)", curve), -0.25)  # minimised
        self.assertTrue(math.isnan(runs.curve_fitness("max(-loss)", [0.5, float("inf")])))
        with self.assertRaises(ValueError):
            runs.curve_fitness("median(-loss)", curve)


class Holm(unittest.TestCase):
    def test_by_hand(self):
        # Sorted 0.01, 0.02, 0.04, 0.3 times 4, 3, 2, 1, then made monotone.
        got = stats.holm([0.04, 0.01, 0.3, 0.02])
        for g, want in zip(got, [0.08, 0.04, 0.3, 0.06]):
            self.assertAlmostEqual(g, want)

    def test_monotone_capped_and_nan_is_no_test(self):
        got = stats.holm([0.5, float("nan"), 0.001, 0.6])
        self.assertTrue(math.isnan(got[1]))
        self.assertAlmostEqual(got[2], 0.003)  # a family of 3, not 4
        self.assertEqual(got[0], 1.0)  # 2 x 0.5, capped
        self.assertEqual(got[3], 1.0)  # never below an earlier one

    def test_controls_family_wise_error_under_the_null(self):
        # 10 independent null p-values per family: P(any p_holm < 0.05) <= 0.05.
        rng = random.Random(21)
        families = 4000
        hits = sum(
            any(p < 0.05 for p in stats.holm([rng.random() for _ in range(10)]))
            for _ in range(families)
        )
        self.assertLess(hits / families, 0.06)
        self.assertGreater(hits / families, 0.03)  # and is not far too strict


class Analysis(unittest.TestCase):
    def test_trend_in_one_condition_only(self):
        rng = random.Random(14)
        records = []
        for cond, slope in (("selected", 0.02), ("drift", 0.0)):
            for seed in (1, 2, 3, 4, 5, 6, 7, 8):
                for g in range(10):
                    for i in range(8):
                        v = 0.5 + slope * g + rng.gauss(0, 0.05)
                        records.append(
                            {
                                "condition": cond,
                                "seed": seed,
                                "generation": g,
                                "scope": "offspring",
                                "learning_gain": v,
                                "monotonicity": 0.8,
                                "grad_norm_cv": math.nan,
                            }
                        )
        rows = analyse.analyse(
            records, ["selected", "drift"], list(range(1, 9)), 10, resamples=200, permutations=500
        )

        def get(kind, cond, measure="learning_gain"):
            (r,) = [
                r
                for r in rows
                if r["kind"] == kind
                and r["condition"] == cond
                and r["scope"] == "offspring"
                and r["measure"] == measure
            ]
            return r

        self.assertLess(get("trend_mann_kendall", "selected")["p"], 0.01)
        self.assertLess(get("trend_slope_permutation", "selected")["p"], 0.01)
        self.assertLess(get("trend_slope_sign_flip", "selected")["p"], 0.01)
        self.assertGreater(get("trend_mann_kendall", "drift")["p"], 0.05)
        diff = get("slope_difference_sign_flip", "drift")
        self.assertLess(diff["estimate"], 0)
        self.assertLess(diff["p"], 0.01)
        # Constant monotonicity: no trend can be computed, and none is claimed.
        self.assertTrue(math.isnan(get("trend_mann_kendall", "selected", "monotonicity")["p"]))
        last = [
            r
            for r in rows
            if r["kind"] == "mean" and r["condition"] == "selected" and r["generation"] == 9
        ]
        gain = [r for r in last if r["scope"] == "offspring" and r["measure"] == "learning_gain"]
        self.assertEqual(gain[0]["n_seeds"], 8)
        self.assertEqual(gain[0]["n_designs"], 64)
        self.assertLess(gain[0]["ci_low"], 0.68)
        self.assertGreater(gain[0]["ci_high"], 0.68)


class Covariates(unittest.TestCase):
    def test_ols_fit_recovers_coefficients(self):
        rng = random.Random(5)
        a = [rng.uniform(0, 10) for _ in range(400)]
        b = [rng.uniform(-3, 3) for _ in range(400)]
        y = [2 + 3 * x - 0.5 * z + rng.gauss(0, 0.01) for x, z in zip(a, b)]
        coef, res = stats.ols_fit(y, [a, b])
        self.assertAlmostEqual(coef[0], 2, delta=0.01)
        self.assertAlmostEqual(coef[1], 3, delta=0.001)
        self.assertAlmostEqual(coef[2], -0.5, delta=0.001)
        # Residuals are orthogonal to every predictor and sum to zero.
        self.assertAlmostEqual(math.fsum(res), 0, delta=1e-9)
        self.assertAlmostEqual(math.fsum(r * x for r, x in zip(res, a)), 0, delta=1e-8)
        self.assertAlmostEqual(math.fsum(r * x for r, x in zip(res, b)), 0, delta=1e-8)

    def test_ols_fit_refuses_collinear_or_constant(self):
        a = [float(i) for i in range(10)]
        self.assertIsNone(stats.ols_fit(a, [a, [2 * x for x in a]]))
        self.assertIsNone(stats.ols_fit(a, [[1.0] * 10]))

    def test_trend_explained_by_fitness_vanishes_when_adjusted(self):
        # learning_gain rises only because fitness does (gain = fitness +
        # noise): a strong raw trend, none once fitness and size are
        # accounted for. A measure that rises beyond them keeps its trend.
        rng = random.Random(11)
        records = []
        for cond, beyond in (("selected", 0.0), ("drift", 0.05)):
            for seed in range(1, 9):
                for g in range(12):
                    for i in range(6):
                        fitness = 0.1 * g + rng.gauss(0, 0.3)
                        springs = float(rng.randint(20, 60))
                        records.append(
                            {
                                "condition": cond,
                                "seed": seed,
                                "generation": g,
                                "scope": "population",
                                "id": i,
                                "born": g,
                                "fitness": fitness,
                                "springs": springs,
                                "learning_gain": fitness + 0.01 * springs + rng.gauss(0, 0.05),
                                "monotonicity": beyond * g + 0.2 * fitness + rng.gauss(0, 0.05),
                                "grad_norm_cv": rng.gauss(1, 0.1),
                            }
                        )
        rows = analyse.analyse(
            records, ["selected", "drift"], list(range(1, 9)), 12, resamples=100, permutations=300
        )

        def p(cond, measure):
            (r,) = [
                r
                for r in rows
                if r["kind"] == "trend_slope_sign_flip"
                and r["condition"] == cond
                and r["scope"] == "population"
                and r["measure"] == measure
            ]
            return r["p"]

        self.assertLess(p("selected", "learning_gain"), 0.01)
        self.assertGreater(p("selected", "learning_gain_adj"), 0.05)
        self.assertLess(p("drift", "monotonicity_adj"), 0.01)


if __name__ == "__main__":
    unittest.main()
