#!/usr/bin/env bash
# entry_lock: every entry point of src/mpi takes the library's lock (core/progress.h), so that
# MPI_THREAD_MULTIPLE holds for every call. Reads the sources, needs no build. An entry point is a
# definition of PMPI_*, PMPIX_*, MPIX_* (torusmpi.h's stream calls), torusmpi_* or ompi_* at the
# start of a line; its body, up to the
# first "}" at the start of a line, must construct a progress::Lock. The exceptions below take no
# lock on purpose, each with its reason. A miss is one line: "entry_lock: <file>:<line> <name>".
set -u
export LC_ALL=C
srcdir=$(cd "$(dirname "$0")/../src/mpi" && pwd)

# MPI_Init(_thread): the lock is switched on there. MPI_Abort: must end the job even while a
# thread holds the lock. The clocks, the version and the thread queries: constants or reads of
# what MPI_Init wrote. MPI_T_init_thread and _finalize: their own mutex (before MPI_Init).
# torusmpi_f_wtime/_wtick: the Fortran clocks. The Fortran string helpers of Open MPI's bindings
# (ompi_fortran_*): they touch only their arguments. MPIX_Query_cuda_support: a constant.
exempt='PMPI_Init PMPI_Init_thread PMPI_Abort PMPI_Wtime PMPI_Wtick PMPI_Initialized
PMPI_Finalized PMPI_Query_thread PMPI_Is_thread_main PMPI_Get_version PMPI_T_init_thread
PMPI_T_finalize torusmpi_f_wtime torusmpi_f_wtick ompi_fortran_string_f2c ompi_fortran_string_c2f
ompi_fortran_argv_blank_f2c ompi_fortran_argv_count_f2c ompi_fortran_multiple_argvs_f2c
MPIX_Query_cuda_support'

misses=$(awk -v exempt="$exempt" '
  BEGIN { n = split(exempt, e, /[ \n]+/); for (i = 1; i <= n; i++) skip[e[i]] = 1 }
  FNR == 1 { name = "" }
  name == "" && /^[A-Za-z_].*[ *](P?MPIX_|PMPI_|torusmpi_|ompi_)[A-Za-z0-9_]*\(/ && !/;[ \t]*$/ {
    match($0, /(P?MPIX_|PMPI_|torusmpi_|ompi_)[A-Za-z0-9_]*\(/)
    name = substr($0, RSTART, RLENGTH - 1); line = FNR; locked = 0; body = 0
  }
  name != "" {
    if (index($0, "{")) body = 1
    if (index($0, "progress::Lock")) locked = 1
    if (body && (/^}/ || (FNR == line && /}[ \t]*$/))) {
      if (!locked && !(name in skip)) print "entry_lock: " FILENAME ":" line " " name
      name = ""
    } else if (!body && /;[ \t]*$/) {
      name = ""  # a declaration
    }
  }' "$srcdir"/*.cc)

echo "1..1"
if [ -z "$misses" ]; then
  echo "ok 1 - every entry point of src/mpi takes the lock"
else
  echo "not ok 1 - entry points without the lock"
  echo "$misses" | sed 's/^/# /'
fi
