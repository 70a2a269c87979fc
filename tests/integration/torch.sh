#!/usr/bin/env bash
# PyTorch on torusmpi: the torch.distributed backend "torusmpi" (the C++ extension installed in
# <prefix>/lib/python3/dist-packages/torusmpi/torch), under Open MPI's mpirun, checked against
# gloo in the same job. tests/torch/ops.py: every torch.distributed operation, reduction and dtype
# against gloo at 1 to 4 ranks, then across 2 emulated instances (pml/ofi over tcp on loopback);
# ddp.py: DistributedDataParallel gives gloo's losses (bit for bit at 2 ranks, within 1e-5 at 4,
# where the backends may add in another order); raise.py: a Python exception on one rank while
# the others wait in all_reduce ends the job (the backend's excepthook calls MPI_Abort), with the
# exception's message in its output. Debian's python3-torch (1.13) only; without it, or without
# the backend installed, each part is a skip.
. "$(dirname "$0")/lib.sh"

python=/usr/bin/python3 # Debian's: torch is installed for it, not for other pythons on PATH
dir=$TM_SRCDIR/torch
pkg=$TM_PREFIX/lib/python3/dist-packages
parts=("ops.py at 1-4 ranks" "ops.py across 2 instances" "ddp.py at 2 and 4 ranks"
  "raise.py at 3 ranks")
skip_all() {
  local p
  for p in "${parts[@]}"; do skip "$p" "$1"; done
  tap_done
}
"$python" -c 'import torch.distributed' 2>/dev/null ||
  skip_all "python3-torch is not installed for $python"
[ -d "$pkg/torusmpi/torch" ] || skip_all "the backend is not installed ($pkg/torusmpi/torch)"

# torusmpi's libmpi for the extension, the package from the prefix; no __pycache__ written into
# the source tree.
env=(-x "PYTHONPATH=$pkg" "${via_path[@]}" -x PYTHONDONTWRITEBYTECODE=1)

# torch_ok <script> <np>: the last job exited 0 and its summary says every check passed.
torch_ok() {
  [ "$job_rc" -eq 0 ] && ! grep -q '^not ok' "$job_out" &&
    grep -Eq "^# $1: [0-9]+ checks, 0 failed, $2 ranks, backend torusmpi\$" "$job_out"
}
# The failed checks, then the job's usual diagnostics.
diag_torch() {
  grep '^not ok' "$job_out" | head -n 10 | cut -c 1-400 | sed 's/^/# /'
  diag_job
}

run_job 60 "${mpirun[@]}" -np 1 "${env[@]}" "$python" -c 'import torusmpi.torch
import torch.distributed as dist
print(dist.Backend("torusmpi"))'
imported() { [ "$job_rc" -eq 0 ] && grep -qx torusmpi "$job_out"; }
check "import torusmpi.torch registers the backend torusmpi" imported || {
  diag_job
  tap_done
}

for np in 1 2 3 4; do
  run_job 120 "${mpirun[@]}" -np "$np" "${env[@]}" "$python" "$dir/ops.py"
  check "ops.py, np=$np: every torch.distributed operation = gloo" torch_ok ops.py "$np" ||
    diag_torch
  diag "ops.py, np=$np: $job_ms ms"
done
# Which libmpi the last job mapped, as ops.py saw it (it checks it is torusmpi's).
grep '^# libmpi mapped' "$job_out"

# Two emulated instances of two ranks: the same suite through the network transport.
run_job 120 "${mpirun[@]}" -np 4 "${env[@]}" -x TORUSMPI_INSTANCE=torus:2x1:cores=1 \
  -x TORUSMPI_INSTANCES=2 -x TORUSMPI_NET=ofi -x FI_PROVIDER=tcp -x FI_TCP_IFACE=lo \
  "$python" "$dir/ops.py"
check "ops.py, np=4 on 2 instances (ofi, tcp on lo)" torch_ok ops.py 4 || diag_torch
diag "ops.py on 2 instances: $job_ms ms"

for np in 2 4; do
  run_job 120 "${mpirun[@]}" -np "$np" "${env[@]}" "$python" "$dir/ddp.py"
  check "ddp.py, np=$np: DistributedDataParallel's losses and parameters = gloo's" \
    torch_ok ddp.py "$np" || diag_torch
  grep -E '^ok .* = (identical|within)' "$job_out" | sed 's/^ok [0-9]* - /# /'
done

# The processes still running raise.py (zombies are already dead).
survivors() {
  ps -eo pid=,stat=,args= | awk -v s="$dir/raise.py" '$2 !~ /^Z/ && $4 == s { print $1 }'
}
run_job 60 "${mpirun[@]}" -np 3 "${env[@]}" "$python" "$dir/raise.py"
cat "$job_out" "$job_err" >"$work/raise.txt"
check "raise.py, np=3: the job ends, non-zero, within 30 s" \
  test "$job_rc" -ne 0 -a "$job_rc" -ne 124 -a "$job_ms" -lt 30000 || diag_job
diag "raise.py: exit $job_rc after $job_ms ms"
check "raise.py: the output has the exception's message" \
  grep -q 'RuntimeError: raise.py: rank 1 fails on purpose at step 5' "$work/raise.txt" || diag_job
check "raise.py: the excepthook called MPI_Abort" grep -q MPI_Abort "$job_err" || diag_job
check "raise.py: no rank went on past the failed step" not grep -q 'finished\|step [5-9]$' \
  "$job_out" || diag_job
sleep 0.5
mapfile -t left < <(survivors)
check "raise.py: no process left" test "${#left[@]}" -eq 0 || {
  diag "left: ${left[*]}"
  # Only the test's own processes, by pid.
  kill -9 "${left[@]}" 2>/dev/null
}

check_shm
tap_done
