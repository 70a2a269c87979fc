#!/usr/bin/env bash
# The emulated machine at the edges a user meets first: torusmpi_info --topology draws a model
# (and refuses a bad one), MPI_Init takes TORUSMPI_INSTANCE (a job that fits runs; one too big
# for the model, or a model name that is none, fails MPI_Init with a message saying why), and
# TORUSMPI_BIND binds or leaves ranks alone as asked.
. "$(dirname "$0")/lib.sh"

info=$TM_BINDIR/torusmpi_info
txt=$work/topology.txt

"$info" --topology trn2.48xl >"$txt" 2>&1
check "torusmpi_info --topology trn2.48xl succeeds" test $? -eq 0 || diag_file "$txt"
check "it draws 16 chips with their ranks (chip 15 holds 60-63)" \
  eval "grep -Eq '\\| chip 15 +\\|' \"\$txt\" && grep -q '| r 60-63 ' \"\$txt\"" ||
  diag_file "$txt" 50
check "it counts 64 directed links" grep -q '^  64 directed links' "$txt" || diag_file "$txt" 5
check "it fits in 80 columns" test "$(awk 'length > 80' "$txt" | wc -l)" -eq 0 ||
  awk 'length > 80' "$txt" | sed 's/^/#   /'
check "it names the source of its figures" grep -q 'figures from .*AWS Neuron' "$txt" ||
  diag_file "$txt" 50

"$info" --topology torus:2x4:cores=2 --parsable >"$txt" 2>&1
check "--topology --parsable lists 24 links for torus:2x4" \
  test "$(grep -c '^link:' "$txt")" -eq 24 -a "$(grep -c '^chip:' "$txt")" -eq 8 || diag_file "$txt"
check "--parsable places ranks 14-15 on chip 7 at (1,3)" grep -qx 'chip:7:coords:1,3:ranks:14-15' \
  "$txt" || diag_file "$txt"

TORUSMPI_INSTANCE=trn2u "$info" --topology >"$txt" 2>&1
check "--topology without MODEL takes TORUSMPI_INSTANCE (trn2u: 4 planes)" \
  test "$(grep -c 'plane z=' "$txt")" -eq 4 || diag_file "$txt"

"$info" --topology trn9 >"$txt" 2>&1
rc=$?
check "--topology trn9 fails, naming the text and the models" \
  test $rc -ne 0 -a "$(grep -c "'trn9' is not an instance model; expected host, trn1.32xl" "$txt")" \
  -eq 1 || diag_file "$txt"

hello=$TM_PROGS/hello.gcc
run_job 60 "${mpirun[@]}" -np 4 "${via_preload[@]}" -x TORUSMPI_INSTANCE=torus:2x2:cores=1 \
  "$hello" 4 "$TM_PREFIX"
check "hello, np=4 on torus:2x2:cores=1 (a full instance)" ranks_done 4 || diag_job

run_job 60 "${mpirun[@]}" -np 3 "${via_preload[@]}" -x TORUSMPI_INSTANCE=trn2.48xl \
  "$hello" 3 "$TM_PREFIX"
check "hello, np=3 on trn2.48xl (fewer ranks than the instance holds)" ranks_done 3 || diag_job

run_job 60 "${mpirun[@]}" -np 5 "${via_preload[@]}" -x TORUSMPI_INSTANCE=torus:2x2:cores=1 \
  "$hello" 5 "$TM_PREFIX"
check "np=5 on torus:2x2:cores=1 fails MPI_Init" test "$job_rc" -ne 0 -a "$job_rc" -ne 124 ||
  diag_job
check "... saying the model holds 4 ranks and the job has 5" \
  grep -q 'MPI_Init: TORUSMPI_INSTANCE: torus:2x2:cores=1 holds 4 ranks; this job has 5' \
  "$job_err" || diag_job

run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_INSTANCE=torus:2x2:cores=0 \
  "$hello" 2 "$TM_PREFIX"
check "a bad model name fails MPI_Init" test "$job_rc" -ne 0 -a "$job_rc" -ne 124 || diag_job
check "... naming the text and what is expected" \
  grep -q "TORUSMPI_INSTANCE: 'torus:2x2:cores=0': cores is '0'; expected a number from 1 to 64" \
  "$job_err" || diag_job

