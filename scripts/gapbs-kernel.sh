#!/usr/bin/env bash
# gapbs-kernel.sh: DMG's triangle count or betweenness centrality (--algo
# tc|bc) against GAPBS's tc or bc on the same Kronecker graph
# (../shared/peers/graph.sh: GAPBS's generator, scale S, degree 16,
# symmetrised), repetitions interleaved; kernel times side by side (DMG's
# compute_s, GAPBS's Trial Time). tc: the totals must agree. bc: one
# source, DMG's default (the vertex with the most out-edges), given to
# GAPBS with -r; GAPBS's top scores and DMG's of the same vertices must
# agree to 1e-4 as ratios (GAPBS normalises, and counts the source).
#
#   scripts/gapbs-kernel.sh [--algo tc|bc] [--scale 16] [--reps 3] [--dmg ./dmg] [--roles cn:2,mn:2]
#
# Not part of make test: it builds GAPBS from the archive in ../shared/peers.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
peers=${PEERS:-$here/../../shared/peers}
algo=tc scale=16 reps=3 dmg=$here/../dmg roles=cn:2,mn:2
while [ $# -gt 0 ]; do
  case $1 in
    --algo) algo=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;; --reps) reps=$2; shift 2 ;;
    --dmg) dmg=$2; shift 2 ;; --roles) roles=$2; shift 2 ;;
    *) echo "gapbs-kernel.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case $algo in tc|bc) ;; *) echo "gapbs-kernel.sh: --algo $algo; expected tc or bc" >&2; exit 2 ;; esac
[ -x "$dmg" ] || { echo "gapbs-kernel.sh: no dmg binary at $dmg (make build, or --dmg PATH)" >&2; exit 2; }
[ -x "$peers/graph.sh" ] || { echo "gapbs-kernel.sh: no $peers/graph.sh (set PEERS)" >&2; exit 2; }
dir=$("$peers/graph.sh" "$scale")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
C=${roles#cn:}; C=${C%%,*}; M=${roles##*mn:}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$reps"); do
  mpirun --oversubscribe --bind-to none -np $((C + M)) "$dmg" --roles "$roles" --json "$tmp/j.json" \
    run --algo "$algo" --graph "$dir/k$scale.bel" --out "$tmp/dmg.out" > "$tmp/dmg.log" 2>&1 || { tail -3 "$tmp/dmg.log" >&2; exit 1; }
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["times"]["compute_s"], j["summary"].get("triangles", 0), j["parameters"].get("source", 0))' "$tmp/j.json" >> "$tmp/dmg"
  case $algo in
    tc) OMP_NUM_THREADS=$(nproc) "$dir/gapbs/tc" -f "$dir/k$scale.sg" -n 1 -a > "$tmp/gap.log"
        echo "$(sed -n 's/^Trial Time: *//p' "$tmp/gap.log") $(sed -n 's/^\([0-9]*\) triangles.*/\1/p' "$tmp/gap.log" | head -1)" >> "$tmp/gapbs" ;;
    bc) src=$(tail -1 "$tmp/dmg" | cut -d' ' -f3)
        OMP_NUM_THREADS=$(nproc) "$dir/gapbs/bc" -f "$dir/k$scale.sg" -n 1 -i 1 -r "$src" -a > "$tmp/gap.log"
        echo "$(sed -n 's/^Trial Time: *//p' "$tmp/gap.log") 0" >> "$tmp/gapbs" ;;
  esac
done
med() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
d=$(cut -d' ' -f1 "$tmp/dmg" | med) g=$(cut -d' ' -f1 "$tmp/gapbs" | med)
printf '%s kron:%s (%s reps)  dmg %s: %.4f s  gapbs: %.4f s  dmg/gapbs %.2f\n' "$algo" "$scale" "$reps" "$roles" "$d" "$g" "$(awk -v d="$d" -v g="$g" 'BEGIN{print d/g}')"
case $algo in
  tc) dt=$(cut -d' ' -f2 "$tmp/dmg" | sort -u) gt=$(cut -d' ' -f2 "$tmp/gapbs" | sort -u)
      echo "triangles: dmg $dt, gapbs $gt"
      [ "$dt" = "$gt" ] || { echo "gapbs-kernel.sh: the totals differ" >&2; exit 1; } ;;
  bc) # GAPBS's analysis lists "vertex:score" lines, scores over the
      # largest. GAPBS adds the source's own dependency (the vertices it
      # reaches, less one), which Brandes and DMG leave out: the source is
      # skipped and the others compared as ratios to the first of them.
      python3 - "$tmp/dmg.out" "$tmp/gap.log" "$(tail -1 "$tmp/dmg" | cut -d' ' -f3)" <<'PY'
import re, sys
dmg = {}
for line in open(sys.argv[1]):
    v, x = line.split()
    dmg[int(v)] = float(x)
src = int(sys.argv[3])
rows = [(int(m.group(1)), float(m.group(2))) for m in re.finditer(r'^(\d+):([0-9.eE+-]+)$', open(sys.argv[2]).read(), re.M)]
rows = [r for r in rows if r[0] != src]
if len(rows) < 2:
    sys.exit("gapbs-kernel.sh: too few top scores in GAPBS's output")
(v0, g0) = rows[0]
bad = [(v, g / g0, dmg[v] / dmg[v0]) for v, g in rows if abs(dmg[v] / dmg[v0] - g / g0) > 1e-4 * (g / g0)]
print("bc: GAPBS's top vertices but the source, as ratios to vertex %d: %s; dmg agrees on %d of %d" % (
    v0, ", ".join("%d %.6g" % (v, g / g0) for v, g in rows), len(rows) - len(bad), len(rows)))
if bad:
    sys.exit("gapbs-kernel.sh: the scores differ (vertex, gapbs, dmg): %s" % bad)
PY
      ;;
esac
