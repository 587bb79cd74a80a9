"""Make the docs' pictures of the HTML report (docs/*.png) from the real pages in Chromium.

    python scripts/html_screenshot.py [FOLDER]

For each picture below: writes the `attn-cli ... --html` page to a temporary folder, opens it offline
in Debian's Chromium (/usr/bin/chromium, driven by playwright from the `test` extra), does what a reader
would (hover the query "bank", pick the traced word, point at a verdict, point at an occurrence of "bank")
and saves the top of the page.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]
# name: (command, viewport width x height, what to do on the page before the screenshot)
PICTURES = {
    "explain": (["explain", "money bank grows", "--heads", "2"], (1100, 620),
                lambda page: page.hover("svg.lines text.token[data-side=query][data-index='1']")),
    "trace": (["trace", "money bank grows"], (1000, 1020),
              lambda page: page.check("input[name='trace-0'][value='1']")),
    "compare": (["compare", "river bank flows", "money bank grows"], (1400, 760),
                lambda page: page.hover("table.data tr.pick[data-word=bank]")),
    "senses": (["senses", "bank", "--file", "bank.txt", "--labels", "bank.labels.txt"], (1000, 700),
               lambda page: page.hover("svg.senses-scatter circle[data-line='8']")),
}


def main(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        for corpus in (ROOT / "data" / "senses").iterdir():  # the senses picture's corpus, named as the docs name it
            shutil.copy(corpus, work)
        for name, (command, (width, height), act) in PICTURES.items():
            page_file = Path(work) / f"{name}.html"
            subprocess.run([sys.executable, "-m", "attn_cli", *command, "--html", page_file.name], check=True,
                           stdout=subprocess.DEVNULL, cwd=work)
            page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=1)
            page.route("**/*",
                       lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
            page.goto(page_file.as_uri())
            act(page)
            output = folder / f"{name}.png"
            page.screenshot(path=str(output))
            page.close()
            print(f"{output} ({output.stat().st_size // 1024} KB)")
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs")
