#!/usr/bin/env bash
# testbed-slurm.sh: a real Slurm cluster on the test bed of emulated hosts (scripts/testbed.sh).
#
#   testbed-slurm.sh up N     testbed.sh up N, then munged, slurmctld on the bridge address and one
#                             slurmd per host (idempotent); waits until sinfo shows the N nodes idle
#   testbed-slurm.sh down     stops every Slurm daemon and munged, then testbed.sh down
#   testbed-slurm.sh env      prints the line that points Slurm's commands here: export SLURM_CONF=...
#   testbed-slurm.sh status   sinfo of the cluster
#
# Everything lives in the test bed's state directory ($STATE/slurm), nothing in /etc:
#   - munged with its own key (made when missing) and socket, in the machine's namespaces;
#   - slurmctld in the machine's network, named dmgK-ctl, bound to the bridge address alone (10.214.K.254,
#     NoCtldInAddrAny), on port 6900+K so that test beds do not meet;
#   - slurmd -N dmgK-hI started inside host I (testbed.sh exec: its network, hostname, process
#     ids, mounts), so its jobs' tasks run on that host and see its /dev/shm. Each slurmd has
#     its own spool, log and TmpFS directory (the PMIx plugin's per-step directories are made
#     under TmpFS and would collide on a directory every host shares).
# No cgroups: proctrack/linuxproc, task/none. SlurmUser=root. srun --mpi=pmix works (libpmix), with
# every PMIx fence on the tree (mpi.conf; see write_conf) and KillOnBadExit=1.
# DMG_TESTBED_ID=K selects the test bed, as for testbed.sh.
set -euo pipefail
ID=${DMG_TESTBED_ID:-1}
[[ $ID =~ ^[1-9][0-9]?$ ]] || { echo "testbed-slurm.sh: DMG_TESTBED_ID must be 1..99" >&2; exit 2; }
TB=$(dirname "$(realpath "$0")")/testbed.sh
STATE=/run/dmg-testbed-$ID
SL=$STATE/slurm
CONF=$SL/slurm.conf
PREFIX=dmg$ID-h
NET=10.214.$ID
export SLURM_CONF=$CONF
die() { echo "testbed-slurm.sh: $*" >&2; exit 2; }

need() {
  local c
  for c in munged slurmctld slurmd sinfo srun; do
    command -v "$c" >/dev/null || die "$c is not installed: 'make deps' installs slurm-wlm and munge"
  done
}

# alive PIDFILE: the process of PIDFILE (in the machine's PID namespace) runs.
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# slurmd_alive HOST: HOST's slurmd runs (its pid file holds its pid inside the host's PID
# namespace: look for its command line instead).
slurmd_alive() {
  local p
  for p in $(ours slurmd); do grep -qzx -- "$1" "/proc/$p/cmdline" 2>/dev/null && return 0; done
  return 1
}

write_conf() {
  local n=$1 i
  {
    cat <<EOF
# Written by scripts/testbed-slurm.sh for test bed $ID ($n hosts). Not for /etc.
ClusterName=dmg$ID
SlurmctldHost=dmg$ID-ctl($NET.254)
SlurmctldPort=$((6900 + ID))
SlurmdPort=6818
CommunicationParameters=NoCtldInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SL/munge.socket
StateSaveLocation=$SL/ctld
SlurmctldPidFile=$SL/slurmctld.pid
SlurmctldLogFile=$SL/slurmctld.log
SlurmdSpoolDir=$SL/%n/spool
SlurmdPidFile=$SL/%n/slurmd.pid
SlurmdLogFile=$SL/%n/slurmd.log
TmpFS=$SL/%n/tmp
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
MessageTimeout=20
InactiveLimit=0
KillWait=5
# A task that fails ends its step: ranks still in MPI_Init would otherwise wait for it forever.
KillOnBadExit=1
SlurmctldDebug=info
SlurmdDebug=info
EOF
    # sbatch --wait polls a job every 2 s, then 8, then 32, while the step is below MinJobAge/2:
    # at 4 it keeps to 2 s (a test's 10 s job ends in 10 s, not 42).
    echo "MinJobAge=4"
    # The machine's cores are shared by every host; each host offers 8 (config_overrides), as
    # testbed.sh's hostfile does.
    for i in $(seq "$n"); do
      echo "NodeName=$PREFIX$i NodeAddr=$NET.$i CPUs=8 RealMemory=1024 State=UNKNOWN"
    done
    echo "PartitionName=dmg Nodes=$PREFIX[1-$n] Default=YES MaxTime=INFINITE State=UP"
  } > "$CONF.new"
  # The PMIx plugin's fences all on its tree. By default Slurm 22.05 runs a fence that collects
  # data on a ring and one that does not on a tree, two collectives it does not order: Open MPI
  # 4.1's MPI_Init fences twice (its modex, then a barrier once its receive handlers are in
  # place), and a rank could leave MPI_Init while another was still in the modex; its first
  # message then found no handler and killed that rank (SIGSEGV at address 0 in btl/tcp,
  # 10 of 150 srun starts on a loaded machine; 0 of 150 with the tree alone).
  echo "PMIxCollFence=tree" > "$SL/mpi.conf.new"
  if cmp -s "$CONF.new" "$CONF" && cmp -s "$SL/mpi.conf.new" "$SL/mpi.conf"; then
    rm "$CONF.new" "$SL/mpi.conf.new"
  else
    # Another size or setting: the daemons start again on the new configuration.
    stop_slurm
    mv "$CONF.new" "$CONF"
    mv "$SL/mpi.conf.new" "$SL/mpi.conf"
  fi
}

