"""Writing a report file atomically: a temporary file in the same folder, then a rename."""

from __future__ import annotations

import os
from pathlib import Path


def write_text(path: Path, text: str) -> None:
    """Write `text` to `path` so that a reader never sees half a file; an OSError says why it could not."""
    import tempfile  # only when a file is written: it costs ~8 ms of start-up (random, hashlib)

    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # a file name that is not UTF-8 (shown in the page as lone surrogates) is written as \udcxx escapes
        with os.fdopen(handle, "w", encoding="utf-8", errors="backslashreplace") as stream:
            stream.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp makes it private; give it a normal file's mode
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
