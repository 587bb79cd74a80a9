"""The standalone pages, one file each with CSS and JavaScript inline from `page/`. The Content-Security-Policy
forbids any request and runs only the page's own style and script (by hash): an injected handler would not run."""

from __future__ import annotations

import base64
import hashlib
import html
import re
from importlib import resources

from attn_cli.render.json_out import encode
from attn_cli.version import __version__

_PLACEHOLDER = re.compile(r"@@([A-Z_]+)@@")


def html_page(documents: list[dict], command_line: str, spelling: str = "options") -> str:
    """The documents as --json writes them, drawn by the script, so page and JSON cannot disagree."""
    more = f" (+{len(documents) - 1} more)" if len(documents) > 1 else ""
    data = encode({"command_line": command_line, "spelling": spelling, "documents": documents}).decode("utf-8")
    return filled_page("report", DATA=data.replace("<", "\\u003c"),  # no sentence can close <script> or open <!--
                       TITLE=html.escape(f"attn-cli {documents[0]['command']}: {documents[0].get('sentence', '')}"
                                         f"{more}"))


def filled_page(name: str, **parts: str) -> str:
    """page/<name>.html with its parts in place in one pass: the data put in is never rescanned for placeholders."""
    page = resources.files("attn_cli.render") / "page"
    css, js = ((page / f"{name}.{kind}").read_text(encoding="utf-8") for kind in ("css", "js"))
    parts.update(CSS=css, JS=js, STYLE_HASH=content_hash(css), SCRIPT_HASH=content_hash(js), VERSION=__version__)
    return _PLACEHOLDER.sub(lambda match: parts[match.group(1)], (page / f"{name}.html").read_text(encoding="utf-8"))


def content_hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def text(value: str) -> str:
    return html.escape(value, quote=False)


def paragraph(value: str) -> str:
    return f"<p>{text(value)}</p>"


def table(caption: str, header: list[str], rows: list[list[str | tuple[str, str, str]]]) -> str:
    """A bare <table>, nothing for a notebook viewer to strip; a cell (before, word, after) marks its word."""
    head = "".join(f"<th>{text(cell)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td>{_cell(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><caption>{text(caption)}</caption><tr>{head}</tr>{body}</table>"


def _cell(value: str | tuple[str, str, str]) -> str:
    if isinstance(value, str):
        return text(value)
    before, word, after = value
    return text(before) + (f"<mark>{text(word)}</mark>" if word else "") + text(after)
