"""Files written whole or not at all: the content goes to a temporary file beside the target,
which then replaces it (`os.replace`), so a process killed mid-write never leaves half a file
where a reader or a resumed run would find it."""

import contextlib
import os


@contextlib.contextmanager
def replacing(path, suffix: str = ""):
    """Yield a temporary path beside `path` (ending in `suffix`: numpy's writers add ``.npy``
    or ``.npz`` to a name without it); when the block ends it replaces `path`, and on an error
    it is removed. Unique to the process, so concurrent writers do not share it."""
    tmp = f"{path}.{os.getpid()}.tmp{suffix}"
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def write_text(path, text: str, encoding: str = "utf-8") -> None:
    """Write `text` to `path` whole or not at all."""
    with replacing(path) as tmp, open(tmp, "w", encoding=encoding) as f:
        f.write(text)
