#!/usr/bin/env python3
"""report.html in a real browser: Debian's chromium, headless, on the report
of a small run. Checks that the page's script runs without errors (console
and the page's own error hook), that every plot has its data points (the
DOM), that the animation advances (two screenshots at different times differ
inside the player's canvas), and keeps a screenshot as a test artefact.
Exits 77 (skipped) when chromium is missing or cannot start.

usage: test_report.py EVOC SOURCE_DIR ARTEFACT_DIR
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
WINDOW = "1100,1500"


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_browser(exe, page, budget_ms, extra):
    args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--window-size=" + WINDOW, "--virtual-time-budget=%d" % budget_ms,
            "--enable-logging=stderr", "--v=0", "--user-data-dir=" + tempfile.mkdtemp()] + extra
    args.append("file://" + page)
    # A loaded machine can stall headless chromium now and then: try again once.
    for attempt in (1, 2):
        try:
            return subprocess.run(args, capture_output=True, text=True, timeout=90)
        except subprocess.TimeoutExpired:
            if attempt == 2:
                raise
            print("chromium timed out (%d ms budget); trying again" % budget_ms)


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB/RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6), "unexpected PNG format"
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def region_differs(shot_a, shot_b, rect):
    wa, ha, bpp, ra = png_pixels(shot_a)
    wb, hb, _, rb = png_pixels(shot_b)
    x, y, w, h = rect
    changed = 0
    for row in range(max(0, y), min(ha, hb, y + h)):
        a = ra[row][x * bpp:(x + w) * bpp]
        b = rb[row][x * bpp:(x + w) * bpp]
        changed += sum(1 for i in range(0, len(a), bpp) if a[i:i + 3] != b[i:i + 3])
    return changed


def main():
    evoc, source, artefacts = sys.argv[1:4]
    exe = chromium()
    if not exe:
        print("SKIP: chromium is not installed (scripts/test.sh installs Debian's chromium)")
        return SKIP
    work = tempfile.mkdtemp(prefix="evoc-browser-")
    run = os.path.join(work, "run")
    subprocess.run([evoc, "run", os.path.join(source, "examples/eldir_small.evo"), "--out", run,
                    "--set", "evolve.population=6", "--set", "evolve.generations=3",
                    "--set", "world.steps=300", "--set", "evolve.learn.iterations=4",
                    "--threads", "2"], check=True, stdout=subprocess.DEVNULL)
    page = os.path.join(run, "report.html")
    assert os.path.exists(page), "evoc run left no report.html"

    try:
        early = run_browser(exe, page, 300, ["--dump-dom"])
    except (OSError, subprocess.TimeoutExpired) as e:
        print("SKIP: chromium cannot start: %s" % e)
        return SKIP
    if early.returncode != 0 or "<body" not in early.stdout:
        print("SKIP: chromium cannot start (exit %d): %s" % (early.returncode, early.stderr[-2000:]))
        return SKIP
    late = run_browser(exe, page, 1300, ["--dump-dom"])
    failures = []
    for name, result in (("early", early), ("late", late)):
        dom, log = result.stdout, result.stderr
        if 'data-ready="1"' not in dom:
            failures.append("%s: the page's script did not finish (no data-ready)" % name)
        body = re.search(r"<body[^>]*>", dom)
        if body and "data-errors" in body.group(0):
            failures.append("%s: the page reported script errors: %s" % (name, re.findall(r'id="errors"[^>]*>([^<]*)', dom)))
        for line in log.splitlines():
            if "CONSOLE" in line and ("Uncaught" in line or "Error" in line):
                failures.append("%s: console: %s" % (name, line))
    dom = late.stdout
    plots = re.findall(r'<svg[^>]*class="plot"[^>]*>', dom)
    if len(plots) < 6:
        failures.append("expected at least 6 plots (fitness, 3 measures, curves, lineage), found %d" % len(plots))
    for tag in plots:
        points = int(re.search(r'data-points="(\d+)"', tag).group(1))
        if points == 0:
            failures.append("a plot has no data points: %s" % tag[:200])
    circles = dom.count('class="pt"')
    declared = sum(int(n) for n in re.findall(r'data-points="(\d+)"', dom))
    if circles != declared:
        failures.append("plots declare %d points but draw %d" % (declared, circles))
    frames = [re.search(r'<canvas[^>]*data-frame="(\d+)"', r.stdout) for r in (early, late)]
    if not all(frames):
        failures.append("the player's canvas has no data-frame")
    elif frames[0].group(1) == frames[1].group(1):
        failures.append("the animation did not advance (frame %s both times)" % frames[0].group(1))
    rect = re.search(r'data-player-rect="(\d+),(\d+),(\d+),(\d+)"', dom)
    if not rect:
        failures.append("the page does not say where its player is (data-player-rect)")

    shots = []
    for budget in (300, 1300):
        shot = os.path.join(work, "shot_%d.png" % budget)
        run_browser(exe, page, budget, ["--screenshot=" + shot])
        if not os.path.exists(shot):
            failures.append("no screenshot at %d ms" % budget)
        shots.append(shot)
    if rect and all(os.path.exists(s) for s in shots):
        changed = region_differs(shots[0], shots[1], tuple(int(v) for v in rect.groups()))
        if changed < 50:
            failures.append("the player's canvas barely changed between the screenshots (%d pixels)" % changed)
        os.makedirs(artefacts, exist_ok=True)
        shutil.copy(shots[1], os.path.join(artefacts, "report.png"))
        print("screenshot: %s (%d pixels of the player changed)" % (os.path.join(artefacts, "report.png"), changed))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
