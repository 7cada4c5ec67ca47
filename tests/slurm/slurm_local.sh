#!/bin/sh
# slurm_local.sh start|stop DIR — a one-node Slurm cluster on this machine, all of it in DIR:
# a fresh MUNGE key and munged on its own socket, a slurm.conf for this host (partition "ci",
# CPUS slots, requeue allowed, free ports), slurmctld and slurmd in the foreground of their own
# background processes. `start` prints nothing on success and leaves DIR/env, which sets
# SLURM_CONF for the client commands (sbatch, squeue, scontrol, scancel); `stop` ends the three
# daemons it started, by the process ids it recorded. Needs root (slurmd runs jobs as their
# user) and Debian's slurm-wlm and munge. Exit 0 started/stopped, 1 could not start (why on
# stderr; the daemons' logs are in DIR).
set -u
cmd=${1:?start or stop}
dir=${2:?the directory}
CPUS=${CPUS:-8}

stop() {
  for d in slurmd slurmctld munged; do
    [ -f "$dir/$d.pid" ] || continue
    pid=$(cat "$dir/$d.pid")
    kill "$pid" 2>/dev/null
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$pid" 2>/dev/null
    rm -f "$dir/$d.pid"
  done
}

fail() {
  echo "slurm_local: $*" >&2
  stop
  exit 1
}

# A TCP port nobody listens on now.
free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

if [ "$cmd" = stop ]; then
  stop
  exit 0
fi
[ "$cmd" = start ] || { echo "slurm_local: start or stop, not $cmd" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "slurm_local: needs root (slurmd starts jobs as their user)" >&2; exit 1; }
for p in munged mungekey slurmctld slurmd sbatch; do
  command -v $p >/dev/null 2>&1 || { echo "slurm_local: $p is missing (sh .ci/deps slurm)" >&2; exit 1; }
done

mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log" || fail "cannot create $dir"
chmod 700 "$dir/munge"
mungekey --create --keyfile="$dir/munge/munge.key" --force >/dev/null 2>&1 ||
  fail "mungekey could not create a key"
chmod 600 "$dir/munge/munge.key"
sock="$dir/munge/munge.socket"
munged --foreground --force --key-file="$dir/munge/munge.key" --socket="$sock" \
       --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
       --seed-file="$dir/munge/munged.seed" >/dev/null 2>&1 &
echo $! > "$dir/munged.pid"

host=$(hostname -s)
ctld_port=$(free_port)
slurmd_port=$(free_port)
conf="$dir/slurm.conf"
cat > "$conf" <<EOF
ClusterName=ggfuzzci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.daemon.pid
SlurmdPidFile=$dir/slurmd.daemon.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
JobRequeue=1
MpiDefault=none
KillWait=10
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=1000 State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
echo "export SLURM_CONF='$conf'" > "$dir/env"
export SLURM_CONF="$conf"

i=0
until [ -S "$sock" ]; do
  i=$((i + 1)); [ $i -gt 50 ] && fail "munged did not start (log: $dir/log/munged.log)"; sleep 0.1
done
slurmctld -D -i -f "$conf" >"$dir/log/slurmctld.out" 2>&1 &
echo $! > "$dir/slurmctld.pid"
slurmd -D -f "$conf" -N "$host" >"$dir/log/slurmd.out" 2>&1 &
echo $! > "$dir/slurmd.pid"
i=0
until sinfo -h -N -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; do
  i=$((i + 1))
  if [ $i -gt 150 ]; then
    fail "the node did not come up in 30 s: $(sinfo -h -N -o '%T %E' 2>&1 | head -3) (logs in $dir/log)"
  fi
  sleep 0.2
done
exit 0
