#!/usr/bin/env bash
# Runs a second, fully separate Docker engine on this machine, inside its own
# network namespace, for tests in which two workers each drive their own
# engine and one worker's network link is cut for a while.
#
# Everything the engine owns lives under DIR (keep DIR short: unix socket
# paths must stay under 108 bytes) or is named after a hash of DIR:
#   network namespace  arena-e2-<h>        (h: 8 hex digits of sha256(DIR))
#   veth pair          e2h-<h> (host side, HOST_IP/30)
#                      e2n-<h> (in the namespace, NS_IP/30, default route)
#                      with HOST_IP/NS_IP .1/.2 of 10.213.<a>.<b>/30
#   bridge             arena-e2br (inside the namespace only, 10.214.<a>.1/24)
#   containerd         its own: DIR/containerd (config, root, state, socket)
#   dockerd            DIR/docker.sock, DIR/data, DIR/exec, DIR/dockerd.pid,
#                      DIR/daemon.json (never /etc/docker/daemon.json),
#                      with the runtimes start was given registered in it,
#                      containers under the cgroup arena-e2-<h>
#   logs               DIR/dockerd.log, DIR/containerd.log
# The host engine, its containers, docker0 and the host's iptables are never
# touched: dockerd and containerd run with their network namespace switched
# (nsenter --net), so the bridge and every iptables rule dockerd writes live
# in the namespace.
#
# Usage: second-engine.sh start DIR [NAME=PATH]...
#                                          start (or report) the engine; each
#                                          NAME=PATH registers the OCI runtime
#                                          at PATH (an absolute path, e.g. a
#                                          gVisor runsc) under NAME beside runc
#        second-engine.sh env DIR          the lines start prints, engine running
#        second-engine.sh load DIR IMAGE.. copy images from the engine `docker`
#                                          reaches (the host's) to this one
#        second-engine.sh cut DIR          cut the link host <-> namespace
#        second-engine.sh heal DIR         restore it
#        second-engine.sh stop DIR         stop everything, remove the network
#                                          (DIR and the engine's data stay)
# start and env print, one per line on stdout:
#   DOCKER_HOST=unix://DIR/docker.sock NETNS=... HOST_IP=... NS_IP=... HOST_VETH=...
# Everything else goes to stderr. Needs root, ip, iptables, nsenter, setsid,
# pgrep, dockerd, containerd and docker.
#
# Why not `ip netns exec NS dockerd`: ip netns exec gives the command a new
# mount namespace with a fresh /sys, in which /sys/fs/cgroup is empty, and the
# engine cannot create a container there. nsenter --net switches the network
# namespace only; dockerd's mounts then appear in the host's mount table
# under DIR, and stop unmounts whatever is left.
#
# Why its own containerd: with --containerd unset, dockerd attaches to the
# system containerd whenever /run/containerd/containerd.sock exists (as with
# docker-ce and its containerd.io service), and only otherwise starts one of
# its own. A second engine on the system containerd would share its state with
# the host engine, so this script always starts a containerd of its own and
# passes --containerd.
set -euo pipefail

prog=second-engine
say() { echo "$prog: $*" >&2; }
die() {
  echo "$prog: $*" >&2
  exit 1
}

