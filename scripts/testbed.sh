#!/usr/bin/env bash
# testbed.sh: a cluster of emulated hosts on this one machine, for DMG's tests across hosts.
#
#   testbed.sh up N               hosts dmg1-h1..dmg1-hN (idempotent); prints the state directory
#   testbed.sh down               ends every process on the hosts, removes them, the bridge, /etc/hosts lines
#   testbed.sh mpirun ARGS...     mpirun over the hosts (their hostfile; add -np K, --host H1,H2 or --map-by)
#   testbed.sh exec HOST CMD...   runs CMD on HOST (its network, hostname, process ids, mounts)
#   testbed.sh hosts K            prints "dmg1-h1,...,dmg1-hK"
#   testbed.sh cut HOST           takes HOST's link down (a partition); heal HOST brings it back
#   testbed.sh blip HOST SECONDS  drops all of HOST's traffic for SECONDS, its link up
#   testbed.sh kill HOST          kills HOST: every process in its PID namespace (up brings it back)
#   testbed.sh pids HOST          the process ids, as this machine sees them, of what runs on HOST
#   testbed.sh reset              every host up, linked, and running nothing but its init (between tests)
#   testbed.sh check              exits 0 when hosts can be made here, else prints why and exits 3
#
# A host is a set of Linux namespaces held by one process (its init, pid 1 inside):
#   - network: a veth pair whose outer end is on the bridge dmg1-br; host I is 10.214.1.I/24 on
#     its eth0, the bridge 10.214.1.254 (where mpirun and slurmctld run). No host has a default
#     route: its addresses reach the bridge and nothing else.
#   - hostname (UTS): dmg1-hI, also in /etc/hosts (lines marked "# dmg-testbed-1", removed by down);
#   - process ids: its own /proc, so a rank sees only its host's processes; killing the init kills
#     the host;
#   - mounts: a private /dev/shm (libfabric's shm provider cannot reach across hosts) and /proc.
#     Everything else (/tmp, the checkout) is the machine's: a file system every host sees.
# Open MPI starts its daemons on a host through the rsh agent this script writes (plm_rsh_agent),
# which enters the host's namespaces with nsenter. The machine's cores are still shared.
# DMG_TESTBED_ID=K (1..99, default 1) makes another, independent test bed: dmgK-hI on 10.214.K.0/24,
# bridge dmgK-br, state in /run/dmg-testbed-K.
# Needs root, and a kernel with network, PID, UTS and mount namespaces, veth and bridges.
set -euo pipefail
ID=${DMG_TESTBED_ID:-1}
[[ $ID =~ ^[1-9][0-9]?$ ]] || { echo "testbed.sh: DMG_TESTBED_ID must be 1..99" >&2; exit 2; }
STATE=/run/dmg-testbed-$ID
PREFIX=dmg$ID-h
BR=dmg$ID-br
VETH=dmg$ID-v
NET=10.214.$ID
MARK="# dmg-testbed-$ID"
die() { echo "testbed.sh: $*" >&2; exit 2; }

# check: can hosts be made here? One line saying why not.
check() {
  [ "$(id -u)" = 0 ] || { echo "testbed: needs root (network namespaces, veth, a bridge)"; exit 3; }
  for c in ip nsenter unshare; do
    command -v "$c" >/dev/null || { echo "testbed: $c is not installed (iproute2, util-linux)"; exit 3; }
  done
  local probe=dmgprobe$$
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "testbed: cannot create a network namespace (no CONFIG_NET_NS, or not permitted here)"; exit 3
  fi
  local ok=1
  ip link add "$probe" type bridge 2>/dev/null && ip link del "$probe" || ok=0
  ip netns del "$probe"
  [ $ok = 1 ] || { echo "testbed: cannot create a bridge (no CONFIG_BRIDGE)"; exit 3; }
  unshare --uts --pid --mount --fork true 2>/dev/null || { echo "testbed: cannot create PID, UTS and mount namespaces"; exit 3; }
}

host_ok() { [[ $1 =~ ^$PREFIX[0-9]+$ ]] || die "no such host '$1' (hosts are ${PREFIX}1..${PREFIX}N)"; }

# init: the pid, as this machine sees it, of HOST's init (empty when the host is down).
init() {
  local f="$STATE/$1.pid" p
  [ -f "$f" ] || return 0
  p=$(cat "$f")
  [ -d "/proc/$p" ] && [ "$(readlink "/proc/$p/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] && echo "$p"
  return 0
}

# REAPER is a host's init: it reaps every process orphaned on the host (perl-base is essential).
REAPER='$0 = "dmg-testbed-init"; while (1) { sleep 1 if wait() == -1 }'

