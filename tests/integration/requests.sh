#!/usr/bin/env bash
# Requests, statuses and localities (tests/progs/requests.c): generalized requests through every
# completion call, Request_free, Request_get_status and Cancel; cancelled sends (rendezvous and
# synchronous to another rank, persistent, and a matched one that cannot be; an eager one, to
# itself or another rank, that completed in its call may stay uncancelled, and is received); the
# MPI_ERROR field of every completion call's status; MPI_DATATYPE_NULL refused as Open MPI does;
# MPI_Comm_split_type's OMPI_COMM_TYPE_ localities; MAXLOC/MINLOC on derived datatypes of pair
# types. Bad arguments of each. First on Open MPI itself (the reference: where MPI leaves it
# room, its answers are "skip" lines), then on torusmpi by LD_PRELOAD and LD_LIBRARY_PATH (no
# skip line allowed), with rendezvous by the pipeline, with the progress thread, and the clang
# build; a Fortran program's generalized request (compiled here with Open MPI's mpifort). The
# localities are compared line by line with Open MPI's, unbound (--bind-to none, more
# ranks than cores, so torusmpi binds none either) and bound by mpirun to cores, sockets and
# hardware threads.
. "$(dirname "$0")/lib.sh"

bin=$TM_PROGS/requests

run_job 120 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 3 "$bin.gcc"
check "requests.gcc on Open MPI itself (the reference), np=3" ranks_done 3 || diag_job

# On torusmpi nothing is skipped but what needs a second rank at np=1.
passed() {
  ranks_done "$1" || return 1
  if grep -v 'one rank' "$job_out" | grep -q '^skip'; then
    echo "# the program took its path for reference libraries:"
    grep '^skip' "$job_out" | head -n 3 | sed 's/^/#   /'
    return 1
  fi
}
for np in 1 2 3 4; do
  run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" "$bin.gcc"
  check "requests.gcc, LD_PRELOAD, np=$np" passed "$np" || diag_job
done
run_job 120 "${mpirun[@]}" -np 2 "${via_path[@]}" "$bin.gcc"
check "requests.gcc, LD_LIBRARY_PATH, np=2" passed 2 || diag_job
# Rendezvous without the single copy: a cancelled send's data never moves, a kept one's by CTS.
run_job 120 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_EAGER_LIMIT=64 \
  -x TORUSMPI_SHM_SINGLE_COPY=0 "$bin.gcc" cancel
check "requests.gcc cancel, eager limit 64 B, no single copy, np=2" passed 2 || diag_job
# Across emulated instances: the cancellation travels through the network transports (the pml's
# protocol, the same for every transport), libfabric's tcp provider and UCX on the loopback only.
# (The 1 MiB send, cancelled, never crosses: rank 1's NIC counts a few bytes, not a MiB.)
for net in ofi ucx; do
  run_job 120 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_NET=$net -x FI_PROVIDER=tcp \
    -x FI_TCP_IFACE=lo -x UCX_NET_DEVICES=lo -x TORUSMPI_INSTANCE=torus:1x1:cores=1 \
    -x TORUSMPI_INSTANCES=2 -x TORUSMPI_STATS=1 "$bin.gcc" cancel
  if grep -q 'built without it' "$job_err"; then
    skip "requests.gcc cancel over $net" "this build has no $net transport"
    continue
  fi
  few_nic_bytes() {
    passed 2 || return 1
    local b
    b=$(sed -n 's/^torusmpi-stats nic 1\.[0-9]* bytes=\([0-9]*\)$/\1/p' "$job_err" | head -n 1)
    [ -n "$b" ] && [ "$b" -gt 0 ] && [ "$b" -lt 65536 ] ||
      { echo "# rank 1's NIC received '${b}' bytes (the cancelled MiB crossed?)"; return 1; }
  }
  check "requests.gcc cancel over $net between two instances, np=2" few_nic_bytes || diag_job
done
run_job 120 "${mpirun[@]}" -np 3 "${via_preload[@]}" -x TORUSMPI_ASYNC_PROGRESS=1 "$bin.gcc"
check "requests.gcc, asynchronous progress thread, np=3" passed 3 || diag_job
run_job 120 "${mpirun[@]}" -np 3 "${via_path[@]}" "$bin.clang"
check "requests.clang, LD_LIBRARY_PATH, np=3" passed 3 || diag_job

# --- Generalized requests from Fortran: Open MPI's binding (libmpi_mpifh) starts the request with
# Fortran subroutines as callbacks and marks the request so; they must be called as Fortran (all
# arguments by reference, the error in IERROR), by both libraries alike.
cat >"$work/greq.f90" <<'EOF_F90'
module greq_callbacks
  implicit none
  include 'mpif.h'
  integer :: nq = 0, nf = 0, nc = 0, lastc = -1
