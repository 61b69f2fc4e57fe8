"""Draw the house: the packages as layers, the tuner's rooms inside their layer, and an arrow for
each import between them, read from the code (`tests.test_imports.import_graph`), as an SVG.

    python3 scripts/draw_house.py            # writes docs/img/house.svg
    python3 scripts/draw_house.py --check    # exit 1 when the drawing is not the code's

The SVG lists its arrows in a comment (`<!-- edges: ... -->`), which the test suite compares
with the code's, so the drawing in docs/architecture.md cannot drift from the imports.
"""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.test_imports import import_graph  # noqa: E402

OUT = ROOT / "docs" / "img" / "house.svg"
LAYERS = [  # top to bottom: a layer imports only those below it
    ("dashboard", "the runs dashboard (wasp gui --runs): reads every tool's runs"),
    ("tuner", "the tuners (wasp-tune), one room a tool; a room imports another only "
              "through its face"),
    ("testing", "the match runner (wasp-match): engines, games, SPRT, run store"),
    ("wasp", "the engine (wasp): core, search, evaluation, nets, UCI and xboard; imports no "
             "tool"),
]
# each room's (row, column) in the tuner's layer: rows so that arrows between rooms point
# down, columns so that arrows from the dashboard pass between the boxes above
ROOM_AT = {"loop": (0, 0), "sets": (1, 0), "traces": (1, 2), "datagen": (1, 4), "nnue": (1, 6),
           "texel": (2, 1), "spsa": (2, 3), "formats": (2, 5)}
ROOMS = list(ROOM_AT)
W, BAND, GAP, ROOM_W, ROOM_H, ROW_GAP, SLOT = 980, 44, 44, 88, 34, 34, 110
LANES = 150  # the right margin, where the arrows between layers run


def node_of(module: str) -> str | None:
    """The drawn box a module belongs to: a tuner room, or its package."""
    parts = module.split(".")
    if parts[0] == "tuner" and len(parts) > 1 and (ROOT / "tuner" / parts[1]).is_dir():
        return f"tuner.{parts[1]}"
    return parts[0] if parts[0] in dict(LAYERS) else None


def edges() -> list[tuple[str, str]]:
    """(from, to) of every box that imports another, from the code's import graph."""
    found = set()
    for module, deps in import_graph().items():
        a = node_of(module)
        for dep in deps:
            b = node_of(dep)
            if a and b and a != b and not (b == "tuner" and a.startswith("tuner.")):
                found.add((a, b))
    # a room's import of another package is drawn from the tuner's layer
    return sorted({(a.split(".")[0] if b.split(".")[0] != "tuner" else a, b) for a, b in found})


def _boxes():
    rows = 1 + max(r for r, _ in ROOM_AT.values())
    heights = {name: BAND for name, _ in LAYERS}
    heights["tuner"] = 40 + rows * (ROOM_H + ROW_GAP)
    boxes, y = {}, 20
    for name, _ in LAYERS:
        boxes[name] = (20, y, W - 40, heights[name])
        y += heights[name] + GAP
    tx, ty, _, _ = boxes["tuner"]
    for room, (r, c) in ROOM_AT.items():
        boxes[f"tuner.{room}"] = (tx + 30 + c * SLOT, ty + 40 + r * (ROOM_H + ROW_GAP), ROOM_W,
                                  ROOM_H)
    return boxes, y - GAP + 20


def svg() -> str:
    es = edges()
    missing = sorted({b.split(".")[1] for e in es for b in e if b.startswith("tuner.")} -
                     set(ROOM_AT))
    if missing:
        raise SystemExit(f"a room with no place in the drawing: {missing} (add it to ROOM_AT)")
    boxes, height = _boxes()
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" '
           f'font-family="sans-serif" font-size="13">',
           "<!-- edges: " + " ".join(f"{a}>{b}" for a, b in es) + " -->",
           '<defs><marker id="a" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/>'
           "</marker></defs>"]
    for name, what in LAYERS:
        x, y, w, h = boxes[name]
        out.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="8" fill="#f4f6fa" '
                   f'stroke="#8a94a6"/>')
        out.append(f'<text x="{x + 12}" y="{y + 26}" font-weight="bold">{name}/</text>'
                   f'<text x="{x + 110}" y="{y + 26}" fill="#444">{what}</text>')
    for room in ROOMS:
        x, y, w, h = boxes[f"tuner.{room}"]
        out.append(f'<rect x="{x:.0f}" y="{y}" width="{w}" height="{h}" rx="5" fill="#ffffff" '
                   f'stroke="#4a6fa5"/><text x="{x + w / 2:.0f}" y="{y + 22}" '
                   f'text-anchor="middle">{room}</text>')
    order = [n for n, _ in LAYERS]
    down = [e for e in es if e[0] in order and e[1] in order]
    for a, b in es:
        ax, ay, aw, ah = boxes[a]
        bx, by, bw, bh = boxes[b]
        if a in order and b in order:  # layer to layer: down a lane of the right margin
            lane = W - 30 - LANES + 26 * down.index((a, b))
            out.append(f'<path d="M{lane},{ay + ah} L{lane},{by}" stroke="#555" fill="none" '
                       f'marker-end="url(#a)"/>')
            continue
        x1, y1, x2, y2 = ax + aw / 2, ay + ah, bx + bw / 2, by
        if a in order:  # a layer into a room: from above the room
            x1 = x2
        out.append(f'<path d="M{x1:.0f},{y1:.0f} L{x2:.0f},{y2:.0f}" stroke="#4a6fa5" '
                   f'fill="none" marker-end="url(#a)"/>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def drawn_edges(text: str) -> list[tuple[str, str]]:
    """The arrows an SVG written here lists in its comment."""
    line = next(ln for ln in text.splitlines() if ln.startswith("<!-- edges: "))
    return [tuple(e.split(">")) for e in line[len("<!-- edges: "):-len(" -->")].split()]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--check"]:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != svg():
            print(f"{OUT}: not the code's imports: run python3 scripts/draw_house.py",
                  file=sys.stderr)
            return 1
        return 0
    OUT.write_text(svg(), encoding="utf-8")
    print(f"{OUT}: {len(edges())} arrows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
