#!/usr/bin/env bash
# tc-gapbs.sh: DMG's triangle count (--algo tc) against GAPBS's tc on the
# same Kronecker graph (../shared/peers/graph.sh: GAPBS's generator, scale S,
# degree 16, symmetrised), repetitions interleaved. The totals must agree;
# kernel times side by side (DMG's compute_s, GAPBS's Trial Time).
#
#   scripts/tc-gapbs.sh [--scale 16] [--reps 3] [--dmg ./dmg] [--roles cn:2,mn:2]
#
# Not part of make test: it builds GAPBS from the archive in ../shared/peers.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
peers=${PEERS:-$here/../../shared/peers}
scale=16 reps=3 dmg=$here/../dmg roles=cn:2,mn:2
while [ $# -gt 0 ]; do
  case $1 in
    --scale) scale=$2; shift 2 ;; --reps) reps=$2; shift 2 ;;
    --dmg) dmg=$2; shift 2 ;; --roles) roles=$2; shift 2 ;;
    *) echo "tc-gapbs.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$dmg" ] || { echo "tc-gapbs.sh: no dmg binary at $dmg (make build, or --dmg PATH)" >&2; exit 2; }
[ -x "$peers/graph.sh" ] || { echo "tc-gapbs.sh: no $peers/graph.sh (set PEERS)" >&2; exit 2; }
dir=$("$peers/graph.sh" "$scale")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
C=${roles#cn:}; C=${C%%,*}; M=${roles##*mn:}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for r in $(seq "$reps"); do
  mpirun --oversubscribe --bind-to none -np $((C + M)) "$dmg" --roles "$roles" --json "$tmp/j.json" \
    run --algo tc --graph "$dir/k$scale.bel" > "$tmp/dmg.log" 2>&1 || { tail -3 "$tmp/dmg.log" >&2; exit 1; }
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["times"]["compute_s"], j["summary"]["triangles"])' "$tmp/j.json" >> "$tmp/dmg"
  OMP_NUM_THREADS=$(nproc) "$dir/gapbs/tc" -f "$dir/k$scale.sg" -n 1 -a > "$tmp/gap.log"
  echo "$(sed -n 's/^Trial Time: *//p' "$tmp/gap.log") $(sed -n 's/^\([0-9]*\) triangles.*/\1/p' "$tmp/gap.log" | head -1)" >> "$tmp/gapbs"
done
med() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
d=$(cut -d' ' -f1 "$tmp/dmg" | med) g=$(cut -d' ' -f1 "$tmp/gapbs" | med)
dt=$(cut -d' ' -f2 "$tmp/dmg" | sort -u) gt=$(cut -d' ' -f2 "$tmp/gapbs" | sort -u)
printf 'tc kron:%s (%s reps)  dmg %s: %.4f s  gapbs: %.4f s  dmg/gapbs %.2f\n' "$scale" "$reps" "$roles" "$d" "$g" "$(awk -v d="$d" -v g="$g" 'BEGIN{print d/g}')"
echo "triangles: dmg $dt, gapbs $gt"
[ "$dt" = "$gt" ] || { echo "tc-gapbs.sh: the totals differ" >&2; exit 1; }
