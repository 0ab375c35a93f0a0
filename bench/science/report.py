"""The study's page: one self-contained HTML file with inline SVG plots."""

import html
import math

from analyse import SCOPE_MEASURES

COLOURS = {"selected": "#c0392b", "drift": "#2471a3", "random": "#7f8c8d"}
EXTRA_COLOURS = ("#27ae60", "#8e44ad", "#d68910")
TITLES = {
    "learning_gain": "learning gain: loss[0] - min(loss) (higher: learning bought more)",
    "monotonicity": "monotonicity: share of iterations whose loss fell (higher: steadier)",
    "grad_norm_cv": "gradient-norm CV: std / mean of |grad| (lower: more even)",
    "fitness": "fitness, for reference (not a measure of differentiability)",
    "springs": "body size: springs, for reference (a covariate)",
    "learning_gain_adj": "learning gain beyond fitness and size: residual of one least-squares fit",
    "monotonicity_adj": "monotonicity beyond fitness and size: residual of one least-squares fit",
    "grad_norm_cv_adj": "gradient-norm CV beyond fitness and size: residual of one fit",
}
SCOPES = {
    "population": "population after selection (what evoc's log summarises)",
    "offspring": "children trained in the generation (before selection)",
}


def _num(x, digits=4):
    if x == "" or x is None:
        return ""
    if isinstance(x, int):
        return str(x)
    if not math.isfinite(x):
        return "n/a"
    return f"{x:.{digits}g}"


def _colour(cond, conditions):
    if cond in COLOURS:
        return COLOURS[cond]
    return EXTRA_COLOURS[conditions.index(cond) % len(EXTRA_COLOURS)]


def _ticks(lo, hi, count=5):
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 5, 10) if m * mag >= raw), default=raw)
    first = math.ceil(lo / step) * step
    out = []
    t = first
    while t <= hi + 1e-12 * abs(hi):
        out.append(t)
        t += step
    return out


