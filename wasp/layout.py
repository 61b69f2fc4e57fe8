"""Offsets into flat arrays, declared in order: the one way the kernels' index constants are made.

Each declaration `X = layout.add(size)` gives the constant X the offset of `size` new slots
after everything declared before it, so the search data (`wasp.movepick`'s SD_*), the technique
switches (F_*), the search parameters (P_*) and the evaluation weights (`wasp.params`) are each
one list read top to bottom: inserting an entry moves the ones after it, and no offset is
written or kept in step by hand. The constants stay plain module-level ints, which numba folds
into the kernels.
"""


class Layout:
    """The blocks of one flat array in declaration order; `size` is the length so far and
    `entries` the objects given to `add` (a table's rows), in order."""

    def __init__(self, name: str):
        self.name = name
        self.size = 0
        self.entries = []

    def __repr__(self):
        return f"Layout({self.name!r}, size={self.size}, entries={len(self.entries)})"

    def add(self, size: int = 1, entry=None) -> int:
        """The offset of a new block of `size` slots (recording `entry`, when given)."""
        if size < 1:
            raise ValueError(f"{self.name}: a block of {size} slots")
        offset = self.size
        self.size += size
        if entry is not None:
            self.entries.append(entry)
        return offset
