"""gensim-data names (glove-wiki-gigaword-100, ...): found offline in `$GENSIM_DATA_DIR/<name>/<name>.gz`,
downloaded without running code (never the folder's `__init__.py`, which gensim's downloader imports).

Nothing a server sends is trusted to end or to fit: the whole download has a deadline (a byte every 50 s trips no
read timeout), list.json at most MAX_LIST_BYTES, a model at most the size list.json gives it."""

from __future__ import annotations

import hashlib
import http.client
import json
import math
import os
import re
import tempfile
import time
import urllib.error
import urllib.request
from itertools import chain
from pathlib import Path
from typing import IO, Callable, Iterator

from attn_cli.files import write_all
from attn_cli.errors import UsageError, VectorsError
from attn_cli.vectors.progress import progress_bar

LIST_URL = "https://raw.githubusercontent.com/RaRe-Technologies/gensim-data/master/list.json"
RELEASES_URL = "https://github.com/RaRe-Technologies/gensim-data/releases/download"
NAME = re.compile(r"^[a-z0-9][a-z0-9_.]*(-[a-z0-9_.]+)+$")  # glove-wiki-gigaword-100, word2vec-google-news-300
_CHUNK = 1 << 20
TIMEOUT_SECONDS = 4 * 3600  # the whole download by default: 1.7 GB (the largest set) at 120 kB/s
READ_TIMEOUT_SECONDS = 60  # the longest wait for any one piece
MAX_LIST_BYTES = 16 << 20  # gensim-data's list.json is about 30 kB
UNLISTED_BYTES = 16 << 30  # a model whose file_size list.json does not give: 10 x the largest set
MAX_PARTS = 99
MD5 = re.compile(r"^[0-9a-f]{32}$")
Left = Callable[[str], float]  # the seconds left to download `url` in; a VectorsError when there are none


def data_dir() -> Path:
    return Path(os.environ.get("GENSIM_DATA_DIR") or Path.home() / "gensim-data").expanduser()


def looks_like_name(source: str) -> bool:
    return bool(NAME.match(source)) and os.sep not in source


def resolve(name: str) -> Path:
    """The data file of a downloaded gensim-data set (a name `looks_like_name` passed); a VectorsError saying how
    to get it otherwise."""
    folder = data_dir() / name
    for candidate in [folder / f"{name}.gz", *sorted(folder.glob(f"{name}*"))]:
        if candidate.is_file() and candidate.suffix not in (".py", ".pyc", ".json", ".md"):
            return candidate
    raise VectorsError(f"no vector file {name!r} here and no gensim-data set of that name in {data_dir()}; "
                       f"get it with: attn-cli vectors download {name} (or pass a file path)")


def deadline() -> Left:
    """The check of a whole download that starts now: ATTN_CLI_DOWNLOAD_TIMEOUT (TIMEOUT_SECONDS) seconds."""
    text = os.environ.get("ATTN_CLI_DOWNLOAD_TIMEOUT", "").strip() or str(TIMEOUT_SECONDS)
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise UsageError(f"ATTN_CLI_DOWNLOAD_TIMEOUT must be a number of seconds above 0 (got {text!r})")
    end = time.monotonic() + seconds

    def left(url: str) -> float:
        if (remaining := end - time.monotonic()) <= 0:
            raise VectorsError(f"cannot download {url}: it took longer than the {seconds:g} s "
                               "ATTN_CLI_DOWNLOAD_TIMEOUT allows; try again, or raise it")
        return remaining
    return left


def receive(url: str, left: Left, limit: int) -> Iterator[tuple[bytes, int | None]]:
    """The body of `url` as it arrives, with the size the server announces; a VectorsError past the deadline or
    `limit` bytes, or when the connection fails."""
    try:
        with urllib.request.urlopen(url, timeout=min(READ_TIMEOUT_SECONDS, left(url))) as response:
            announced = getattr(response, "length", None)  # None when chunked or not a number
            received = 0
            while chunk := response.read1(_CHUNK):  # whatever has arrived: a slow server cannot hold a call
                received += len(chunk)
                if max(received, announced or 0) > limit:
                    raise VectorsError(f"{url} holds more than the {limit:,} bytes expected of it; it is not "
                                       "the listed file: check the mirror (ATTN_CLI_GENSIM_DATA_URL)")
                left(url)
                yield chunk, announced
    except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:  # ValueError: no URL
        left(url)  # a read timed out at the deadline: say so
        raise VectorsError(f"cannot download {url}: {exc or type(exc).__name__}; check the network and try "
                           "again") from exc


