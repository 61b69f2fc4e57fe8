"""A loop's plot: E of the training and validation sets per tuning pass, as a small SVG file.

Plain SVG text, so the plot needs no plotting library; any browser opens it.
"""

import math
from html import escape

WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 40, 50  # margins around the plotting area
SERIES = (("e_train", "training E", "#1f77b4"), ("e_valid", "validation E", "#d62728"))


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    step = (hi - lo) / (n - 1) if hi > lo else 1.0
    return [lo + i * step for i in range(n)]


def e_per_pass_svg(passes: list[dict], title: str, note: str = "") -> str:
    """The SVG text of E per pass; `passes` are passes.csv rows (pass, e_train, e_valid)."""
    series = [(key, label, colour) for key, label, colour in SERIES
              if all(math.isfinite(float(r[key])) for r in passes)]  # no validation: no line
    xs = [int(r["pass"]) for r in passes]
    ys = [float(r[key]) for r in passes for key, _, _ in series]
    lo, hi = min(ys), max(ys)
    pad = (hi - lo) * 0.08 or 1e-4
    lo, hi = lo - pad, hi + pad
    x_max = max(max(xs), 1)
    w, h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x):
        return LEFT + w * x / x_max

    def py(y):
        return TOP + h * (hi - y) / (hi - lo)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<text x="{LEFT}" y="20" font-size="14">{escape(title)}</text>',
           f'<rect x="{LEFT}" y="{TOP}" width="{w}" height="{h}" fill="none" stroke="#999"/>']
    for y in _ticks(lo, hi):
        out.append(f'<text x="{LEFT - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:.4f}</text>')
        out.append(f'<line x1="{LEFT}" x2="{LEFT + w}" y1="{py(y):.1f}" y2="{py(y):.1f}" '
                   f'stroke="#eee"/>')
    for x in xs:
        out.append(f'<text x="{px(x):.1f}" y="{TOP + h + 16}" text-anchor="middle">{x}</text>')
    out.append(f'<text x="{LEFT + w / 2}" y="{HEIGHT - 14}" text-anchor="middle">tuning pass '
               f'(0: the start)</text>')
    for i, (key, label, colour) in enumerate(series):
        points = " ".join(f"{px(int(r['pass'])):.1f},{py(float(r[key])):.1f}" for r in passes)
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" '
                   f'stroke-width="2"/>')
        for r in passes:
            out.append(f'<circle cx="{px(int(r["pass"])):.1f}" cy="{py(float(r[key])):.1f}" '
                       f'r="3" fill="{colour}"/>')
        out.append(f'<text x="{LEFT + w - 110}" y="{TOP + 18 + 16 * i}" fill="{colour}">'
                   f'{label}</text>')
    if note:
        out.append(f'<text x="{LEFT + 10}" y="{TOP + h - 10}">{escape(note)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