usage() {
  sed -n '/^# Usage:/,/^# Everything else/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# names DIR sets every name and path of the engine that lives in DIR.
names() {
  [[ -n $1 ]] || die "DIR is empty"
  dir=$(realpath -m -- "$1")
  local h
  h=$(printf '%s' "$dir" | sha256sum | cut -c1-8)
  ns=arena-e2-$h
  veth_host=e2h-$h
  veth_ns=e2n-$h
  local a=$((16#${h:0:2})) b=$((16#${h:2:2} % 64 * 4))
  host_ip=10.213.$a.$((b + 1))
  ns_ip=10.213.$a.$((b + 2))
  bridge=arena-e2br
  bridge_cidr=10.214.$a.1/24
  address_pool=10.215.0.0/16
  cgroup_parent=arena-e2-$h
  sock=$dir/docker.sock
  docker_host=unix://$sock
  ctr_dir=$dir/containerd
  ctr_sock=$ctr_dir/containerd.sock
  ctr_pidfile=$ctr_dir/containerd.pid
  dockerd_pidfile=$dir/dockerd.pid
  dockerd_launch_pidfile=$dir/dockerd.launch.pid
  local p
  for p in "$sock" "$ctr_sock.ttrpc"; do
    ((${#p} < 108)) || die "socket path $p is ${#p} bytes, too long for a unix socket (limit 107): use a shorter DIR"
  done
}

need_root() {
  [[ $(id -u) == 0 ]] || die "needs root (network namespaces, dockerd)"
}

need_tools() {
  local t missing=()
  for t in "$@"; do
    command -v "$t" >/dev/null || missing+=("$t")
  done
  ((${#missing[@]} == 0)) || die "missing tools: ${missing[*]}"
}

# e2 runs a docker client against the second engine.
e2() { env -u DOCKER_CONTEXT DOCKER_HOST="$docker_host" docker "$@"; }
# hostdocker runs a docker client against the engine the caller reaches.
hostdocker() { docker "$@"; }

ns_exists() { [[ -e /run/netns/$ns ]]; }
in_ns() { ip netns exec "$ns" "$@"; }

# alive PID WORD: PID is a live process whose command line contains WORD
# (a pid file alone could name a recycled pid).
alive() {
  local pid=$1 word=$2 cmd
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
  [[ -n $cmd && $cmd == *"$word"* ]]
}

readpid() { cat "$1" 2>/dev/null || true; }

dockerd_pid() {
  local p
  for p in "$(readpid "$dockerd_pidfile")" "$(readpid "$dockerd_launch_pidfile")"; do
    if alive "$p" "$dir/data"; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

# launched says whether the process started for dockerd still runs: while
# it execs (setsid, nsenter, dockerd) its command line may read empty for
# an instant, which dockerd_pid would take for an exit.
launched() {
  local pid state
  pid=$(readpid "$dockerd_launch_pidfile")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
  [[ -n $state && $state != Z ]]
}

containerd_pid() {
  local p
  p=$(readpid "$ctr_pidfile")
  alive "$p" "$ctr_dir/config.toml" && echo "$p"
}

answers() { e2 version --format '{{.Server.Version}}' >/dev/null 2>&1; }

print_env() {
  cat <<EOF
DOCKER_HOST=$docker_host
NETNS=$ns
HOST_IP=$host_ip
NS_IP=$ns_ip
HOST_VETH=$veth_host
EOF
}

# storage_driver picks overlay2 when the kernel's overlayfs works on DIR's
# file system, else the host engine's driver (fuse-overlayfs on a host whose
# overlayfs does not work there), else vfs. ARENA_E2_STORAGE_DRIVER overrides.
storage_driver() {
  if [[ -n ${ARENA_E2_STORAGE_DRIVER:-} ]]; then
    echo "$ARENA_E2_STORAGE_DRIVER"
    return
  fi
  local t ok=0
  t=$(mktemp -d "$dir/.overlay-probe.XXXXXX")
  mkdir "$t/l" "$t/u" "$t/w" "$t/m"
  if mount -t overlay overlay -o "lowerdir=$t/l,upperdir=$t/u,workdir=$t/w" "$t/m" 2>/dev/null; then
    ok=1
    umount "$t/m"
  fi
  rm -rf "$t"
  if ((ok)); then
    echo overlay2
    return
  fi
  local host
  host=$(hostdocker info --format '{{.Driver}}' 2>/dev/null || true)
  if [[ $host == fuse-overlayfs ]] && command -v fuse-overlayfs >/dev/null; then
    echo fuse-overlayfs
  else
    echo vfs
  fi
}

wait_socket() { # PATH SECONDS
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    [[ -S $1 ]] && return 0
    sleep 0.1
  done
  return 1
}

start_network() {
  # A /30 already on some other interface means another engine (or anything
  # else) uses this subnet: refuse rather than break its routing.
  if ip -4 -o addr show | grep -v " $veth_host " | grep -qE " inet (${host_ip//./\\.}|${ns_ip//./\\.})/"; then
    die "address $host_ip or $ns_ip is already in use on this host; choose another DIR"
  fi
  ns_exists || ip netns add "$ns"
  if ! ip link show "$veth_host" >/dev/null 2>&1; then
    ip -n "$ns" link del "$veth_ns" >/dev/null 2>&1 || true
    ip link add name "$veth_host" type veth peer name "$veth_ns" netns "$ns"
  fi
  ip addr replace "$host_ip/30" dev "$veth_host"
  ip link set "$veth_host" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr replace "$ns_ip/30" dev "$veth_ns"
  ip -n "$ns" link set "$veth_ns" up
  ip -n "$ns" route replace default via "$host_ip" dev "$veth_ns"
  if ! ip -n "$ns" link show "$bridge" >/dev/null 2>&1; then
    ip -n "$ns" link add name "$bridge" type bridge
  fi
  ip -n "$ns" addr replace "$bridge_cidr" dev "$bridge"
  ip -n "$ns" link set "$bridge" up
}

start_containerd() {
  if containerd_pid >/dev/null; then
    return
  fi
  mkdir -p "$ctr_dir/root" "$ctr_dir/state"
  rm -f "$ctr_sock" "$ctr_sock.ttrpc"
  # No CRI (no Kubernetes here), no NRI (its socket sits at a fixed path a
  # system containerd may own), no /opt/containerd.
  cat >"$ctr_dir/config.toml" <<EOF
version = 2
root = "$ctr_dir/root"
state = "$ctr_dir/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.nri.v1.nri", "io.containerd.internal.v1.opt"]

[grpc]
  address = "$ctr_sock"

[ttrpc]
  address = "$ctr_sock.ttrpc"

[debug]
  address = ""
  level = "info"

[metrics]
  address = ""
EOF
  setsid nsenter --net="/run/netns/$ns" -- containerd --config "$ctr_dir/config.toml" \
    </dev/null >>"$dir/containerd.log" 2>&1 &
  echo $! >"$ctr_pidfile"
  if ! wait_socket "$ctr_sock" 20; then
    tail -n 30 "$dir/containerd.log" >&2 || true
    die "containerd did not open $ctr_sock within 20 s (its log's end is above; clean up with: $0 stop $dir)"
  fi
}

# runtimes_json NAME=PATH... prints the daemon.json lines registering them.
runtimes_json() {
  (($# > 0)) || return 0
  local spec name path sep=""
  printf '  "runtimes": {'
  for spec in "$@"; do
    name=${spec%%=*}
    path=${spec#*=}
    printf '%s"%s": {"path": "%s"}' "$sep" "$name" "$path"
    sep=", "
  done
  printf '},\n'
}

# check_runtimes NAME=PATH...: each names a runtime by a plain name and an
# absolute path to an executable.
check_runtimes() {
  local spec name path
  for spec in "$@"; do
    [[ $spec == *=* ]] || die "runtime $spec: want NAME=PATH"
    name=${spec%%=*}
    path=${spec#*=}
    [[ $name =~ ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ ]] || die "runtime name $name: want letters, digits, _ . -"
    [[ $name != runc ]] || die "runtime runc is the engine's own; name yours otherwise"
    [[ $path == /* && $path != *'"'* && $path != *'\\'* ]] || die "runtime $name: $path is not a plain absolute path"
    [[ -x $path ]] || die "runtime $name: $path is not an executable file"
  done
}

start_dockerd() {
  local driver=$1 major key=""
  shift
  # Before 23.0 dockerd takes its engine ID from /etc/docker/key.json, so the
  # second engine would report the host engine's ID; give it a key of its own.
  # (From 23.0 on the ID lives in the data root, and the option is gone.)
  major=$(dockerd --version | sed -nE 's/^Docker version ([0-9]+)\..*/\1/p')
  if [[ -n $major ]] && ((major < 23)); then
    key="\"deprecated-key-path\": \"$dir/key.json\","
  fi
  cat >"$dir/daemon.json" <<EOF
{
  $key
$(runtimes_json "$@")
  "storage-driver": "$driver",
  "bridge": "$bridge",
  "default-address-pools": [{"base": "$address_pool", "size": 24}],
  "exec-opts": ["native.cgroupdriver=cgroupfs"],
  "cgroup-parent": "/$cgroup_parent",
  "ip6tables": false,
  "log-level": "info"
}
EOF
  rm -f "$sock"
  echo "--- $(date -Is) start" >>"$dir/dockerd.log"
  env -u NOTIFY_SOCKET -u DOCKER_HOST setsid nsenter --net="/run/netns/$ns" -- \
    dockerd --config-file "$dir/daemon.json" \
    --host "$docker_host" \
    --data-root "$dir/data" \
    --exec-root "$dir/exec" \
    --pidfile "$dockerd_pidfile" \
    --containerd "$ctr_sock" \
    </dev/null >>"$dir/dockerd.log" 2>&1 &
  echo $! >"$dockerd_launch_pidfile"
}

cmd_start() {
  need_root
  need_tools ip iptables nsenter setsid pgrep dockerd containerd docker sha256sum realpath
  names "$1"
  shift
  check_runtimes "$@"
  mkdir -p "$dir"
  if dockerd_pid >/dev/null && answers; then
    local spec missing=()
    for spec in "$@"; do
      e2 info --format '{{json .Runtimes}}' | grep -q "\"${spec%%=*}\"" || missing+=("${spec%%=*}")
    done
    ((${#missing[@]} == 0)) || die "the engine in $dir already runs without runtime ${missing[*]}; stop it first"
    say "engine in $dir already runs"
    print_env
    return
  fi
  local t0=$SECONDS driver
  start_network
  driver=$(storage_driver)
  start_containerd
  if ! dockerd_pid >/dev/null; then
    start_dockerd "$driver" "$@"
  fi
  local deadline=$((SECONDS + 60))
  while ((SECONDS < deadline)); do
    if answers; then
      say "engine $(e2 version --format '{{.Server.Version}}') answers on $sock after $((SECONDS - t0)) s (storage driver $(e2 info --format '{{.Driver}}'), namespace $ns)"
      print_env | tee "$dir/engine.env"
      return
    fi
    dockerd_pid >/dev/null || launched || break
    sleep 0.2
  done
  say "dockerd did not answer on $sock within 60 s or exited; the end of $dir/dockerd.log (without grpc chatter):"
  grep -v 'module=grpc' "$dir/dockerd.log" | tail -n 30 >&2 || true
  die "start failed (clean up with: $0 stop $dir)"
}

cmd_env() {
  names "$1"
  dockerd_pid >/dev/null && answers || die "no engine answers on $sock (start it with: $0 start $dir)"
  print_env
}

cmd_load() {
  need_tools docker
  names "$1"
  shift
  (($# > 0)) || die "load: no image named"
  answers || die "no engine answers on $sock (start it with: $0 start $dir)"
  local src_root
  src_root=$(hostdocker info --format '{{.DockerRootDir}}' 2>/dev/null) ||
    die "load: no source engine answers (DOCKER_HOST=${DOCKER_HOST:-unset})"
  [[ $src_root != "$dir/data" ]] || die "load: the source engine is the second engine itself (DOCKER_HOST=${DOCKER_HOST:-unset}); point docker at the host engine"
  local img id have missing=() t0
  t0=$(date +%s.%N)
  for img in "$@"; do
    id=$(hostdocker image inspect --format '{{.Id}}' "$img" 2>/dev/null) || die "load: the source engine has no image $img"
    have=$(e2 image inspect --format '{{.Id}}' "$img" 2>/dev/null || true)
    if [[ $have == "$id" ]]; then
      say "$img ($id) is already there"
    elif e2 image inspect "$id" >/dev/null 2>&1; then
      e2 tag "$id" "$img"
      say "$img ($id) was there under another name; tagged"
    else
      missing+=("$img")
    fi
  done
  if ((${#missing[@]} > 0)); then
    local size=0 s
    for img in "${missing[@]}"; do
      s=$(hostdocker image inspect --format '{{.Size}}' "$img")
      size=$((size + s))
    done
    say "loading ${missing[*]} ($((size / 1000000)) MB)"
    hostdocker save "${missing[@]}" | e2 load -q >&2
    for img in "${missing[@]}"; do
      id=$(hostdocker image inspect --format '{{.Id}}' "$img")
      have=$(e2 image inspect --format '{{.Id}}' "$img" 2>/dev/null || true)
      [[ $have == "$id" ]] || die "load: after loading, $img is ${have:-missing} on the second engine, not $id"
    done
  fi
  say "load took $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
}

# The cut drops packets silently inside the namespace, in both directions:
# in raw PREROUTING what arrives from the host (for the namespace and for
# containers behind its bridge), in mangle POSTROUTING what leaves towards it.
# The link stays up and no route changes, so an established TCP connection
# stalls (its segments are retransmitted until the link heals) instead of
# being reset, and a new connection hangs in SYN_SENT rather than failing
# at once, much like a cable pulled somewhere between two machines. (A
# process in the namespace sending UDP to the host does see EPERM: netfilter
# reports drops of locally sent packets; TCP just retransmits. Taking
# the host-side veth down instead would make the host's connects to NS_IP
# fail at once with "network unreachable".) dockerd writes only the filter
# and nat tables, so these rules stay first.
cut_rules=(
  "raw PREROUTING -i VETH"
  "mangle POSTROUTING -o VETH"
)

rule_args() { # "TABLE CHAIN -i|-o VETH"
  local table chain dirflag
  read -r table chain dirflag _ <<<"$1"
  echo "-t $table $chain $dirflag $veth_ns -m comment --comment arena-e2-cut -j DROP"
}

cmd_cut() {
  need_root
  names "$1"
  ns_exists || die "no network namespace $ns (start the engine first)"
  local r args
  for r in "${cut_rules[@]}"; do
    read -ra args <<<"$(rule_args "$r")"
    if ! in_ns iptables -w "${args[@]:0:2}" -C "${args[@]:2}" 2>/dev/null; then
      in_ns iptables -w "${args[@]:0:2}" -I "${args[@]:2}"
    fi
  done
  say "cut: $ns <-> host ($ns_ip <-> $host_ip) drops every packet"
}

cmd_heal() {
  need_root
  names "$1"
  ns_exists || die "no network namespace $ns (start the engine first)"
  local r args
  for r in "${cut_rules[@]}"; do
    read -ra args <<<"$(rule_args "$r")"
    while in_ns iptables -w "${args[@]:0:2}" -C "${args[@]:2}" 2>/dev/null; do
      in_ns iptables -w "${args[@]:0:2}" -D "${args[@]:2}"
    done
  done
  say "heal: $ns <-> host ($ns_ip <-> $host_ip) passes again"
}

# stop_pid PID WHAT SECONDS: TERM, wait, then KILL.
stop_pid() {
  local pid=$1 what=$2 secs=$3 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < secs * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  say "$what ($pid) did not stop within $secs s; killing it"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  say "$what ($pid) survives SIGKILL"
}

# leftover_pids prints the engine's processes still alive: those in its
# network namespace, its daemons and their helpers (found by DIR in their
# command line; only dockerd, containerd, shims, runc, docker-proxy and
# fuse-overlayfs, never a shell that merely names DIR), and whatever is left
# in its containers' cgroups.
leftover_pids() {
  {
    if ns_exists; then ip netns pids "$ns" 2>/dev/null || true; fi
    local p exe
    for p in $(pgrep -f -- "$dir/" || true); do
      exe=$(readlink "/proc/$p/exe" 2>/dev/null) || continue
      case ${exe##*/} in
      dockerd | containerd | containerd-shim* | runc | docker-proxy | fuse-overlayfs)
        alive "$p" "$dir/" && echo "$p"
        ;;
      esac
    done
    local d
    for d in $(cgroup_dirs); do
      find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null || true
    done
  } | sort -un | grep -vx "$$" || true
}

cgroup_dirs() {
  find /sys/fs/cgroup -maxdepth 2 -type d -name "$cgroup_parent" 2>/dev/null || true
}

# mounts_under prints the mount points at or under DIR, deepest first.
mounts_under() {
  awk -v d="$dir" '{
    m = $5
    while (match(m, /\\[0-7][0-7][0-7]/)) {
      c = sprintf("%c", (substr(m, RSTART + 1, 1) * 64) + (substr(m, RSTART + 2, 1) * 8) + substr(m, RSTART + 3, 1))
      m = substr(m, 1, RSTART - 1) c substr(m, RSTART + 4)
    }
    if (m == d || index(m, d "/") == 1) print length(m) "\t" m
  }' /proc/self/mountinfo | sort -rn | cut -f2-
}

cmd_stop() {
  need_root
  need_tools ip pgrep docker
  names "$1"
  local pid left
  if answers; then
    left=$(e2 ps -aq --no-trunc || true)
    if [[ -n $left ]]; then
      say "removing containers left on the second engine: $(echo $left)"
      # shellcheck disable=SC2086
      e2 rm -f -v $left >/dev/null || say "could not remove every container"
    fi
  fi
  if pid=$(dockerd_pid); then
    stop_pid "$pid" dockerd 20
  fi
  if pid=$(containerd_pid); then
    stop_pid "$pid" containerd 10
  fi
  left=$(leftover_pids)
  if [[ -n $left ]]; then
    say "stopping processes left behind: $(for p in $left; do printf '%s(%s) ' "$p" "$(cat /proc/$p/comm 2>/dev/null)"; done)"
    # shellcheck disable=SC2086
    kill -TERM $left 2>/dev/null || true
    sleep 1
    left=$(leftover_pids)
    # shellcheck disable=SC2086
    [[ -z $left ]] || kill -KILL $left 2>/dev/null || true
    sleep 0.2
  fi
  local m
  while IFS= read -r m; do
    [[ -n $m ]] || continue
    say "unmounting $m"
    umount "$m" 2>/dev/null || umount -l "$m" || say "could not unmount $m"
  done < <(mounts_under)
  local d
  for d in $(cgroup_dirs); do
    find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || say "could not remove cgroup $d"
  done
  if ip link show "$veth_host" >/dev/null 2>&1; then
    ip link del "$veth_host"
  fi
  if ns_exists; then
    ip netns del "$ns"
  fi
  rm -f "$dockerd_pidfile" "$dockerd_launch_pidfile" "$ctr_pidfile" "$sock" "$dir/engine.env"

  local problems=()
  left=$(leftover_pids)
  [[ -z $left ]] || problems+=("processes $(echo $left)")
  [[ -z $(mounts_under) ]] || problems+=("mounts $(mounts_under | tr '\n' ' ')")
  ! ip link show "$veth_host" >/dev/null 2>&1 || problems+=("interface $veth_host")
  ! ns_exists || problems+=("network namespace $ns")
  [[ -z $(cgroup_dirs) ]] || problems+=("cgroups $(cgroup_dirs | tr '\n' ' ')")
  if ((${#problems[@]} > 0)); then
    die "stop left behind: ${problems[*]}"
  fi
  say "stopped; nothing of the engine in $dir is left running (its data stays in $dir)"
}

(($# >= 2)) || usage
sub=$1
shift
case $sub in
start) cmd_start "$@" ;;
env) cmd_env "$1" ;;
load) cmd_load "$@" ;;
cut) cmd_cut "$1" ;;
heal) cmd_heal "$1" ;;
stop) cmd_stop "$1" ;;
*) usage ;;
esac
