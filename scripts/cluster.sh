#!/usr/bin/env bash
# A real single-node Kubernetes cluster for arena's tests, from pinned sources
# alone (no image registry is reached):
#
#   - kube-apiserver, kubelet, kube-scheduler, kube-controller-manager,
#     kube-proxy (iptables: the Services, the API server's own among them)
#     and kubectl built from the k8s.io/kubernetes module pinned in
#     scripts/cluster/kube (go.mod, go.sum), etcd from scripts/cluster/etcd,
#     the pause image's program from scripts/cluster/pause; cached by content
#     in CACHE/kube-<12 hex digits of the hash of those pins, this script and
#     the Go version>/ (the first build takes 5 to 12 minutes, a cached one
#     nothing). CACHE is ARENA_CACHE, else $XDG_CACHE_HOME/arena, else
#     ~/.cache/arena;
#   - a containerd of its own (Debian's, with the CRI plugin; its own root,
#     state and socket: never the Docker engine's), Debian's CNI plugins;
#   - the pause image and any image asked for (import) put into that
#     containerd from the Docker engine (imagePullPolicy: Never).
#
# Everything runs under DIR (default /tmp/arena-cluster); stop undoes what
# the kubelet did to the host (its sysctls, its iptables chains, the
# bridge, its mounts) and stops every process by its pid file.
#
# Usage: cluster.sh build            build if needed; print the binaries' dir
#        cluster.sh start [DIR]      build, then start a cluster; wait for a Ready node
#        cluster.sh import IMAGE [DIR]  copy a Docker image into its containerd
#        cluster.sh stop [DIR]       stop it and undo its changes to the host
#        cluster.sh network open|server|closed  let the Pods reach each other, or the
#                                    API server through its Service, or neither
#        cluster.sh tools            install what the node needs from Debian, or say what is missing
#                                    (ARENA_NO_INSTALL=1: only say; ARENA_CNI_BIN: the CNI plugins' dir)
#        cluster.sh --print-key      print the build's cache key
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self="$here/$(basename "${BASH_SOURCE[0]}")"
export PATH="$PATH:/usr/local/go/bin:/usr/sbin:/sbin"
pins=$here/cluster
version=$(awk '$1 == "k8s.io/kubernetes" {print $2} $2 == "k8s.io/kubernetes" {print $3}' "$pins/kube/go.mod" | head -1)
# The key: the pins and the Go version, and the build's own lines (a change
# to how the cluster starts or stops rebuilds nothing).
key=$(cat "$pins"/kube/go.mod "$pins"/kube/go.sum "$pins"/etcd/go.mod "$pins"/etcd/go.sum "$pins"/etcd/main.go \
  "$pins"/pause/go.mod "$pins"/pause/main.go <(sed -n '/^build() {/,/^}/p' "$self") <(go env GOVERSION GOARCH) |
  sha256sum | cut -c1-12)
cache=${ARENA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arena}
# Where Debian puts the CNI plugins a Pod's network is made with.
cni=${ARENA_CNI_BIN:-/usr/lib/cni}
bin=$cache/kube-$key