start_munged() {
  alive "$SL/munged.pid" && return 0
  if [ ! -f "$SL/munge.key" ]; then
    (umask 077; dd if=/dev/urandom of="$SL/munge.key" bs=1024 count=1 status=none)
  fi
  chmod 0400 "$SL/munge.key"
  munged --force --key-file="$SL/munge.key" --socket="$SL/munge.socket" --pid-file="$SL/munged.pid" \
    --log-file="$SL/munged.log" --seed-file="$SL/munged.seed"
}

start_slurmctld() {
  alive "$SL/slurmctld.pid" && return 0
  mkdir -p "$SL/ctld"
  # NoCtldInAddrAny binds the address its own host name resolves to: slurmctld runs under the
  # name dmgK-ctl (a UTS namespace of its own), which /etc/hosts maps to the bridge address
  # (a line testbed.sh down removes with its others). -i: a state saved by an earlier
  # configuration is dropped, not fatal.
  grep -q " dmg$ID-ctl # dmg-testbed-$ID\$" /etc/hosts || echo "$NET.254 dmg$ID-ctl # dmg-testbed-$ID" >> /etc/hosts
  unshare --uts sh -c 'hostname "$0" && exec slurmctld -i -f "$1"' "dmg$ID-ctl" "$CONF" || die "slurmctld did not start ($SL/slurmctld.log):
$(tail -5 "$SL/slurmctld.log" 2>/dev/null)"
}

start_slurmd() {
  local h=$1
  slurmd_alive "$h" && return 0
  mkdir -p "$SL/$h/spool" "$SL/$h/tmp"
  "$TB" exec "$h" "slurmd -f $CONF -N $h" || die "slurmd on $h did not start ($SL/$h/slurmd.log):
$(tail -5 "$SL/$h/slurmd.log" 2>/dev/null)"
}

# wait_ready N: until sinfo shows N nodes that respond and take jobs: idle (or running a job
# already). A node that registers again after its host came back is idle on its own
# (ReturnToService=2).
wait_ready() {
  local n=$1 k
  for _ in $(seq 150); do
    k=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle" || $2 == "alloc" || $2 == "mix"' | sort -u | wc -l)
    [ "$k" -ge "$n" ] && return 0
    sleep 0.2
  done
  sinfo -N >&2 || true
  die "$n nodes expected up and idle after 30 s (logs in $SL)"
}

up() {
  local n=$1 i
  [ "$n" -ge 1 ] 2>/dev/null || die "up N: N must be a positive number"
  need
  "$TB" up "$n" >/dev/null
  mkdir -p "$SL"
  start_munged
  write_conf "$n"
  start_slurmctld
  for i in $(seq "$n"); do start_slurmd "$PREFIX$i"; done
  wait_ready "$n"
  echo "$SL"
}

# ours NAME...: the pids (in the machine's PID namespace, which sees the hosts' processes too)
# of this test bed's daemons called NAME: their command lines name files in $SL. Pid files alone
# would miss a daemon whose state directory testbed.sh down removed.
ours() {
  local d n a
  for d in /proc/[0-9]*; do
    { mapfile -d '' -t a < "$d/cmdline"; } 2>/dev/null || continue
    [ ${#a[@]} -gt 0 ] && [[ " ${a[*]} " == *" $SL/"* || " ${a[*]} " == *"=$SL/"* ]] || continue
    for n; do [ "${a[0]}" = "$n" ] && echo "${d#/proc/}"; done
  done
  return 0
}

# stop PID...: SIGTERM, then SIGKILL to what is left after 10 s.
stop() {
  local p left
  [ $# -gt 0 ] || return 0
  kill "$@" 2>/dev/null || true
  for _ in $(seq 100); do
    left=0
    for p; do kill -0 "$p" 2>/dev/null && left=1; done
    [ $left = 0 ] && return 0
    sleep 0.1
  done
  kill -9 "$@" 2>/dev/null || true
}

# stop_slurm: every slurmd and slurmctld of this test bed (munged stays).
stop_slurm() {
  # shellcheck disable=SC2046 # one pid a word
  stop $(ours slurmd slurmctld)
}

down() {
  # shellcheck disable=SC2046
  stop $(ours slurmd slurmctld munged)
  "$TB" down
}

case ${1:-} in
  up) up "${2:-4}" ;;
  down) down ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  status) sinfo ;;
  *) sed -n '2,8p' "$0" >&2; exit 2 ;;
esac
