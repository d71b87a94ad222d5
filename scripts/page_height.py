"""Print the laid-out height (CSS px) of HTML pages, as headless Chromium renders them, and save a
screenshot of each beside it (``PAGE.png``): issue 24 asks for an index.html under 5,000 px when
nothing failed, looked at in a real browser.

    python scripts/page_height.py reports/runs/<run>/index.html [...]

Needs ``chromium`` (or chromium-browser / google-chrome) on PATH; nothing is fetched from a network.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_PROBE = ("<script>window.addEventListener('load',function(){document.documentElement.setAttribute("
          "'data-height',String(document.documentElement.scrollHeight));});</script>")


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def height(page: Path, browser: str, width: int = 1280) -> int:
    """The page's scrollHeight at ``width`` px, measured in a copy with a probe script added."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / "probe.html"
        probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>"), encoding="utf-8")
        common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", f"--user-data-dir={tmp}/profile", f"--window-size={width},2000"]
        out = subprocess.run([*common, "--virtual-time-budget=3000", "--dump-dom", probe.as_uri()],
                             capture_output=True, text=True, timeout=120)
        m = re.search(r'data-height="(\d+)"', out.stdout)
        if not m:
            raise RuntimeError(f"no height from {browser}: {out.stderr[-500:]}")
        h = int(m.group(1))
        subprocess.run([*common[:-1], f"--window-size={width},{min(h, 16000)}",
                        f"--screenshot={page.with_suffix('.png')}", page.resolve().as_uri()],
                       capture_output=True, timeout=120)
        return h


def main(argv: list[str]) -> int:
    browser = chromium()
    if browser is None:
        print("page_height: no chromium on PATH (Debian: apt-get install chromium)", file=sys.stderr)
        return 2
    for arg in argv:
        print(f"{height(Path(arg), browser)} px  {arg}  (screenshot {Path(arg).with_suffix('.png')})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