usage() {
  sed -n '/^# Usage:/,/^set /p' "$self" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
log() { echo "cluster: $*" >&2; }

build() {
  local want=(kube-apiserver kubelet kube-scheduler kube-controller-manager kube-proxy kubectl etcd pause)
  local missing=0 b
  for b in "${want[@]}"; do [[ -x $bin/$b ]] || missing=1; done
  if ((missing == 0)); then
    echo "$bin"
    return
  fi
  mkdir -p "$bin"
  local t0=$SECONDS minor
  minor=$(echo "$version" | cut -d. -f2)
  log "building Kubernetes $version, etcd and pause into $bin (about 12 minutes the first time)"
  local ldf="-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/component-base/version.gitMajor=1"
  ldf+=" -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
  ldf+=" -X k8s.io/client-go/pkg/version.gitVersion=$version"
  (cd "$pins/etcd" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -o "$bin/etcd" .)
  (cd "$pins/pause" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -o "$bin/pause" .)
  (cd "$pins/kube" && GOFLAGS=-mod=readonly go build -trimpath -ldflags "$ldf" -o "$bin/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl)
  "$bin/kubectl" version --client >/dev/null
  log "built in $((SECONDS - t0)) s"
  echo "$bin"
}

# waitfor TRIES COMMAND...: run COMMAND every 0.2 s until it succeeds.
waitfor() {
  local tries=$1
  shift
  for ((i = 0; i < tries; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  return 1
}

# bg NAME COMMAND...: start COMMAND in the background, its pid in pids/NAME.
bg() {
  local name=$1
  shift
  nohup "$@" >"$dir/logs/$name.log" 2>&1 &
  echo $! >"$dir/pids/$name.pid"
}

fail() {
  log "$1; the last lines of its log:"
  tail -20 "$dir/logs/$2.log" >&2 || true
  exit 1
}

certs() {
  local pki=$dir/pki node ip
  mkdir -p "$pki"
  node=$(hostname)
  ip=$1
  openssl genrsa -out "$pki/ca.key" 2048 2>/dev/null
  openssl req -x509 -new -nodes -key "$pki/ca.key" -subj "/CN=arena-cluster-ca" -days 365 -out "$pki/ca.crt" 2>/dev/null
  sign() { # name subject [subjectAltName]
    local n=$1 subj=$2 san=${3:-}
    openssl genrsa -out "$pki/$n.key" 2048 2>/dev/null
    openssl req -new -key "$pki/$n.key" -subj "$subj" -out "$pki/$n.csr" 2>/dev/null
    {
      echo "basicConstraints=CA:FALSE"
      echo "keyUsage=critical,digitalSignature,keyEncipherment"
      if [[ -n $san ]]; then
        echo "extendedKeyUsage=serverAuth,clientAuth"
        echo "subjectAltName=$san"
      else echo "extendedKeyUsage=clientAuth"; fi
    } >"$pki/$n.ext"
    openssl x509 -req -in "$pki/$n.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial -days 365 \
      -extfile "$pki/$n.ext" -out "$pki/$n.crt" 2>/dev/null
    rm -f "$pki/$n.csr" "$pki/$n.ext"
  }
  sign apiserver "/CN=kube-apiserver" "IP:127.0.0.1,IP:10.96.0.1,IP:$ip,DNS:localhost,DNS:$node,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  sign admin "/O=system:masters/CN=admin"
  sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  sign kubelet-client "/O=system:nodes/CN=system:node:$node"
  sign kubelet-server "/CN=$node" "IP:127.0.0.1,IP:$ip,DNS:localhost,DNS:$node"
  sign scheduler "/CN=system:kube-scheduler"
  sign controller-manager "/CN=system:kube-controller-manager"
  sign kube-proxy "/CN=system:kube-proxy"
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  local f user cert
  for f in admin:admin:admin kubelet:kubelet:kubelet-client scheduler:scheduler:scheduler controller-manager:controller-manager:controller-manager kube-proxy:kube-proxy:kube-proxy; do
    IFS=: read -r name user cert <<<"$f"
    cat >"$dir/$name.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: arena-cluster
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: $pki/ca.crt
users:
- name: $user
  user:
    client-certificate: $pki/$cert.crt
    client-key: $pki/$cert.key
contexts:
- name: arena-cluster
  context: {cluster: arena-cluster, user: $user}
current-context: arena-cluster
EOF
  done
}

configs() {
  mkdir -p "$dir/cni/conf" "$dir/containerd" "$dir/kubelet" "$dir/pod-logs"
  cat >"$dir/containerd.toml" <<EOF
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
[grpc]
  address = "$dir/containerd.sock"
[ttrpc]
  address = "$dir/containerd.sock.ttrpc"
[debug]
  address = "$dir/containerd-debug.sock"
  level = "info"
[metrics]
  address = ""
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    sandbox_image = "k8s.local/pause:arena"
    disable_apparmor = true
    netns_mounts_under_state_dir = true
    # root without CAP_SYS_RESOURCE cannot lower an OOM score: without this,
    # runc fails "can't get final child's PID from pipe: EOF"
    restrict_oom_score_adj = true
    enable_selinux = false
    [plugins."io.containerd.grpc.v1.cri".containerd]
      snapshotter = "overlayfs"
      default_runtime_name = "runc"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = "$dir/runc"
$(runtime_handlers)
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "$cni"
      conf_dir = "$dir/cni/conf"
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = ""
  [plugins."io.containerd.internal.v1.opt"]
    path = "$dir/containerd/opt"
EOF
  # The pods' network: a bridge, no masquerade, a route to the Services
  # alone (through the bridge, where kube-proxy's rules take them), and
  # every packet a pod starts dropped (isolate): a pod reaches nothing,
  # and nothing but the kubelet (its exec, attach and probes) reaches it.
  # This cluster's plugin enforces no NetworkPolicy; the doctor's probe
  # checks what a pod can reach. "network server" lets the pods reach the
  # API server through its Service, for the event server's own Pod.
  cat >"$dir/cni/conf/10-arena.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "arena-pods",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "arenakbr0",
      "isGateway": true,
      "isDefaultGateway": false,
      "ipMasq": false,
      "ipam": {
        "type": "host-local",
        "dataDir": "$dir/cni/ipam",
        "ranges": [[{"subnet": "10.244.0.0/16", "gateway": "10.244.0.1"}]],
        "routes": [{"dst": "10.96.0.0/16"}]
      }
    }
  ]
}
EOF
  cat >"$dir/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$dir/containerd.sock
imageServiceEndpoint: unix://$dir/containerd.sock
failSwapOn: false
podLogsDir: $dir/pod-logs
address: 127.0.0.1
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: $dir/pki/kubelet-server.crt
tlsPrivateKeyFile: $dir/pki/kubelet-server.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $dir/pki/ca.crt}
authorization:
  mode: AlwaysAllow
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
imageMinimumGCAge: 87600h
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%"
  imagefs.available: "1%"
  nodefs.inodesFree: "1%"
podPidsLimit: 1024
maxPods: 200
syncFrequency: 10s
fileCheckFrequency: 20s
nodeStatusUpdateFrequency: 10s
registerNode: true
EOF
}

