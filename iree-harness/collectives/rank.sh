#!/bin/sh
# One MPI rank of an IREE tool on its own GPU:
#   mpirun -n 2 iree-harness/collectives/rank.sh <iree tool> [arguments...]
# Sets HIP_VISIBLE_DEVICES to the rank's local rank (one GPU per rank; kept if already set)
# and, for the software HIP device, SOFTWARE_HIP_DEVICE_COUNT to the number of local ranks
# (at least 2; kept if set); replaces `{rank}` in the arguments by the rank's global rank
# (per-rank inputs and outputs: --input=@in.{rank}.bin). Open MPI, MPICH and Slurm names.
# With RANK_STATUS_PREFIX set (run.py), the tool's exit status goes to
# $RANK_STATUS_PREFIX.<rank> and the rank exits 0, so that mpirun does not abort the job
# (about 2 s each time) and every rank's status is known.
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-}}}
local_rank=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${SLURM_LOCALID:-}}}
local_size=${OMPI_COMM_WORLD_LOCAL_SIZE:-${MPI_LOCALNRANKS:-${SLURM_NTASKS_PER_NODE:-}}}
if [ -z "$rank" ] || [ -z "$local_rank" ]; then
  echo "rank.sh: not started by mpirun (no OMPI_COMM_WORLD_RANK / PMI_RANK / SLURM_PROCID)" >&2
  exit 2
fi
[ $# -ge 1 ] || { echo "usage: mpirun -n N rank.sh <iree tool> [arguments...]" >&2; exit 2; }
export HIP_VISIBLE_DEVICES="${HIP_VISIBLE_DEVICES:-$local_rank}"
if [ -z "${SOFTWARE_HIP_DEVICE_COUNT:-}" ]; then
  count=${local_size:-2}
  [ "$count" -ge 2 ] 2>/dev/null || count=2
  export SOFTWARE_HIP_DEVICE_COUNT=$count
fi
tool=$1
shift
for argument in "$@"; do
  shift
  set -- "$@" "$(printf '%s' "$argument" | sed "s/{rank}/$rank/g")"
done
if [ -n "${RANK_STATUS_PREFIX:-}" ]; then
  status=0
  "$tool" "$@" || status=$?
  echo "$status" > "$RANK_STATUS_PREFIX.$rank"
  exit 0
fi
exec "$tool" "$@"
