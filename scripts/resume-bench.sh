#!/bin/bash
# Issue 35 measurement: a run that outlives its compute nodes, on G
# (kron:22) in a pool of 2 MNs loaded with cn:2.
#   1. checkpoint cost: PageRank (ITER iterations) and BFS on cn:2 with
#      --no-checkpoint, the automatic cadence and a checkpoint every
#      iteration, rounds interleaved;
#   2. PageRank killed (-9, a CN) at iteration ITER/2 and resumed on cn:2
#      and on cn:1: total time (the killed run, its lease's release, the
#      resumed run) against an uninterrupted run;
#   3. 2 and 4 PageRank runs of cn:1 at once on the graph, each against
#      the same run alone.
# Environment: G (kron:22), MEM (--mn-mem, 4GiB), ITER (100), ROUNDS
# ("1 2"), D (./dmg), OUT (/tmp/resume-bench), PARTS ("cost kill
# together": which of 1-3 to run).
# Every job runs in this script's session: one in a session of its own
# is in another scheduler autogroup than the serve job's MNs, whose nice
# then no longer yields them the cores (its PageRank took twice as long).
set -u
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
D=${D:-./dmg}
G=${G:-kron:22}
ITER=${ITER:-100}
OUT=${OUT:-/tmp/resume-bench}
mkdir -p "$OUT"
P=$OUT/pool.json
rm -f "$P"
mpirun -np 2 "$D" --roles mn:2 serve --pool-file "$P" --mn-mem "${MEM:-4GiB}" > "$OUT/serve.log" 2>&1 &
serve=$!
until [ -f "$P" ]; do sleep 0.2; kill -0 $serve || exit 1; done
trap '"$D" stop --pool-file "$P" > /dev/null; wait' EXIT
mpirun -np 2 "$D" --roles cn:2 load --pool-file "$P" --name g --graph "$G" > "$OUT/load.log" || exit 1
tail -1 "$OUT/load.log"

# run NAME CNS ARGS...: a run, its report's times and checkpoints.
run() {
	local name=$1 cn=$2
	shift 2
	local s=$(date +%s.%N)
	mpirun -np "$cn" "$D" --roles "cn:$cn" --json "$OUT/$name.json" run --pool-file "$P" --name g "$@" > "$OUT/$name.log" 2>&1 || { echo "$name failed:"; tail -3 "$OUT/$name.log"; return 1; }
	local e=$(date +%s.%N)
	printf '%-28s wall %6.2fs  %s\n' "$name" "$(echo "$e - $s" | bc)" "$(grep -o 'compute [0-9.]*s\|[0-9]* checkpoints kept in [0-9.]*s ([0-9.]*% of compute)\|resumed at iteration [0-9]*' "$OUT/$name.log" | tr '\n' ' ')"
}

PARTS=${PARTS:-cost kill together}
for r in ${ROUNDS:-1 2}; do
	[[ $PARTS == *cost* ]] || break
	echo "== round $r: checkpoint cost"
	for a in pagerank bfs; do
		run "$a-none-$r" 2 --algo $a --iterations "$ITER" --no-checkpoint
		run "$a-auto-$r" 2 --algo $a --iterations "$ITER"
		run "$a-every1-$r" 2 --algo $a --iterations "$ITER" --checkpoint-every 1
	done 2>&1 | sed 's/--iterations [0-9]*//'
done

if [[ $PARTS == *kill* ]]; then
	echo "== PageRank killed at iteration $((ITER / 2)), resumed"
	for cn in 2 1; do
		s=$(date +%s.%N)
		mpirun -np 2 "$D" --roles cn:2 -v run --pool-file "$P" --name g --algo pagerank --iterations "$ITER" > "$OUT/killed$cn.log" 2>&1 &
		m=$!
		until grep -q "iter $((ITER / 2)) " "$OUT/killed$cn.log"; do sleep 0.05; kill -0 $m 2> /dev/null || break; done
		pkill -9 -P "$m" -n dmg
		wait $m
		k=$(date +%s.%N)
		grep -o 'checkpoint after iteration [0-9]*' "$OUT/killed$cn.log" | tail -1
		run "resumed-cn$cn" $cn --algo pagerank --iterations "$ITER" --resume
		e=$(date +%s.%N)
		printf 'killed run %.2fs + resumed on cn:%d: total %.2fs\n' "$(echo "$k - $s" | bc)" $cn "$(echo "$e - $s" | bc)"
	done
	run "uninterrupted" 2 --algo pagerank --iterations "$ITER"
fi
[[ $PARTS == *together* ]] || exit 0
echo "== runs at once on one graph (cn:1 each, PageRank)"
run "alone" 1 --algo pagerank --iterations "$ITER"
for k in 2 4; do
	pids=()
	for i in $(seq $k); do
		run "together$k-$i" 1 --algo pagerank --iterations "$ITER" &
		pids+=($!)
	done
	wait "${pids[@]}"
done