contains
  subroutine query_fn(extra, status, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: status(MPI_STATUS_SIZE), ierr
    nq = nq + 1
    status(MPI_SOURCE) = int(extra)
    status(MPI_TAG) = 77
    call MPI_Status_set_elements(status, MPI_INTEGER, 3, ierr)
    ierr = MPI_SUCCESS
  end subroutine
  subroutine free_fn(extra, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierr
    nf = nf + 1
    ierr = MPI_SUCCESS
    if (extra == 99) ierr = MPI_ERR_OTHER
  end subroutine
  subroutine cancel_fn(extra, complete, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierr
    nc = nc + 1
    lastc = 0
    if (complete) lastc = 1
    ierr = MPI_SUCCESS
  end subroutine
end module

program greq
  use greq_callbacks
  implicit none
  integer :: ierr, req, status(MPI_STATUS_SIZE), cnt
  integer(kind=MPI_ADDRESS_KIND) :: extra
  call MPI_Init(ierr)
  extra = 42
  call MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, req, ierr)
  call MPI_Cancel(req, ierr)
  call MPI_Grequest_complete(req, ierr)
  call MPI_Cancel(req, ierr)
  call MPI_Wait(req, status, ierr)
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  print '(a,8i4)', 'greq', status(MPI_SOURCE), status(MPI_TAG), cnt, nq, nf, nc, lastc, ierr
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  extra = 99
  call MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, req, ierr)
  call MPI_Grequest_complete(req, ierr)
  call MPI_Request_free(req, ierr)
  print '(a,2i4)', 'free-error', nf, ierr
  call MPI_Finalize(ierr)
end program
EOF_F90
if "$TM_OMPI_MPIFORT" -o "$work/greq" "$work/greq.f90" -J "$work" >"$work/greq.log" 2>&1; then
  # Source 42 and tag 77 from query_fn, 3 elements, one query, one free, two cancels (the last
  # after completion), no error.
  want='greq  42  77   3   1   1   2   1   0'
  run_job 60 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np 1 "$work/greq"
  check "Fortran generalized request on Open MPI (the reference)" grep -qx "$want" "$job_out" ||
    diag_job
  run_job 60 "${mpirun[@]}" -np 1 "${via_preload[@]}" "$work/greq"
  # free_fn's error is MPI_Request_free's (MPI 3.1 section 13.2; Open MPI drops it): MPI_ERR_OTHER.
  check "Fortran generalized request on torusmpi, LD_PRELOAD: callbacks called as Fortran" \
    eval 'grep -qx "$want" "$job_out" && grep -qx "free-error   2  16" "$job_out"' || diag_job
else
  skip "Fortran generalized requests" "mpifort failed: $(head -n 1 "$work/greq.log")"
fi

# --- Localities: the same communicators as Open MPI's, rank by rank.
# same_localities <file>: the last job passed and printed the locality lines of <file>.
same_localities() {
  passed "$2" || return 1
  grep '^locality ' "$job_out" | sort >"$work/tm_localities.txt"
  diff "$1" "$work/tm_localities.txt" >"$work/localities.diff" || {
    echo "# Open MPI (<) and torusmpi (>) split differently:"
    sed 's/^/# /' "$work/localities.diff" | head -n 12
    return 1
  }
}
cores=$(nproc)
np=$((cores + 2))
run_job 120 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" -np "$np" "$bin.gcc" localities
check "localities on Open MPI, unbound, np=$np" ranks_done "$np" || diag_job
grep '^locality ' "$job_out" | sort >"$work/ompi_unbound.txt"
run_job 120 "${mpirun[@]}" -np "$np" "${via_preload[@]}" -x TORUSMPI_BIND=none "$bin.gcc" \
  localities
check "localities on torusmpi, unbound (TORUSMPI_BIND=none), np=$np: as Open MPI's" \
  same_localities "$work/ompi_unbound.txt" "$np" || diag_job

# mpirun binds (its --bind-to comes last and wins over the one in ${mpirun[@]}): to cores, and to
# sockets (on a one-socket host that is every CPU, yet bound: every locality is shared).
for bind in core:4 socket:3 hwthread:3; do
  level=${bind%:*} n=${bind#*:}
  bound=(--bind-to "$level:overload-allowed")
  run_job 120 env LD_LIBRARY_PATH="$TM_OMPI_LIBDIR" "${mpirun[@]}" "${bound[@]}" -np "$n" \
    "$bin.gcc" localities
  if [ "$job_rc" -ne 0 ] && grep -qi 'bind' "$job_err"; then
    skip "localities bound to each $level" "mpirun cannot bind here: $(grep -i -m1 bind "$job_err")"
    continue
  fi
  check "localities on Open MPI, bound to each $level, np=$n" ranks_done "$n" || diag_job
  grep '^locality ' "$job_out" | sort >"$work/ompi_$level.txt"
  run_job 120 "${mpirun[@]}" "${bound[@]}" -np "$n" "${via_preload[@]}" "$bin.gcc" localities
  check "localities on torusmpi, bound to each $level, np=$n: as Open MPI's" \
    same_localities "$work/ompi_$level.txt" "$n" || diag_job
done
# torusmpi binds ranks itself when the launcher did not (TORUSMPI_BIND=auto), a core each or,
# more ranks than cores, round robin: the checks of the program (a partition, bound alike share,
# nested) hold; Open MPI, which binds none, differs.
for n in 2 "$np"; do
  run_job 120 "${mpirun[@]}" -np "$n" "${via_preload[@]}" "$bin.gcc" localities
  check "localities on torusmpi, bound by TORUSMPI_BIND=auto, np=$n" passed "$n" || diag_job
done

check_shm
tap_done