up_host() {
  local h=$1 i=${1#"$PREFIX"} p u
  if ! ip netns list | grep -qw "^$h"; then
    ip netns add "$h"
    ip link add "$VETH$i" type veth peer name eth0 netns "$h"
    ip link set "$VETH$i" master "$BR" up
    ip -n "$h" addr add "$NET.$i/24" dev eth0
    ip -n "$h" link set eth0 up
    ip -n "$h" link set lo up
  fi
  ip link set "$VETH$i" up
  queue "$i" 1000
  grep -q " $h $MARK$" /etc/hosts || echo "$NET.$i $h $MARK" >> /etc/hosts
  [ -n "$(init "$h")" ] && return 0
  # The host's init: new UTS, PID and mount namespaces inside the network namespace, holding them
  # for whatever later enters them (nsenter). --kill-child: it dies with its unshare.
  setsid nsenter --net="/run/netns/$h" unshare --uts --pid --mount --fork --kill-child --mount-proc \
    sh -c 'hostname "$0"; mount -t tmpfs -o mode=1777 tmpfs /dev/shm; exec perl -e "$1"' "$h" "$REAPER" \
    </dev/null >/dev/null 2>&1 &
  u=$!
  for _ in $(seq 100); do
    p=$(pgrep -P "$u" 2>/dev/null | head -1 || true)
    if [ -n "$p" ] && [ "$(readlink "/proc/$p/ns/uts" 2>/dev/null)" != "$(readlink /proc/self/ns/uts)" ] \
      && [ "$(nsenter -t "$p" --uts hostname 2>/dev/null)" = "$h" ]; then
      echo "$p" > "$STATE/$h.pid"
      return 0
    fi
    sleep 0.05
  done
  die "host $h did not start"
}

up() {
  local n=$1 i
  [ "$n" -ge 1 ] 2>/dev/null || die "up N: N must be a positive number"
  check >/dev/null || die "$(check || true)"
  mkdir -p "$STATE"
  ip link show "$BR" >/dev/null 2>&1 || { ip link add "$BR" type bridge; ip addr add "$NET.254/24" dev "$BR"; }
  ip link set "$BR" up
  : > "$STATE/hostfile.new"
  for i in $(seq "$n"); do
    up_host "$PREFIX$i"
    echo "$PREFIX$i slots=8" >> "$STATE/hostfile.new"
  done
  mv "$STATE/hostfile.new" "$STATE/hostfile"
  cat > "$STATE/agent" <<EOF
#!/usr/bin/env bash
# Open MPI's rsh agent into the emulated hosts: agent HOST COMMAND... runs COMMAND on HOST.
exec "$(realpath "$0")" exec "\$@"
EOF
  chmod +x "$STATE/agent"
  echo "$STATE"
}

# exec HOST CMD...: CMD in HOST's namespaces (one string, as an rsh agent receives it, or words).
exec_on() {
  local h=$1 p; shift
  host_ok "$h"
  p=$(init "$h")
  [ -n "$p" ] || { echo "testbed: host $h is down" >&2; exit 255; }
  exec nsenter -t "$p" --net --uts --pid --mount -- /bin/sh -c "$*"
}

down() {
  local h i p
  for h in $(ip netns list | awk '{print $1}' | grep "^$PREFIX[0-9][0-9]*$" || true); do
    i=${h#"$PREFIX"}
    p=$(init "$h"); [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true
    for p in $(ip netns pids "$h" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
    ip link del "$VETH$i" 2>/dev/null || true
    ip netns del "$h" 2>/dev/null || true
  done
  ip link del "$BR" 2>/dev/null || true
  sed -i "/ $MARK\$/d" /etc/hosts
  rm -rf "$STATE"
}

# pids HOST: every process in HOST's PID namespace (or, when it is down, still in its network).
pids() {
  local h=$1 p ns
  host_ok "$h"
  p=$(init "$h")
  if [ -n "$p" ]; then
    ns=$(readlink "/proc/$p/ns/pid")
    for d in /proc/[0-9]*; do
      [ "$(readlink "$d/ns/pid" 2>/dev/null)" = "$ns" ] && [ "${d#/proc/}" != "$p" ] && echo "${d#/proc/}"
    done
  fi
  # and what entered only its network (none of DMG's doing; listed so that nothing hides)
  for p in $(ip netns pids "$h" 2>/dev/null); do
    [ -d "/proc/$p" ] && [ "$(readlink "/proc/$p/ns/pid")" = "$(readlink /proc/self/ns/pid)" ] \
      && [ "$(cat "/proc/$p/comm")" != unshare ] && echo "$p"
  done
  return 0
}

# reset: heal every link, bring back killed hosts, end what runs on them.
# queue I LEN: each end of host I's veth pair has a packet queue (pfifo) of LEN packets. A blip
# makes both 0, which drops every packet of the host both ways while the link stays up, then
# gives them their length back. Only the length changes, at once: bringing a link back up, or
# adding and removing a queue, makes the kernel quiesce the link, which on a loaded machine of
# two cores came up to 17 s late (a blip of 1 s by link down and up once lasted 18 s).
# The host's end is reached by entering its network namespace alone (nsenter --net): `tc -n`
# also remounts /sys in a mount namespace of its own, whose umount waits for an RCU grace period
# (synchronize_rcu_expedited), and on a loaded machine that wait made a heal 3 s late; a blip of
# 1 s lasted up to 11 s (likely the 17 s silence of a host that once failed CI's TestHostLinkHealed).
queue() {
  local ns="nsenter --net=/run/netns/$PREFIX$1"
  tc qdisc change dev "$VETH$1" root pfifo limit "$2" 2>/dev/null || tc qdisc replace dev "$VETH$1" root pfifo limit "$2"
  $ns tc qdisc change dev eth0 root pfifo limit "$2" 2>/dev/null || $ns tc qdisc replace dev eth0 root pfifo limit "$2"
}

reset() {
  local h i p ip
  [ -f "$STATE/hostfile" ] || die "no test bed: run 'testbed.sh up N' first"
  for h in $(awk '{print $1}' "$STATE/hostfile"); do
    i=${h#"$PREFIX"}
    ip link set "$VETH$i" up
    queue "$i" 1000
    p=$(init "$h")
    if [ -z "$p" ]; then up_host "$h"; continue; fi
    for ip in $(pids "$h"); do
      [ "$(readlink "/proc/$ip/ns/pid" 2>/dev/null)" = "$(readlink "/proc/$p/ns/pid")" ] && { kill -9 "$ip" 2>/dev/null || true; }
    done
  done
  return 0
}

case ${1:-} in
  check) check ;;
  reset) reset ;;
  up) up "${2:-4}" ;;
  down) down ;;
  hosts) seq "${2:?hosts K}" | sed "s/^/$PREFIX/" | paste -sd, ;;
  exec) shift; exec_on "$@" ;;
  mpirun)
    shift
    [ -x "$STATE/agent" ] || die "no test bed: run 'testbed.sh up N' first"
    # Open MPI's daemons talk over the bridge alone. Their connections to mpirun probe the
    # other end after 2 s idle, once a second, five times: a host behind a cut link is found lost
    # within 7 s, and mpirun ends the job, while a link back within 3 s or so is ridden out (a
    # healed veth passes packets again 0.5-1.3 s after it is up); the default takes 8 minutes,
    # and once mpirun has sent
    # anything to the lost host, no keepalive runs and it waits for ever (docs/design.md:
    # a job across hosts in a partition). The environment or --mca overrides these.
    export OMPI_MCA_oob_tcp_keepalive_time=${OMPI_MCA_oob_tcp_keepalive_time:-2}
    export OMPI_MCA_oob_tcp_keepalive_intvl=${OMPI_MCA_oob_tcp_keepalive_intvl:-1}
    export OMPI_MCA_oob_tcp_keepalive_probes=${OMPI_MCA_oob_tcp_keepalive_probes:-5}
    exec mpirun --allow-run-as-root --oversubscribe --bind-to none --hostfile "$STATE/hostfile" \
      --mca plm_rsh_agent "$STATE/agent" --mca oob_tcp_if_include "$NET.0/24" \
      --mca btl_tcp_if_include "$NET.0/24" "$@" ;;
  cut) host_ok "${2:?cut HOST}"; ip link set "$VETH${2#"$PREFIX"}" down ;;
  heal) host_ok "${2:?heal HOST}"; ip link set "$VETH${2#"$PREFIX"}" up ;;
  blip)
    # drop every packet of HOST for SECONDS (queue), at real-time priority: on a machine of
    # few cores the job's retries during the cut can keep an ordinary process from running
    # for seconds (docs/design.md), which would make the cut that much longer
    host_ok "${2:?blip HOST SECONDS}"
    chrt -f -p 50 $$ >/dev/null 2>&1 || true
    queue "${2#"$PREFIX"}" 0
    sleep "${3:?blip HOST SECONDS}"
    queue "${2#"$PREFIX"}" 1000 ;;
  kill)
    host_ok "${2:?kill HOST}"
    p=$(init "$2"); [ -n "$p" ] && kill -9 "$p"
    rm -f "$STATE/$2.pid" ;;
  pids) pids "${2:?pids HOST}" ;;
  *) sed -n '2,13p' "$0" >&2; exit 2 ;;
esac
