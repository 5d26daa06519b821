#!/usr/bin/env bash
# Runs a sharded ablation on a real Slurm scheduler and checks that the merged result folder
# equals a single-machine run of the same plan.
#
# It installs Slurm and MUNGE from the Debian packages when they are missing (needs root and
# apt), starts a one-node cluster (munged, slurmctld, slurmd) under a scratch directory, submits
# the job-array script that `harness ablate --slurm 4` writes, waits for it, and compares
# `harness lens run`, games.jsonl, games.csv, summary.json, every game record and every trace
# with a local run. CI calls it from .ci/run; run it by hand the same way:
#
#   scripts/slurm-check.sh [--if-available] [path/to/harness]
#
# The harness defaults to target/debug/harness, built if absent. With --if-available (as CI
# runs it), a machine where Slurm cannot be installed or started (no root, no apt, no cluster)
# is reported as SKIPPED with the reason and the logs, and the script exits 0; a sharded run
# that differs from the local one always fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
if_available=false
if [ "${1:-}" = "--if-available" ]; then
  if_available=true
  shift
fi
# Slurm cannot run here: fail, or skip when asked to.
unavailable() {
  if $if_available; then
    echo "slurm-check: SKIPPED: $1" >&2
    exit 0
  fi
  echo "slurm-check: $1" >&2
  exit 1
}
harness=${1:-$root/target/debug/harness}
if [ ! -x "$harness" ]; then
  cargo build --locked --bin harness
fi
harness=$(cd "$(dirname "$harness")" && pwd)/$(basename "$harness")

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  [ "$(id -u)" = 0 ] || unavailable "Slurm is not installed and installing it needs root"
  echo "slurm-check: installing slurm-wlm and munge from the Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq slurm-wlm munge >/dev/null; } ||
    unavailable "apt-get could not install slurm-wlm and munge"
fi
[ "$(id -u)" = 0 ] || unavailable "starting slurmd needs root"

work=$(mktemp -d /tmp/harness-slurm.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# MUNGE: a key of our own and a socket under the scratch directory.
mkdir -p "$work/munge"
chown munge:munge "$work/munge" 2>/dev/null || true
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chown munge:munge "$work/munge/munge.key" 2>/dev/null || true
chmod 400 "$work/munge/munge.key"
socket="$work/munge/munge.socket"
munged --key-file="$work/munge/munge.key" --socket="$socket" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" \
  --seed-file="$work/munge/munged.seed" --force 2>/dev/null ||
  unavailable "munged did not start: $(tail -n 3 "$work/munge/munged.log" 2>/dev/null)"
pids+=("$(cat "$work/munge/munged.pid")")

host=$(hostname -s)
cpus=$(nproc)
memory=$(awk '/MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)
mkdir -p "$work/spool/ctld" "$work/spool/d" "$work/log"
cat > "$work/slurm.conf" <<CONF
ClusterName=harness-check
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$work/spool/ctld
SlurmdSpoolDir=$work/spool/d
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ReturnToService=2
NodeName=$host CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=check Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$work/slurm.conf"
slurmctld -D -i > "$work/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D > "$work/log/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 60); do
  if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then break; fi
  sleep 1
done
if ! sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
  sinfo >&2 || true
  tail -n 30 "$work/log/"* >&2 || true
  unavailable "the one-node cluster did not come up (logs above)"
fi

# The plan: the search example, 3 stacks x 3 instances x 2 seeds, as 4 shards.
plan=(harnesses/examples/search.harness --instances n16-p10,n16-p25,n32-p10 --seeds 2 --jobs 1)
cd "$work"
cp -r "$root/harnesses" .
"$harness" ablate "${plan[@]}" --out runs --run-id sharded --slurm 4 --slurm-script job.sbatch
sbatch --wait --quiet job.sbatch
"$harness" ablate "${plan[@]}" --out local --run-id sharded > /dev/null 2>&1

"$harness" lens run runs/sharded > sharded.txt
"$harness" lens run local/sharded > local.txt
diff sharded.txt local.txt
for file in games.jsonl games.csv summary.json; do
  cmp "runs/sharded/$file" "local/sharded/$file"
done
diff -r runs/sharded/games local/sharded/games
diff -r runs/sharded/traces local/sharded/traces
grep -q "episodes finished: 18/18" sharded.txt
echo "slurm-check: 4 shards on Slurm equal the local run ($(grep -c . runs/sharded/games.jsonl) episodes)"
rm -rf "$work"
