#!/usr/bin/env bash
# Opens REPORT_DIR/report.html in headless Chromium with no network and checks that it is
# the report, self-contained, and renders: the DOM has the report's title, every section
# and every embedded plot, and a screenshot is not blank (more than one pixel colour).
#
#   bash tests/check_report_html.sh REPORT_DIR
#
# Exit status: 0 passed, 1 failed, 77 no Chromium (skipped; Debian package chromium).
set -uo pipefail

fail() { echo "check_report_html: FAIL: $*" >&2; exit 1; }
say() { echo "check_report_html: $*"; }

report_dir="${1:?usage: check_report_html.sh REPORT_DIR}"
html="$(cd "$report_dir" 2>/dev/null && pwd)/report.html"
[ -f "$html" ] || fail "$report_dir/report.html not found"

browser=""
for candidate in chromium chromium-browser google-chrome; do
  if command -v "$candidate" >/dev/null 2>&1; then
    browser="$(command -v "$candidate")"
    break
  fi
done
if [ -z "$browser" ]; then
  echo "SKIPPED: no chromium on PATH (Debian: apt-get install chromium)"
  exit 77
fi
python=/usr/bin/python3
[ -x "$python" ] || python=python3

# Self-contained: nothing is fetched, every image is inline.
external="$(grep -oE '(src|href)="[^"]*"' "$html" | grep -vE '="(data:|#)' || true)"
[ -z "$external" ] || fail "report.html refers to outside resources: $external"
images=$(grep -o '<img ' "$html" | wc -l)
inline=$(grep -o 'src="data:image/png;base64,' "$html" | wc -l)
[ "$images" -eq "$inline" ] || fail "$images images, only $inline embedded as data:image/png"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
  --disable-component-update --disable-sync)

# The DOM after load: proves Chromium parsed our file (not an error page) and that the
# escaped text did not turn into markup.
timeout 120 "$browser" "${flags[@]}" --user-data-dir="$work/profile-dom" --dump-dom "file://$html" \
  >"$work/dom.html" 2>"$work/dom.log" || { tail -n 20 "$work/dom.log" >&2; fail "chromium --dump-dom failed"; }
grep -q '<h1>ddpscale report: ' "$work/dom.html" || fail "the rendered page has no 'ddpscale report' title"
# Every numbered section of report.md (how many depends on what applies to the study: a CPU
# study has no NCCL profiles to compare, a study without a price no cost section).
sections=$(grep -cE '^## [0-9]+\. ' "$report_dir/report.md")
[ "$sections" -ge 7 ] || fail "report.md has $sections numbered sections, expected 7 or more"
for n in $(seq 1 "$sections"); do
  grep -q "<h2>$n\. " "$work/dom.html" || fail "the rendered page lacks section $n"
done
grep -q '<script' "$work/dom.html" && fail "the rendered page has a <script> element"
dom_images=$(grep -o '<img ' "$work/dom.html" | wc -l)
[ "$dom_images" -eq "$images" ] || fail "the rendered page has $dom_images images, report.html $images"

shot="$work/shot.png"
start=$(date +%s.%N)
timeout 120 "$browser" "${flags[@]}" --user-data-dir="$work/profile-shot" --screenshot="$shot" \
  --window-size=1200,2000 "file://$html" >"$work/shot.log" 2>&1 ||
  { tail -n 20 "$work/shot.log" >&2; fail "chromium --screenshot failed"; }
[ -s "$shot" ] || { tail -n 20 "$work/shot.log" >&2; fail "no screenshot written"; }
say "screenshot in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s: $(stat -c %s "$shot") bytes"

# Decode the PNG with zlib alone (no PIL) and count the distinct pixel colours.
"$python" - "$shot" <<'EOF' || fail "the screenshot is blank or unreadable"
import struct, sys, zlib

data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("not a PNG")
pos, idat, header = 8, [], None
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        header = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat.append(body)
    pos += 12 + length
width, height, depth, colour, _, _, interlace = header
channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
if depth != 8 or channels is None or interlace:
    sys.exit(f"unexpected PNG format: depth {depth}, colour type {colour}, interlace {interlace}")
raw = zlib.decompress(b"".join(idat))
stride = width * channels
previous = bytearray(stride)
colours = set()
background = 0
for y in range(height):
    kind = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    if kind == 1:
        for i in range(channels, stride):
            line[i] = (line[i] + line[i - channels]) & 255
    elif kind == 2:
        line = bytearray((a + b) & 255 for a, b in zip(line, previous))
    elif kind == 3:
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            line[i] = (line[i] + ((left + previous[i]) >> 1)) & 255
    elif kind == 4:
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    elif kind != 0:
        sys.exit(f"bad PNG filter {kind} in row {y}")
    row = bytes(line)
    colours.update(row[i:i + channels] for i in range(0, stride, channels))
    previous = line
print(f"check_report_html: screenshot {width}x{height}, {len(colours)} distinct colours")
if (width, height) != (1200, 2000):
    sys.exit(f"screenshot is {width}x{height}, asked for 1200x2000")
if len(colours) < 2:
    sys.exit("one colour only: a blank page")
EOF
say "PASSED: $html renders in $("$browser" --version 2>/dev/null | head -n 1)"
