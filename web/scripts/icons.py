"""Renders the web app's PNG icons from public/icon.svg with Chromium (Playwright, the
browser tests' own tools): icon-192.png, icon-512.png, and icon-maskable-512.png (the whole
square filled, the spade inside the centre's safe zone). Run after changing the design:
`.venv/bin/python web/scripts/icons.py`; the PNGs are committed.
"""

import os
from pathlib import Path

from playwright.sync_api import sync_playwright

PUBLIC = Path(__file__).resolve().parents[1] / "public"
CHROMIUM = os.environ.get("FELT_CHROMIUM", "/usr/bin/chromium")


def main() -> None:
    svg = (PUBLIC / "icon.svg").read_text(encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for name, size, pad in (
            ("icon-192.png", 192, 0),
            ("icon-512.png", 512, 0),
            ("icon-maskable-512.png", 512, 56),
        ):
            page = browser.new_page(viewport={"width": size, "height": size})
            inner = size - 2 * pad
            page.set_content(
                "<body style='margin:0;background:"
                + ("#14352a" if pad else "transparent")
                + f"'><div style='padding:{pad}px;width:{inner}px;height:{inner}px'>"
                + svg.replace("<svg ", f"<svg width='{inner}' height='{inner}' ")
                + "</div></body>"
            )
            page.screenshot(path=str(PUBLIC / name), omit_background=not pad)
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
