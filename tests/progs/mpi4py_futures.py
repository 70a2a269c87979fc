"""mpi4py_futures: mpi4py.futures' MPIPoolExecutor (Debian's python3-mpi4py, built against Open
MPI) on the library under test, which must give MPI_THREAD_MULTIPLE (mpi4py's default request)
and MPI_Comm_spawn: the executor spawns its workers from a one-rank job.

    mpirun -np 1 python3 mpi4py_futures.py <library name expected>

Checked: the library is the one expected, the thread level provided, a map over 200 items on 3
spawned workers in order, a submit whose function raises (the exception comes back), the workers'
own library and their parent intercommunicator (each worker answers with what it sees), and a
clean shutdown. The "ok/FAIL/done" lines are tests/progs/check.h's.
"""
import os
import sys

from mpi4py import MPI
from mpi4py.futures import MPIPoolExecutor

checks = failed = 0


def say(line):
    os.write(1, (line + "\n").encode())


def check(passed, what, why=""):
    global checks, failed
    checks += 1
    if passed:
        say(f"ok 0 {what}")
    else:
        failed += 1
        say(f"FAIL 0 {what}: {why}")


def square(x):
    return x * x


def fails(x):
    raise ValueError(f"worker refused {x}")


def whoami(_):
    parent = MPI.Comm.Get_parent()
    return (MPI.Get_library_version(), parent != MPI.COMM_NULL and parent.Is_inter(),
            parent.Get_remote_size() if parent != MPI.COMM_NULL else -1, MPI.Query_thread())


if __name__ == "__main__":
    expect = sys.argv[1]
    lib = MPI.Get_library_version()
    check(expect in lib, "library", f"expected {expect}, got {lib.splitlines()[0]}")
    check(MPI.Query_thread() == MPI.THREAD_MULTIPLE, "thread-multiple", str(MPI.Query_thread()))
    try:
        with MPIPoolExecutor(max_workers=3) as pool:
            got = list(pool.map(square, range(200)))
            check(got == [x * x for x in range(200)], "map-200", str(got[:8]))
            future = pool.submit(fails, 7)
            try:
                future.result(timeout=60)
                check(False, "exception-returned", "no exception")
            except ValueError as e:
                check("refused 7" in str(e), "exception-returned", repr(e))
            seen = list(pool.map(whoami, range(12)))
            check(all(expect in s[0] for s in seen), "workers-library", str(seen[0][0][:60]))
            check(all(s[1] and s[2] == 1 for s in seen), "workers-parent", str(seen[:2]))
    except Exception as e:  # a missing function or a failed spawn is a failure, said plainly
        check(False, "executor", repr(e))
    say(f"done 0 of 1: {checks} checks, {failed} failed")
    sys.exit(1 if failed else 0)