def catalogue(left: Left) -> dict[str, dict]:
    """gensim-data's list.json as {name: entry}, for the models whose name follows NAME."""
    url = os.environ.get("ATTN_CLI_GENSIM_DATA_LIST", LIST_URL)
    body = b"".join(chunk for chunk, _ in receive(url, left, MAX_LIST_BYTES))
    try:
        listing = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # RecursionError: arrays nested thousands deep
        raise VectorsError(f"the gensim-data list at {url} is not JSON ({type(exc).__name__}); check "
                           "ATTN_CLI_GENSIM_DATA_LIST") from None
    models = listing.get("models") if isinstance(listing, dict) else None
    if not isinstance(models, dict) or not all(isinstance(entry, dict) for entry in models.values()):
        raise VectorsError(f"the gensim-data list at {url} has no \"models\" object of model objects; check "
                           "ATTN_CLI_GENSIM_DATA_LIST")
    return {name: entry for name, entry in models.items() if looks_like_name(name)}


def download(name: str, show_progress: bool = True) -> Path:
    """Fetch, verify and store a gensim-data model; returns the data file. Nothing is executed."""
    if not looks_like_name(name):
        raise VectorsError(f"{name!r} is not a gensim-data name (such as glove-wiki-gigaword-100): a name is "
                           "lower-case letters, digits, '_' and '.', in parts joined by '-'")
    left = deadline()
    models = catalogue(left)
    entry = models.get(name)
    if entry is None:
        raise VectorsError(f"gensim-data has no model named {name!r}; its models are: {', '.join(sorted(models))}")
    target = data_dir() / name / f"{name}.gz"
    if target.is_file():
        return target
    parts, size = planned_parts(name, entry), entry.get("file_size")  # all parts together
    limit = size if type(size) is int and size > 0 else UNLISTED_BYTES
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        from attn_cli.vectors.importer import DOWNLOAD, sweep

        sweep([(target.parent, DOWNLOAD)])  # the .part files of downloads killed long ago
        # not an AtomicFile: that writes through a link or into a device at the target, where a download, this
        # tool's own file, replaces whatever was there
        handle, temporary = tempfile.mkstemp(prefix=f".{name}-", suffix=".part", dir=target.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                for url, checksum in parts:
                    limit -= fetch(url, out, checksum, show_progress, left, limit)
            os.umask(umask := os.umask(0))
            os.chmod(temporary, 0o666 & ~umask)  # as any downloaded file, not mkstemp's private 0600
            os.replace(temporary, target)
        finally:
            Path(temporary).unlink(missing_ok=True)
    except OSError as exc:  # the network's errors are VectorsErrors already: this is the disk
        raise VectorsError(f"cannot write the download in {data_dir()}: {exc.strerror or exc}; set GENSIM_DATA_DIR "
                           "to a writable folder with room for the model") from exc
    return target


def planned_parts(name: str, entry: dict) -> list[tuple[str, str]]:
    """(address, MD5) of each part of the model, as list.json gives them; a VectorsError when it cannot."""
    base = os.environ.get("ATTN_CLI_GENSIM_DATA_URL", RELEASES_URL).rstrip("/")
    parts = entry.get("parts", 1)
    if type(parts) is not int or not 1 <= parts <= MAX_PARTS:
        raise VectorsError(f"gensim-data lists {parts!r} parts for {name}, not a whole number from 1 to "
                           f"{MAX_PARTS}; check the mirror (ATTN_CLI_GENSIM_DATA_LIST)")
    planned = []
    for part in range(parts):
        suffix = ".gz" if parts == 1 else f".gz_0{part}"
        checksum = entry.get("checksum" if parts == 1 else f"checksum-{part}")
        if not (isinstance(checksum, str) and MD5.match(checksum)):
            raise VectorsError(f"gensim-data lists no MD5 for {name}{suffix}; refusing a download that "
                               "cannot be verified (fetch it yourself and pass the file's path)")
        planned.append((f"{base}/{name}/{name}{suffix}", checksum))
    return planned


def fetch(url: str, out: IO[bytes], checksum: str, show_progress: bool, left: Left, limit: int) -> int:
    """Stream one file into `out`, then compare its MD5 with list.json's; returns its size."""
    md5, done = hashlib.md5(), 0
    pieces = receive(url, left, limit)
    first, announced = next(pieces, (b"", None))  # the bar's total comes with the response
    with progress_bar(url.rsplit("/", 1)[-1], announced, show_progress, unit=None) as update:
        for chunk in chain([first], (chunk for chunk, _ in pieces)):
            write_all(out, chunk)
            md5.update(chunk)
            done += len(chunk)
            update(done, 0)
    if md5.hexdigest() != checksum:
        raise VectorsError(f"{url} arrived with MD5 {md5.hexdigest()}, but gensim-data lists {checksum}; "
                           "the download is damaged: try again")
    return done
