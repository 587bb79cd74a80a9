"""The standalone HTML report: one file, all CSS and JavaScript inline, the report documents embedded once.

The page template, style sheet and script live next to this module in `page/` (package data, shipped in
the wheel). The documents are exactly what `--json` writes, so the page and the JSON cannot disagree;
the script draws each one with the view registered for its `command`. Nothing is fetched: the page works
from file:// on a machine with no network, and its Content-Security-Policy forbids any request and runs
only the page's own script and style sheet, named by their SHA-256 hashes.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from importlib import resources

from attn_cli.version import __version__
from attn_cli.render.json_out import dumps

_PLACEHOLDER = re.compile(r"@@(CSS|JS|STYLE_HASH|SCRIPT_HASH|DATA|TITLE|VERSION)@@")


def html_page(documents: list[dict], command_line: str, spelling: str = "options") -> str:
    """The whole page for these report documents, written by `command_line` (a shell command, or a Python call
    with `spelling` "keywords": settings in the page are then spelt as keyword arguments)."""
    page = resources.files("attn_cli.render") / "page"
    css, js = (page / "report.css").read_text(encoding="utf-8"), (page / "report.js").read_text(encoding="utf-8")
    parts = {
        "CSS": css,
        "JS": js,
        "STYLE_HASH": content_hash(css),
        "SCRIPT_HASH": content_hash(js),
        "DATA": embedded_json({"command_line": command_line, "spelling": spelling, "documents": documents}),
        "TITLE": html.escape(page_title(documents)),
        "VERSION": __version__,
    }
    template = (page / "report.html").read_text(encoding="utf-8")
    return _PLACEHOLDER.sub(lambda match: parts[match.group(1)], template)  # one pass: data is never rescanned


def content_hash(text: str) -> str:
    """The Content-Security-Policy source for exactly this inline text: 'sha256-<base64>' without the quotes.

    The page allows its own style sheet and script by hash, nothing inline besides: a handler such as
    onerror="..." smuggled into the page would not run even if escaping failed.
    """
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def embedded_json(value: dict) -> str:
    """JSON safe inside <script>: every '<' escaped, so no sentence can close the element or open a comment."""
    return dumps(value).replace("<", "\\u003c")


def page_title(documents: list[dict]) -> str:
    first = documents[0]
    more = f" (+{len(documents) - 1} more)" if len(documents) > 1 else ""
    return f"attn-cli {first['command']}: {first.get('sentence', '')}{more}"