# runtime_handlers registers gVisor's runsc as the handler "runsc" when
# ARENA_RUNSC names its binary (scripts/runsc.sh).
runtime_handlers() {
  [[ -n ${ARENA_RUNSC:-} ]] || return 0
  cat <<EOF
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runsc]
        runtime_type = "io.containerd.runsc.v1"
EOF
}

ctr_() { ctr -a "$dir/containerd.sock" -n k8s.io "$@"; }

# import_image IMAGE: from the Docker engine into the cluster's containerd,
# unless it is there with the same id.
import_image() {
  local image=$1 id
  id=$(docker image inspect --format '{{.Id}}' "$image")
  if [[ -f $dir/images/$(echo "$image" | tr '/:' '__') ]] && [[ $(cat "$dir/images/$(echo "$image" | tr '/:' '__')") == "$id" ]]; then
    return 0
  fi
  mkdir -p "$dir/images"
  docker save "$image" | ctr_ images import --no-unpack - >/dev/null
  echo "$id" >"$dir/images/$(echo "$image" | tr '/:' '__')"
}

pause_image() {
  local ctx
  ctx=$(mktemp -d)
  cp "$bin/pause" "$ctx/pause"
  printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' >"$ctx/Dockerfile"
  DOCKER_BUILDKIT=0 docker build -q -t k8s.local/pause:arena "$ctx" >/dev/null 2>&1 || { log "docker build of the pause image failed"; exit 1; }
  rm -rf "$ctx"
  import_image k8s.local/pause:arena
}