# Several instances (TORUSMPI_INSTANCES): the capacity grows with them, and a count the job cannot
# fill is refused.
run_job 60 "${mpirun[@]}" -np 5 "${via_preload[@]}" -x TORUSMPI_INSTANCE=torus:2x1:cores=1 \
  -x TORUSMPI_INSTANCES=2 "$hello" 5 "$TM_PREFIX"
check "np=5 on 2 x torus:2x1:cores=1 fails MPI_Init, saying 2 instances hold 4 ranks" \
  grep -q 'TORUSMPI_INSTANCE: 2 x torus:2x1:cores=1 (TORUSMPI_INSTANCES) hold 4 ranks; this job has 5' \
  "$job_err" || diag_job
run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_INSTANCES=3 "$hello" 2 "$TM_PREFIX"
check "TORUSMPI_INSTANCES=3 on 2 ranks fails MPI_Init, naming the range" \
  grep -q 'TORUSMPI_INSTANCES=3: a job of 2 rank(s) fills between 1 and 2 instance(s)' \
  "$job_err" || diag_job
TORUSMPI_INSTANCES=3 "$info" --topology torus:2x2:cores=2 --parsable >"$work/inst3.txt" 2>&1
check "torusmpi_info --topology with TORUSMPI_INSTANCES=3 of torus:2x2:cores=2: chip 1 holds ranks 2-3, 10-11 and 18-19" \
  grep -qx 'chip:1:coords:1,0:ranks:2-3,10-11,18-19' "$work/inst3.txt" || diag_file "$work/inst3.txt"

# Binding: 2 ranks, with the launcher binding nothing (lib.sh's mpirun has --bind-to none).
cores=$("$info" --parsable | sed -n 's/^host:cores://p')
run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_INSTANCE=torus:2x2:cores=1 \
  -x TORUSMPI_BIND=core -x TORUSMPI_DEBUG=boot "$hello" 2 "$TM_PREFIX"
check "TORUSMPI_BIND=core: hello, np=2" ranks_done 2 || diag_job
check "... each rank says it is bound, to different cores ($cores on this host)" \
  test "$(grep -o 'boot: bound to [a-zA-Z]* L#[0-9]*' "$job_err" | sort -u | grep -c 'bound')" \
  -eq "$((cores >= 2 ? 2 : 1))" || diag_job
run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_BIND=none -x TORUSMPI_DEBUG=boot \
  "$hello" 2 "$TM_PREFIX"
check "TORUSMPI_BIND=none: hello, np=2, no rank bound" \
  eval 'ranks_done 2 && ! grep -q "boot: bound to " "$job_err" &&
    test "$(grep -c "not bound to a core: TORUSMPI_BIND=none" "$job_err")" -eq 2' || diag_job
# More ranks than cores: auto binds them too, round robin, so that every core gets its share.
n=$((cores + 1))
run_job 60 "${mpirun[@]}" -np "$n" "${via_preload[@]}" -x TORUSMPI_DEBUG=boot "$hello" "$n" \
  "$TM_PREFIX"
check "TORUSMPI_BIND=auto, np=$n on $cores core(s): every rank bound, every core used" \
  eval 'ranks_done "$n" && test "$(grep -c "boot: bound to " "$job_err")" -eq "$n" &&
    test "$(grep -o "boot: bound to [a-zA-Z]* L#[0-9]*" "$job_err" | sort -u | wc -l)" \
      -eq "$cores"' || diag_job
# mpirun's --bind-to (its last one wins) is kept, even a binding to every CPU of the host.
run_job 60 "${mpirun[@]}" --bind-to socket:overload-allowed -np "$n" "${via_preload[@]}" \
  -x TORUSMPI_DEBUG=boot "$hello" "$n" "$TM_PREFIX"
check "TORUSMPI_BIND=auto keeps mpirun's --bind-to socket, np=$n" \
  eval 'ranks_done "$n" && ! grep -q "boot: bound to " "$job_err" &&
    test "$(grep -c "the launcher bound it (--bind-to socket" "$job_err")" -eq "$n"' || diag_job
run_job 60 "${mpirun[@]}" -np 2 "${via_preload[@]}" -x TORUSMPI_DEBUG=boot \
  taskset -c 0 "$hello" 2 "$TM_PREFIX"
check "TORUSMPI_BIND=auto keeps a binding made before it (taskset)" \
  eval 'ranks_done 2 && test "$(grep -c "bound it already" "$job_err")" -eq 2' || diag_job
check_shm
tap_done
