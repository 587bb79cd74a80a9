"""gensim-data names (glove-wiki-gigaword-100, ...): found offline, downloaded without running code.

A downloaded set lives where gensim's downloader puts it, `$GENSIM_DATA_DIR`
or `~/gensim-data`, as `<name>/<name>.gz`. We read that data file ourselves:
never the folder's `__init__.py` (gensim's downloader imports it: issue #2283),
never gensim. `download` fetches the release file named in gensim-data's
list.json over HTTPS into `.<name>-<pid>-<random>.part` beside the target,
checks its MD5 as list.json publishes it, and renames it into place only when
it matches (a killed download's .part is found and swept by leftovers.py).
Both addresses can be overridden with ATTN_CLI_GENSIM_DATA_LIST and
ATTN_CLI_GENSIM_DATA_URL (mirrors, tests).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from attn_cli.errors import VectorsError
from attn_cli.vectors.leftovers import DOWNLOAD, sweep as sweep_leftovers
from attn_cli.vectors.progress import progress_bar

LIST_URL = "https://raw.githubusercontent.com/RaRe-Technologies/gensim-data/master/list.json"
RELEASES_URL = "https://github.com/RaRe-Technologies/gensim-data/releases/download"
NAME = re.compile(r"^[a-z0-9][a-z0-9_.]*(-[a-z0-9_.]+)+$")  # glove-wiki-gigaword-100, word2vec-google-news-300
_CHUNK = 1 << 20


def data_dir() -> Path:
    return Path(os.environ.get("GENSIM_DATA_DIR") or Path.home() / "gensim-data").expanduser()


def looks_like_name(source: str) -> bool:
    return bool(NAME.match(source)) and os.sep not in source


def resolve(name: str) -> Path:
    """The data file of a downloaded gensim-data set; a VectorsError saying how to get it otherwise."""
    folder = data_dir() / name
    candidates = [folder / f"{name}.gz"] + sorted(
        p for p in folder.glob(f"{name}*") if p.is_file() and p.suffix not in (".py", ".pyc", ".json", ".md"))
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise VectorsError(f"no vector file {name!r} here and no gensim-data set of that name in {data_dir()}; "
                       f"get it with: attn-cli vectors download {name} (or pass a file path)")


def catalogue() -> dict:
    """gensim-data's list.json: {'models': {name: {file_name, parts, checksum[-N], ...}}, ...}."""
    url = os.environ.get("ATTN_CLI_GENSIM_DATA_LIST", LIST_URL)
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return json.loads(response.read().decode("utf-8"))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise VectorsError(f"cannot fetch the gensim-data list from {url}: {exc}; check the network "
                           "(or set ATTN_CLI_GENSIM_DATA_LIST to a mirror)") from exc


def download(name: str, show_progress: bool = True) -> Path:
    """Fetch, verify and store a gensim-data model; returns the data file. Nothing is executed."""
    models = catalogue().get("models", {})
    entry = models.get(name)
    if entry is None:
        raise VectorsError(f"gensim-data has no model named {name!r}; its models are: {', '.join(sorted(models))}")
    target = data_dir() / name / f"{name}.gz"
    if target.is_file():
        return target
    base = os.environ.get("ATTN_CLI_GENSIM_DATA_URL", RELEASES_URL).rstrip("/")
    parts = int(entry.get("parts", 1))
    target.parent.mkdir(parents=True, exist_ok=True)
    sweep_leftovers([(target.parent, DOWNLOAD)])  # the .part files of downloads killed long ago
    handle, temporary = tempfile.mkstemp(prefix=f".{name}-{os.getpid()}-", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            for part in range(parts):
                suffix = ".gz" if parts == 1 else f".gz_0{part}"
                checksum = entry.get("checksum" if parts == 1 else f"checksum-{part}")
                if not checksum:
                    raise VectorsError(f"gensim-data lists no MD5 for {name}{suffix}; refusing a download that "
                                       "cannot be verified (fetch it yourself and pass the file's path)")
                _fetch(f"{base}/{name}/{name}{suffix}", out, checksum, show_progress)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as any downloaded file, not mkstemp's private 0600
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def _fetch(url: str, out, checksum: str, show_progress: bool) -> None:
    """Stream one file into `out`, then compare its MD5 with list.json's."""
    md5 = hashlib.md5()
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            total = int(response.headers.get("Content-Length") or 0) or None
            with progress_bar(url.rsplit("/", 1)[-1], total, show_progress, unit=None) as update:
                done = 0
                while chunk := response.read(_CHUNK):
                    out.write(chunk)
                    md5.update(chunk)
                    done += len(chunk)
                    update(done, 0)
    except (urllib.error.URLError, OSError) as exc:
        raise VectorsError(f"cannot download {url}: {exc}; check the network and try again") from exc
    if md5.hexdigest() != checksum:
        raise VectorsError(f"{url} arrived with MD5 {md5.hexdigest()}, but gensim-data lists {checksum}; "
                           "the download is damaged: try again")
