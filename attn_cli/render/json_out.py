"""JSON output: written straight to stdout, never through Rich, never with NaN.

Rich would read "[...]" as markup and wrap long lines; `allow_nan=False` makes
a NaN that slipped through an error instead of invalid JSON.
"""

from __future__ import annotations

import json
import sys
from typing import TextIO


def write_json(document: dict, stream: TextIO | None = None) -> None:
    """One JSON document and a newline, flushed so a pipe sees it at once."""
    stream = stream or sys.stdout
    stream.write(json.dumps(document, allow_nan=False, ensure_ascii=False))
    stream.write("\n")
    stream.flush()
