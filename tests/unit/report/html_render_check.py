#!/usr/bin/python3
"""Loads an HTML report in a real browser (headless Chromium from Debian, driven over the DevTools
protocol on a pipe) and checks that it rendered: the page loaded from the file, it has the title,
a heading and at least MIN_TABLES tables, and every <img> decoded (HTMLImageElement.decode()
resolved and naturalWidth > 0). Prints one JSON object (what the page showed) and, on failure, one
line per problem naming the figure (its alt text).

Usage: html_render_check.py HTML [--min-images N] [--min-tables N] [--chromium PATH] [--timeout-s S]
Exit: 0 rendered with every image decoded; 1 a problem found (listed); 2 the browser could not be
run or did not answer (a missing browser fails the caller's test: it is never a skip).
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

# Flags that work on the development machines (no GPU, no sandbox as root, no network of its own).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe"]

# Waits until the report's file has loaded (not the initial about:blank), then decodes every image.
PROBE = """
new Promise(resolve => {
  const ready = () => location.protocol === 'file:' && document.readyState === 'complete';
  const wait = () => ready() ? resolve() : setTimeout(wait, 50);
  wait();
}).then(() => Promise.all([...document.images].map(img =>
  img.decode().then(() => null, e => String(e)).then(err => ({
    alt: img.alt, complete: img.complete, naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight,
    error: err}))))
).then(images => JSON.stringify({
  url: location.href, title: document.title,
  h1: (document.querySelector('h1') || {}).textContent || '',
  tables: document.querySelectorAll('table').length,
  images: images}))
"""


class Pipe:
    """The DevTools protocol over --remote-debugging-pipe: JSON messages ending in NUL, commands on
    the browser's fd 3, answers and events on its fd 4."""

    def __init__(self, to_browser, from_browser, timeout_s):
        self.w, self.r, self.timeout_s, self.next_id, self.buf = to_browser, from_browser, timeout_s, 0, b""

    def call(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                answer = json.loads(raw)
                if answer.get("id") == self.next_id:
                    if "error" in answer:
                        raise RuntimeError(f"{method}: {answer['error']}")
                    return answer["result"]
            if time.monotonic() > deadline:
                raise TimeoutError(f"{method}: no answer in {self.timeout_s} s")
            chunk = os.read(self.r, 1 << 16)
            if not chunk:
                raise RuntimeError(f"{method}: the browser closed the pipe")
            self.buf += chunk


def load(chromium, html, timeout_s):
    """What the browser showed of `html` (the PROBE's object)."""
    profile = tempfile.mkdtemp(prefix="html_render_check_")  # a new empty profile every run
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()

    def fds():  # the browser reads commands on fd 3 and writes answers on fd 4
        a, b = os.dup(to_r), os.dup(from_w)  # above 4 first: neither may overwrite the other
        os.dup2(a, 3)
        os.dup2(b, 4)

    log = open(os.path.join(profile, "stderr.log"), "wb")
    proc = subprocess.Popen([chromium] + FLAGS + [f"--user-data-dir={profile}", "about:blank"],
                            preexec_fn=fds, pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=log)
    os.close(to_r)
    os.close(from_w)
    try:
        pipe = Pipe(to_w, from_r, timeout_s)
        target = pipe.call("Target.createTarget", {"url": pathlib.Path(html).resolve().as_uri()})["targetId"]
        session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for attempt in range(50):  # the first may run in about:blank, which the navigation then destroys
            try:
                out = pipe.call("Runtime.evaluate", {"expression": PROBE, "awaitPromise": True, "returnByValue": True},
                                session)
                break
            except RuntimeError as e:
                if "context was destroyed" not in str(e) or attempt == 49:
                    raise
        if "exceptionDetails" in out:
            raise RuntimeError(f"probe failed: {out['exceptionDetails']}")
        pipe.call("Browser.close")
        return json.loads(out["result"]["value"])
    except (RuntimeError, TimeoutError, OSError) as e:
        log.flush()
        tail = pathlib.Path(log.name).read_text(errors="replace").splitlines()[-5:]
        raise RuntimeError(f"{e}; the browser's last lines: {tail}") from e
    finally:
        log.close()
        os.close(to_w)
        os.close(from_r)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


def problems(seen, min_images, min_tables):
    """Why the page did not render as a report should, one line each (empty: it did)."""
    out = []
    if not seen["url"].startswith("file:"):
        out.append(f"the page did not load: {seen['url']}")
    if not seen["title"].strip() or not seen["h1"].strip():
        out.append("no title or no heading")
    if seen["tables"] < min_tables:
        out.append(f"{seen['tables']} tables, expected at least {min_tables}")
    if len(seen["images"]) < min_images:
        out.append(f"{len(seen['images'])} images, expected at least {min_images}")
    for img in seen["images"]:
        if img["error"] or not img["complete"] or img["naturalWidth"] <= 0:
            out.append(f"figure {img['alt']} did not decode: naturalWidth {img['naturalWidth']}, "
                       f"error {img['error']}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("html")
    ap.add_argument("--min-images", type=int, default=1)
    ap.add_argument("--min-tables", type=int, default=1)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--timeout-s", type=float, default=60)
    a = ap.parse_args()
    if not os.access(a.chromium, os.X_OK):
        print(f"html_render_check: no browser at {a.chromium} (Debian package chromium, "
              "harness/scripts/install-deps.sh)", file=sys.stderr)
        return 2
    try:
        seen = load(a.chromium, a.html, a.timeout_s)
    except (RuntimeError, TimeoutError, OSError) as e:
        print(f"html_render_check: the browser did not answer: {e}", file=sys.stderr)
        return 2
    print(json.dumps(seen))
    found = problems(seen, a.min_images, a.min_tables)
    for p in found:
        print(f"html_render_check: {p}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
