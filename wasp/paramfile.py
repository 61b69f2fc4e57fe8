"""The text format of parameter files (EvalFile, SearchFile): one `name = value` a line, `#`
starts a comment, blank lines are skipped; and the finite numbers they (and SPSA's input) hold."""


def assignments(text: str):
    """(line number, name, value text) of each assignment; ValueError names a line that is
    not one, or a name given twice."""
    seen = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "=" not in line:
            raise ValueError(f"line {lineno}: expected 'name = value', got {raw.strip()!r}")
        name, value = (s.strip() for s in line.split("=", 1))
        key = name.lower()
        if key in seen:
            raise ValueError(f"line {lineno}: {name} given twice (also line {seen[key]})")
        seen[key] = lineno
        yield lineno, name, value


def read(path, parse):
    """`parse(text)` of the file at `path`; a ValueError it raises names the file too.
    (OSError, for a file that cannot be read, passes through.)"""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        return parse(text)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def finite_number(text) -> float:
    """The finite number `text` spells; ValueError saying "not a number" or "not finite" (the
    caller names the field and the file)."""
    try:
        x = float(text)
    except ValueError:
        raise ValueError("not a number") from None
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError("not finite")
    return x