# isolate drops whatever a pod sends: to another pod across the bridge
# (bridged frames pass the FORWARD chain with br_netfilter), to the host
# (INPUT), and beyond (there is no route, and FORWARD drops it too).
isolate() {
  modprobe br_netfilter 2>/dev/null || true
  if [[ $(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null) != 1 ]]; then
    sysctl -q -w net.bridge.bridge-nf-call-iptables=1 || {
      log "cannot make bridged traffic pass iptables (br_netfilter): pods would reach each other"
      exit 1
    }
  fi
  iptables -C INPUT -i arenakbr0 -j DROP 2>/dev/null || iptables -I INPUT -i arenakbr0 -j DROP
  iptables -C FORWARD -i arenakbr0 -j DROP 2>/dev/null || iptables -I FORWARD -i arenakbr0 -j DROP
  # What the host starts (the kubelet's probes) is answered; nothing a pod
  # starts is taken.
  local answers=(INPUT -i arenakbr0 -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT)
  iptables -C "${answers[@]}" 2>/dev/null || iptables -I "${answers[@]}"
}

# network open lets the Pods reach each other over the bridge, as on a
# cluster whose network plugin enforces no NetworkPolicy (a test shows the
# doctor fails it); network closed undoes it.
network() {
  local pods=(FORWARD -i arenakbr0 -o arenakbr0 -j ACCEPT)
  local api=(INPUT -i arenakbr0 -p tcp --dport 6443 -j ACCEPT)
  case $1 in
  open) iptables -C "${pods[@]}" 2>/dev/null || iptables -I "${pods[@]}" ;;
  server) iptables -C "${api[@]}" 2>/dev/null || iptables -I "${api[@]}" ;;
  closed)
    while iptables -C "${pods[@]}" 2>/dev/null; do iptables -D "${pods[@]}"; done
    while iptables -C "${api[@]}" 2>/dev/null; do iptables -D "${api[@]}"; done
    ;;
  *) usage ;;
  esac
}

