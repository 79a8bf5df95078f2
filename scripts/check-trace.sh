#!/usr/bin/env bash
# check-trace.sh (make check-trace) opens the traces that --trace writes in a
# real trace viewer: speedscope's static build from npm, in headless
# Chromium. It installs Chromium (apt-get) and speedscope (npm, pinned, into
# .cache/speedscope/) when they are missing, writes three traces with the
# project's binaries (simulate; a realrun training run; a realrun
# --compare-sim of a data-bound run), checks each with tracecheck, loads each
# in speedscope and fails if speedscope reports an error (an alert, its
# error panel, an error or warning logged while importing) or shows other
# than one thread per thread of the file that holds spans, makes sure a
# broken file does fail, and writes a screenshot of the compare-sim trace
# to $SCREENSHOT.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
SPEEDSCOPE_VERSION=1.25.0
SPEEDSCOPE_SHA256=2831f1e0d26df914b477e522d78b8485511495a6af81a0b88158f8b48f9e0d03
SCREENSHOT=${SCREENSHOT:-docs/trace-compare-sim.png}
start=$(date +%s)

tmp=$(mktemp -d)
viewer_pid=
cleanup() {
	if [ -n "$viewer_pid" ]; then kill "$viewer_pid" 2>/dev/null || true; wait "$viewer_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
apt_install() {
	echo "check-trace: installing $* (apt-get)"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Chromium (Debian's: /usr/bin/chromium).
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ]; then
	apt_install chromium
	chromium=$(command -v chromium)
fi

# speedscope's static build, pinned by version and checksum.
viewer=.cache/speedscope/$SPEEDSCOPE_VERSION
if [ ! -f "$viewer/dist/release/index.html" ]; then
	command -v npm >/dev/null || apt_install npm
	echo "check-trace: installing speedscope@$SPEEDSCOPE_VERSION (npm pack) into $viewer"
	(cd "$tmp" && npm pack --silent "speedscope@$SPEEDSCOPE_VERSION" >/dev/null)
	echo "$SPEEDSCOPE_SHA256  $tmp/speedscope-$SPEEDSCOPE_VERSION.tgz" | sha256sum -c --quiet -
	rm -rf "$viewer" && mkdir -p "$viewer"
	tar -xzf "$tmp/speedscope-$SPEEDSCOPE_VERSION.tgz" -C "$viewer" --strip-components=1
	rm "$tmp/speedscope-$SPEEDSCOPE_VERSION.tgz"
fi

make -s build
$GO build -o "$tmp/traceview" ./cmd/internal/traceview

# The traces.
t=$tmp/traces
mkdir -p "$t"
echo "check-trace: simulate --p 8 --c 3"
./bin/simulate --p 8 --c 3 --trace "$t/simulate.json" >/dev/null
echo "check-trace: realrun --dataset twitter --scale 0.001 (training)"
./bin/realrun --dataset twitter --scale 0.001 --p 8 --c 3 --dim 32 --workdir "$tmp/w-train" --trace "$t/realrun.json" 2>&1 >/dev/null | grep -v '^epoch 1: '
echo "check-trace: realrun --compare-sim of a data-bound run (about a minute: it calibrates first)"
./bin/realrun --dataset freebase86m --scale 0.002 --model dot --dim 128 --negatives 4 --batch 1000 \
	--p 8 --c 3 --orderings beta,hilbert-symmetric --compare-sim --workdir "$tmp/w-compare" \
	--trace "$t/compare-sim.json" 2>&1 | grep -v '^epoch 1: ' | tee "$tmp/compare-sim.txt"
rm -rf "$tmp/w-train" "$tmp/w-compare"

$GO run ./cmd/internal/tracecheck "$t/simulate.json" "$t/realrun.json" "$t/compare-sim.json"

viewer_args=(--viewer "$viewer/dist/release" --name "speedscope $SPEEDSCOPE_VERSION" --chromium "$chromium")

# The check must be able to fail: a broken file has to.
echo '{"traceEvents": "x"}' >"$t/broken.json"
"$tmp/traceview" "${viewer_args[@]}" "$t/broken.json" >"$tmp/broken.txt" 2>&1 &
viewer_pid=$!
if wait "$viewer_pid"; then
	viewer_pid=
	cat "$tmp/broken.txt"
	echo "check-trace: FAIL: a broken trace passed the viewer check" >&2
	exit 1
fi
viewer_pid=
sed 's/$/ (as it must)/' "$tmp/broken.txt"

mkdir -p "$(dirname "$SCREENSHOT")"
"$tmp/traceview" "${viewer_args[@]}" --size 1600x1000 --crop 330 \
	--screenshot "$SCREENSHOT" --screenshot-trace "$t/compare-sim.json" \
	--thread "measured: hilbert-symmetric (realrun) (pid 4), trainer waiting" --list "trainer waiting" \
	"$t/simulate.json" "$t/realrun.json" "$t/compare-sim.json" &
viewer_pid=$!
if ! wait "$viewer_pid"; then
	viewer_pid=
	echo "check-trace: FAIL ($(($(date +%s) - start)) s)" >&2
	exit 1
fi
viewer_pid=
echo "check-trace: ok ($(($(date +%s) - start)) s); screenshot in $SCREENSHOT (traces and work directories removed)"
