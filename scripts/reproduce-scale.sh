#!/usr/bin/env bash
# reproduce-scale.sh WORK: predictions at scale, on two graphs larger than
# this machine's memory (experiments/notes/scale.md): each calibrated twice
# with realrun calibrate before its runs, into one history (the engine on
# the graph's own buckets and on each ordering's own bucket sequence, the
# disk the engine's way; the second calibration adds probes, the first
# tenth of each ordering's buckets run for real, and its spread the drift
# between the two), then BETA, Hilbert-symmetric and tierflow's order
# trained for real with --compare-sim --device on the second. WORK needs
# about 60 GB free (a graph's work directory and one checkpoint at a time;
# graph 1 is removed before graph 2 is built). About 90 minutes on 2
# cores. Writes results/scale/{fb035,lj768}-{cal-a.yaml,cal-a.json,
# cal.yaml,cal.json,manifest.json,cmp.json,run.log} and
# results/scale/README.md.
set -euo pipefail
work=${1:?usage: reproduce-scale.sh WORK}
out=results/scale
mkdir -p "$out" "$work"
run() { # name, then the run's training flags
	local name=$1
	shift
	local wd="$work/$name" hist="$work/$name-history.json"
	rm -f "$hist"
	bin/realrun calibrate "$@" --orderings beta,hilbert-symmetric,tierflow --history "$hist" \
		--workdir "$wd" --dir "$work" --out "$out/$name-cal-a.yaml" --json >"$out/$name-cal-a.json"
	bin/realrun calibrate "$@" --orderings beta,hilbert-symmetric,tierflow --history "$hist" --probe 0.1 \
		--workdir "$wd" --dir "$work" --out "$out/$name-cal.yaml" --json >"$out/$name-cal.json"
	cp "$wd/manifest.json" "$out/$name-manifest.json"
	bin/realrun "$@" --workdir "$wd" --keep-checkpoints 1 --eval none \
		--orderings beta,hilbert-symmetric,tierflow --progress none \
		--compare-sim --device "$out/$name-cal.yaml" --json >"$out/$name-cmp.json" 2>"$out/$name-run.log"
	rm -rf "$wd" "$hist"
}
# graph 1: 30.1M nodes, 106.5M training edges, 16 partitions of 1.51 GB
run fb035 --dataset freebase86m --scale 0.35 --dim 100 --p 16 --c 4 --negatives 100
# graph 2, chosen before it was first built or measured (PLAN.txt): 4.8M nodes,
# 62M training edges, d=768, 10 negatives, partitions of 1.84 GB
run lj768 --dataset livejournal --scale 1 --dim 768 --p 16 --c 4 --negatives 10
bin/reproduce --readme-only --out results --experiments scale