# host_tools installs what the node runs beside the cluster's own binaries
# from Debian (containerd, runc, the CNI plugins a Pod's network is made
# with, iptables), or says which are missing: without the bridge plugin a
# node reports Ready and every Pod stays ContainerCreating.
host_tools() {
  local need
  mapfile -t need < <(missing_tools)
  ((${#need[@]} == 0)) && return
  if [[ -n ${ARENA_NO_INSTALL:-} ]] || ! command -v apt-get >/dev/null; then
    log "missing: ${need[*]}; install them (Debian's package names) and start again"
    exit 1
  fi
  log "installing from Debian: ${need[*]%% (*}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]%% (*}" >/dev/null
  mapfile -t need < <(missing_tools)
  if ((${#need[@]} > 0)); then
    log "still missing after installing them: ${need[*]}"
    exit 1
  fi
}

# missing_tools prints, a line each, the Debian package of each tool the
# node lacks, with what was looked for.
missing_tools() {
  command -v containerd >/dev/null || echo "containerd (no containerd in PATH)"
  command -v runc >/dev/null || echo "runc (no runc in PATH)"
  [[ -x $cni/bridge && -x $cni/host-local && -x $cni/loopback ]] ||
    echo "containernetworking-plugins (the bridge, host-local and loopback plugins, not all in $cni)"
  command -v iptables >/dev/null || echo "iptables (no iptables in PATH)"
}

start() {
  [[ $(id -u) == 0 ]] || {
    log "a cluster's kubelet and containerd run as root"
    exit 1
  }
  host_tools
  if [[ -f $dir/pids/apiserver.pid ]] && kill -0 "$(cat "$dir/pids/apiserver.pid")" 2>/dev/null; then
    log "a cluster already runs in $dir (stop it first: cluster.sh stop $dir)"
    exit 1
  fi
  build >/dev/null
  local t0=$SECONDS ip
  ip=$(ip -4 -o addr show scope global | awk '$2 != "docker0" {print $4}' | cut -d/ -f1 | head -1)
  mkdir -p "$dir/logs" "$dir/pids" "$dir/etcd"
  sysctl -a 2>/dev/null | grep -E '^(kernel\.panic|kernel\.panic_on_oops|vm\.overcommit_memory|vm\.panic_on_oom|kernel\.keys\.root_maxkeys|kernel\.keys\.root_maxbytes) ' >"$dir/sysctl.before" || true
  [[ -f $dir/pki/kube-proxy.crt ]] || certs "$ip"
  configs
  isolate
  bg containerd /usr/bin/containerd --config "$dir/containerd.toml"
  bg etcd "$bin/etcd" --name arena --data-dir "$dir/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster arena=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381 --unsafe-no-fsync
  waitfor 150 curl -sf http://127.0.0.1:2379/health || fail "etcd did not answer in 30 s" etcd
  local p=$dir/pki
  # On every address: the kubernetes Service leads to the advertised one.
  bg apiserver "$bin/kube-apiserver" --advertise-address="$ip" --bind-address=0.0.0.0 --secure-port=6443 \
    --etcd-servers=http://127.0.0.1:2379 --service-cluster-ip-range=10.96.0.0/16 \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
    --kubelet-client-certificate="$p/apiserver-kubelet-client.crt" --kubelet-client-key="$p/apiserver-kubelet-client.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --cert-dir="$dir/apiserver-certs" --profiling=false --v=1
  waitfor 150 ctr -a "$dir/containerd.sock" version || fail "containerd did not answer in 30 s" containerd
  pause_image
  local a=(--cacert "$p/ca.crt" --cert "$p/admin.crt" --key "$p/admin.key")
  waitfor 600 curl -sf "${a[@]}" https://127.0.0.1:6443/readyz || fail "the API server was not ready in 2 minutes" apiserver
  bg kubelet "$bin/kubelet" --config="$dir/kubelet-config.yaml" --kubeconfig="$dir/kubelet.kubeconfig" \
    --root-dir="$dir/kubelet" --cert-dir="$dir/kubelet/pki" --node-ip="$ip" --v=1
  bg controller-manager "$bin/kube-controller-manager" --kubeconfig="$dir/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$dir/controller-manager.kubeconfig" --authorization-kubeconfig="$dir/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port=10257 --cert-dir="$dir/controller-manager-certs" \
    --service-account-private-key-file="$p/sa.key" --root-ca-file="$p/ca.crt" --use-service-account-credentials=true \
    --cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" \
    --service-cluster-ip-range=10.96.0.0/16 --leader-elect=false --v=1
  bg scheduler "$bin/kube-scheduler" --kubeconfig="$dir/scheduler.kubeconfig" \
    --authentication-kubeconfig="$dir/scheduler.kubeconfig" --authorization-kubeconfig="$dir/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false --v=1
  # The Services (iptables), changing no sysctl of the host's.
  bg proxy "$bin/kube-proxy" --kubeconfig="$dir/kube-proxy.kubeconfig" --proxy-mode=iptables \
    --cluster-cidr=10.244.0.0/16 --hostname-override="$(hostname)" --iptables-localhost-nodeports=false \
    --conntrack-max-per-core=0 --conntrack-tcp-timeout-established=0 --conntrack-tcp-timeout-close-wait=0 \
    --metrics-bind-address=127.0.0.1:10249 --healthz-bind-address=127.0.0.1:10256 --v=1
  export KUBECONFIG=$dir/admin.kubeconfig
  local node
  node=$(hostname)
  waitfor 600 "$bin/kubectl" get sa default -n default || fail "no default ServiceAccount in 2 minutes" controller-manager
  waitfor 600 "$bin/kubectl" wait --for=condition=Ready "node/$node" --timeout=1s || fail "the node was not Ready in 2 minutes" kubelet
  waitfor 600 bash -c "test -z \"\$('$bin/kubectl' get node '$node' -o jsonpath='{.spec.taints}')\"" || fail "the node kept its taints" kubelet
  log "a Ready node in $((SECONDS - t0)) s; KUBECONFIG=$dir/admin.kubeconfig"
}

stop() {
  [[ -d $dir/pids ]] || return 0
  export KUBECONFIG=$dir/admin.kubeconfig
  if [[ -f $dir/pids/apiserver.pid ]] && kill -0 "$(cat "$dir/pids/apiserver.pid")" 2>/dev/null; then
    timeout 60 "$bin/kubectl" delete pods --all -A --grace-period=0 --force --wait=true --timeout=50s >/dev/null 2>&1 || true
  fi
  stop_pid() {
    local f=$dir/pids/$1.pid p
    [[ -f $f ]] || return 0
    p=$(cat "$f")
    if kill -0 "$p" 2>/dev/null; then
      kill "$p"
      for _ in $(seq 1 50); do
        kill -0 "$p" 2>/dev/null || break
        sleep 0.2
      done
      kill -0 "$p" 2>/dev/null && kill -9 "$p"
    fi
    rm -f "$f"
  }
  stop_pid proxy
  stop_pid scheduler
  stop_pid controller-manager
  stop_pid kubelet
  if [[ -S $dir/containerd.sock ]]; then
    local t c
    for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$t" 2>/dev/null || true; done
    sleep 1
    for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks rm -f "$t" 2>/dev/null || true; done
    for c in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers rm "$c" 2>/dev/null || true; done
  fi
  stop_pid containerd
  stop_pid apiserver
  stop_pid etcd
  # The shims left by a containerd killed hard.
  pkill -9 -f "containerd-shim.*-address $dir/containerd.sock" 2>/dev/null || true
  # (A grep that finds nothing fails its pipeline: || true, under pipefail.)
  { grep " $dir" /proc/mounts || true; } | awk '{print $2}' | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
  ip link show arenakbr0 >/dev/null 2>&1 && ip link del arenakbr0
  iptables -D INPUT -i arenakbr0 -j DROP 2>/dev/null || true
  iptables -D INPUT -i arenakbr0 -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT 2>/dev/null || true
  iptables -D FORWARD -i arenakbr0 -j DROP 2>/dev/null || true
  network closed
  local ipt tb ch
  for ipt in iptables ip6tables; do
    for tb in filter nat mangle; do
      { "$ipt" -t "$tb" -S 2>/dev/null || true; } | { grep -E '^-A .*-j (KUBE|CNI)-' || true; } | { grep -vE '^-A (KUBE|CNI)-' || true; } |
        sed 's/^-A/-D/' | while read -r r; do eval "$ipt -t $tb $r" || true; done
      for ch in $("$ipt" -t "$tb" -S 2>/dev/null | awk '/^-N (KUBE|CNI)-/{print $2}'); do "$ipt" -t "$tb" -F "$ch" || true; done
      for ch in $("$ipt" -t "$tb" -S 2>/dev/null | awk '/^-N (KUBE|CNI)-/{print $2}'); do "$ipt" -t "$tb" -X "$ch" || true; done
    done
  done
  if [[ -s $dir/sysctl.before ]]; then
    sysctl -q -p "$dir/sysctl.before" >/dev/null || log "could not restore the sysctls the kubelet changed (from $dir/sysctl.before)"
  fi
  # The kubelet's device-plugin socket is made there whatever its root dir.
  rm -f /var/lib/kubelet/device-plugins/kubelet.sock
  rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet 2>/dev/null || true
  log "stopped; $(grep -c " $dir" /proc/mounts || true) mounts left under $dir"
}

case ${1:-} in
--print-key) echo "$key" ;;
build) (($# == 1)) || usage; build ;;
start) dir=${2:-/tmp/arena-cluster}; start ;;
import) (($# >= 2)) || usage; dir=${3:-/tmp/arena-cluster}; import_image "$2" ;;
stop) dir=${2:-/tmp/arena-cluster}; stop ;;
network) (($# >= 2)) || usage; network "$2" ;;
tools) host_tools; log "the host has what a node needs" ;;
*) usage ;;
esac
