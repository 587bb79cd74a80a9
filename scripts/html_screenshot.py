"""Make docs/explain.png, the README's picture of the HTML report, from the real page in Chromium.

    python scripts/html_screenshot.py [OUTPUT.png]

Writes `attn-cli explain "money bank grows" --heads 2 --html ...` to a temporary folder, opens it
offline in Debian's Chromium (/usr/bin/chromium, driven by playwright from the `test` extra), hovers
the query "bank" so its row of attention is highlighted, and saves the top of the page.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
COMMAND = ["explain", "money bank grows", "--heads", "2"]
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]


def main(output: Path) -> None:
    with tempfile.TemporaryDirectory() as folder:
        page_file = Path(folder) / "explain.html"
        subprocess.run([sys.executable, "-m", "attn_cli", *COMMAND, "--html", page_file.name], check=True,
                       stdout=subprocess.DEVNULL, cwd=folder)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
            page = browser.new_page(viewport={"width": 1100, "height": 620}, device_scale_factor=1)
            page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
            page.goto(page_file.as_uri())
            page.hover("svg.lines text.token[data-side=query][data-index='1']")
            output.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(output))
            browser.close()
    print(f"{output} ({output.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "explain.png")
