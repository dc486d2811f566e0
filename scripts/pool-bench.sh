#!/bin/bash
# Issue 13 measurement: kron:22, a serve job of 2 MNs; load with cn:2,
# attach with cn:2 (same count) and cn:1 / cn:3 (a new cut), PageRank and
# BFS against a one-job run. Rounds interleaved. Environment: FAB (serve
# provider; default: serve's choice, shm on one host), MEM (--mn-mem, 4GiB), ROUNDS ("1 2 3"), G (kron:22).
set -u
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
D=${D:-./dmg}
mkdir -p /tmp/m13
G=${G:-kron:22}
P=/tmp/m13/pool.json
rm -f $P
mpirun -np 2 $D --roles mn:2 serve --pool-file $P --mn-mem ${MEM:-4GiB} ${FAB:+--fabric $FAB} > /tmp/m13/serve.log 2>&1 &
until [ -f $P ]; do sleep 0.2; done
t() { grep -o '"load_s": [0-9.e-]*\|"compute_s": [0-9.e-]*' $1 | tr '\n' ' '; echo; }
for r in ${ROUNDS:-1 2 3}; do
  mpirun -np 2 $D --roles cn:2 --json /tmp/m13/load$r.json load --pool-file $P --name g$r --graph $G > /dev/null || exit 1
  echo "round $r load cn:2: $(t /tmp/m13/load$r.json)"
  for a in pagerank bfs; do
    mpirun -np 2 $D --roles cn:2 --json /tmp/m13/a$r$a.json run --pool-file $P --name g$r --algo $a > /dev/null || exit 1
    echo "round $r attach cn:2 $a: $(t /tmp/m13/a$r$a.json)"
    mpirun -np 4 $D --roles cn:2,mn:2 --json /tmp/m13/o$r$a.json run --graph $G --algo $a > /dev/null || exit 1
    echo "round $r one-job cn:2,mn:2 $a: $(t /tmp/m13/o$r$a.json)"
  done
  for c in 1 3; do
    mpirun -np $c $D --roles cn:$c --json /tmp/m13/c$r$c.json run --pool-file $P --name g$r --algo bfs > /dev/null || exit 1
    echo "round $r attach cn:$c (new cut) bfs: $(t /tmp/m13/c$r$c.json)"
    mpirun -np $c $D --roles cn:$c --json /tmp/m13/d$r$c.json run --pool-file $P --name g$r --algo bfs > /dev/null || exit 1
    echo "round $r attach cn:$c (cut kept) bfs: $(t /tmp/m13/d$r$c.json)"
  done
  $D ls --pool-file $P | head -8
  $D ls --pool-file $P --drop g$r > /dev/null
done
$D stop --pool-file $P
wait