def plot_svg(rows, scope, measure, conditions, generations, width=560, height=300):
    """Mean and 95% band per generation, one line per condition."""
    means = [r for r in rows if r["kind"] == "mean" and r["scope"] == scope]
    means = [r for r in means if r["measure"] == measure]
    vals = [
        v
        for r in means
        for v in (r["estimate"], r["ci_low"], r["ci_high"])
        if isinstance(v, float) and math.isfinite(v)
    ]
    left, right, top, bottom = 64, 120, 16, 40
    pw, ph = width - left - right, height - top - bottom
    if not vals:
        return f'<svg width="{width}" height="40"><text x="8" y="24">no data</text></svg>'
    lo, hi = min(vals), max(vals)
    pad = (hi - lo) * 0.05 or abs(hi) * 0.05 or 1.0
    lo, hi = lo - pad, hi + pad

    def sx(g):
        return left + (pw * g / max(1, generations - 1))

    def sy(v):
        return top + ph * (1 - (v - lo) / (hi - lo))

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="11">',
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#bbb"/>',
    ]
    for t in _ticks(lo, hi):
        y = sy(t)
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{t:.3g}</text>')
    step = max(1, math.ceil(generations / 12))
    for g in range(0, generations, step):
        x = sx(g)
        out.append(
            f'<text x="{x:.1f}" y="{top + ph + 14}" text-anchor="middle">{g}</text>'
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top + ph}" y2="{top + ph + 3}" stroke="#888"/>'
        )
    out.append(
        f'<text x="{left + pw / 2:.1f}" y="{height - 6}" text-anchor="middle">generation</text>'
    )
    for k, cond in enumerate(conditions):
        pts = sorted(
            (r["generation"], r["estimate"], r["ci_low"], r["ci_high"])
            for r in means
            if r["condition"] == cond and math.isfinite(r["estimate"])
        )
        if not pts:
            continue
        colour = _colour(cond, conditions)
        band = [(sx(g), sy(h)) for g, _, _, h in pts]
        band += [(sx(g), sy(lw)) for g, _, lw, _ in pts[::-1]]
        out.append(
            '<polygon points="'
            + " ".join(f"{x:.1f},{y:.1f}" for x, y in band)
            + f'" fill="{colour}" fill-opacity="0.15" stroke="none"/>'
        )
        line = " ".join(f"{sx(g):.1f},{sy(m):.1f}" for g, m, _, _ in pts)
        out.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for g, m, _, _ in pts:
            out.append(f'<circle cx="{sx(g):.1f}" cy="{sy(m):.1f}" r="2.5" fill="{colour}"/>')
        ly = top + 14 + 18 * k
        out.append(
            f'<line x1="{left + pw + 10}" x2="{left + pw + 28}" y1="{ly - 4}" y2="{ly - 4}" '
            f'stroke="{colour}" stroke-width="3"/>'
            f'<text x="{left + pw + 32}" y="{ly}">{html.escape(cond)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def _tests_table(rows, scope, measure, conditions):
    pick = [r for r in rows if r["scope"] == scope and r["measure"] == measure]

    def one(kind, cond):
        for r in pick:
            if r["kind"] == kind and r["condition"] == cond:
                return r
        return None

    head = (
        "<tr><th>condition</th><th>Kendall tau (pooled)</th><th>MK z</th><th>MK p</th>"
        "<th>slope / generation</th><th>permutation p</th><th>seeds rising</th>"
        "<th>sign-flip p</th><th>Holm</th><th>slope minus "
        + html.escape(conditions[0])
        + "</th><th>paired sign-flip p</th><th>Holm</th></tr>"
    )
    body = []
    for cond in conditions:
        mk, perm, flip = (
            one("trend_mann_kendall", cond),
            one("trend_slope_permutation", cond),
            one("trend_slope_sign_flip", cond),
        )
        diff = one("slope_difference_sign_flip", cond)
        if not mk:
            continue
        cells = [
            html.escape(cond),
            _num(mk["estimate"], 3),
            _num(mk["z"], 3),
            _num(mk["p"], 3),
            _num(perm["estimate"], 3),
            _num(perm["p"], 3),
            f"{flip['statistic']} of {flip['n_seeds']}",
            _num(flip["p"], 3),
            _num(flip["p_holm"], 3),
            _num(diff["estimate"], 3) if diff else "",
            _num(diff["p"], 3) if diff else "",
            _num(diff["p_holm"], 3) if diff else "",
        ]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return "<table>" + head + "".join(body) + "</table>"


TABLE_MEASURES = (
    "learning_gain",
    "monotonicity",
    "grad_norm_cv",
    "fitness",
    "springs",
    "learning_gain_adj",
    "monotonicity_adj",
    "grad_norm_cv_adj",
)


def _md(x):
    if x == "" or x is None or not math.isfinite(x):
        return ""
    return f"{x:.1e}" if 0 < abs(x) < 0.01 else f"{x:.3f}"


def markdown_table(rows, conditions, generations, scope="population"):
    """One Markdown table of the population's measures (docs/science.md).

    Per measure and condition: the mean at the first and last generation
    (with its 95% interval), Mann-Kendall's pooled z, the seeds' sign-flip
    p with its Holm adjustment, and the paired p of the slope difference
    from the reference condition with its Holm adjustment.
    """
    last = generations - 1

    def one(kind, cond, measure, generation=""):
        for r in rows:
            if (
                r["kind"] == kind
                and r["condition"] == cond
                and r["scope"] == scope
                and r["measure"] == measure
                and r["generation"] == generation
            ):
                return r
        return None

    out = [
        f"| measure | condition | gen 0 | gen {last} [95% CI] | MK z | sign-flip p | Holm "
        f"| minus {conditions[0]}: paired p | Holm |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for measure in TABLE_MEASURES:
        for cond in conditions:
            first, end = one("mean", cond, measure, 0), one("mean", cond, measure, last)
            mk = one("trend_mann_kendall", cond, measure)
            flip = one("trend_slope_sign_flip", cond, measure)
            if not (first and end and mk and flip):
                continue
            diff = one("slope_difference_sign_flip", cond, measure)
            z = mk["z"]
            cells = [
                measure,
                cond,
                _md(first["estimate"]),
                f"{_md(end['estimate'])} [{_md(end['ci_low'])}, {_md(end['ci_high'])}]",
                f"{z:+.1f}" if math.isfinite(z) else "",
                _num(flip["p"], 3),
                _num(flip["p_holm"], 2),
                _num(diff["p"], 3) if diff else "",
                _num(diff["p_holm"], 2) if diff else "",
            ]
            out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def page(rows, meta):
    """The HTML page: settings, then per scope and measure a plot and its tests."""
    conditions, generations = meta["conditions"], meta["generations"]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<title>evoc: do evolved bodies become more differentiable?</title>",
        "<style>body{font-family:sans-serif;max-width:980px;margin:1em auto;color:#222}"
        "table{border-collapse:collapse;font-size:12px;margin:4px 0 18px}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
        "th{background:#f4f4f4}code{background:#f4f4f4;padding:1px 3px}</style>",
        "</head><body>",
        "<h1>Do evolved bodies become more differentiable?</h1>",
        "<p>Means over seeds (each seed's mean over its designs) with two-level "
        "bootstrap 95% bands; trend tests over generations; see docs/science.md.</p>",
        "<table>",
    ]
    for k, v in meta.items():
        if k == "runs":
            continue
        parts.append(f"<tr><th>{html.escape(str(k))}</th><td style='text-align:left'>")
        parts.append(html.escape(str(v)) + "</td></tr>")
    parts.append("</table>")
    for scope, measures in SCOPE_MEASURES.items():
        parts.append(f"<h2>{html.escape(SCOPES[scope])}</h2>")
        for measure in measures:
            parts.append(f"<h3>{html.escape(TITLES[measure])}</h3>")
            parts.append(plot_svg(rows, scope, measure, conditions, generations))
            parts.append(_tests_table(rows, scope, measure, conditions))
    parts.append("</body></html>")
    return "\n".join(parts)
