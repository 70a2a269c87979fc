"""mpi4py_check: an application's use of MPI through Debian's mpi4py (built against Open MPI),
run on torusmpi by LD_PRELOAD substitution.

    mpirun -np N python3 mpi4py_check.py

One "ok/FAIL <rank> <check>" line per check, then "done <rank> of <size>: N checks, N failed", the
lines tests/progs/check.h prints, so the integration scripts read both alike. Checked:
 - the library under mpi4py is the one the test expects (MPI.Get_library_version names it);
 - communicators: Split by parity with reversed keys, Dup, Split_type(COMM_TYPE_SHARED), Free;
   a collective and point-to-point on each;
 - a reduction with an op defined in Python, applied by the library (non-commutative: 2x2 integer
   matrix products in rank order, on a contiguous type of 4 ints), by Allreduce and by Reduce to
   every root;
 - pickled objects: send/recv of a dict, bcast, gather, scatter, allgather, alltoall of objects;
 - buffers with derived datatypes: a vector type (every other int of a buffer), a struct type
   (int, double), a contiguous type, committed and freed, sent and received, and an allgather
   of the vector type.
"""
import os
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
size = comm.Get_size()
checks = failed = 0


def say(line):
    # One write per line: the ranks share mpirun's output, and print() writes the text and its
    # newline separately, so lines of two ranks could run together.
    os.write(1, (line + "\n").encode())


def check(passed, what, why=""):
    global checks, failed
    checks += 1
    if passed:
        say(f"ok {rank} {what}")
    else:
        failed += 1
        say(f"FAIL {rank} {what}: {why}")


def matmul(a, b):  # 2x2 integer matrices as 4-tuples, mod a prime so values stay small
    p = 1009
    return ((a[0] * b[0] + a[1] * b[2]) % p, (a[0] * b[1] + a[1] * b[3]) % p,
            (a[2] * b[0] + a[3] * b[2]) % p, (a[2] * b[1] + a[3] * b[3]) % p)


def mine(r):
    return (r + 2, 1, r % 3, 1)


# --- Which library.
want = sys.argv[1] if len(sys.argv) > 1 else ""
version = MPI.Get_library_version()
check(want == "" or version.startswith(want), "library", f"expected {want!r}, got {version[:40]!r}")

# --- Communicators.
half = comm.Split(rank % 2, size - rank)  # reversed keys: rank order flips in each half
members = half.allgather(rank)
expect = sorted([r for r in range(size) if r % 2 == rank % 2], reverse=True)
check(members == expect, "split-reversed-keys", f"{members} != {expect}")
total = half.allreduce(rank, op=MPI.SUM)
check(total == sum(expect), "split-allreduce", f"{total}")
dup = comm.Dup()
check(MPI.Comm.Compare(dup, comm) == MPI.CONGRUENT, "dup-congruent")
right, left = (rank + 1) % size, (rank - 1) % size
got = dup.sendrecv(rank, dest=right, source=left)
check(got == left, "dup-sendrecv", f"{got}")
node = comm.Split_type(MPI.COMM_TYPE_SHARED)
check(node.Get_size() == size, "split-type-shared", f"{node.Get_size()} of {size}")
for c in (half, dup, node):
    c.Free()
check(half == MPI.COMM_NULL, "free")

# --- A non-commutative op defined in Python, applied by the library's reductions: one element is
# a 2x2 integer matrix (a contiguous type of 4 ints), combined in rank order.
import array


def matmul_buffers(inbuf, inoutbuf, datatype):
    a = memoryview(inbuf).cast("B").cast("i")
    b = memoryview(inoutbuf).cast("B").cast("i")
    for k in range(0, len(b), 4):
        b[k:k + 4] = array.array("i", matmul(tuple(a[k:k + 4]), tuple(b[k:k + 4])))


mat = MPI.INT.Create_contiguous(4).Commit()
op = MPI.Op.Create(matmul_buffers, commute=False)
nmat = 5
send = array.array("i", [v for m in range(nmat) for v in mine(rank + m)])
expect = []
for m in range(nmat):
    e = mine(0 + m)
    for r in range(1, size):
        e = matmul(e, mine(r + m))
    expect.extend(e)
recv = array.array("i", [0] * (4 * nmat))
comm.Allreduce([send, nmat, mat], [recv, nmat, mat], op=op)
check(list(recv) == expect, "python-op-allreduce", f"{list(recv)} != {expect}")
for root in range(size):
    recv = array.array("i", [0] * (4 * nmat))
    comm.Reduce([send, nmat, mat], [recv, nmat, mat], op=op, root=root)
    if rank == root:
        check(list(recv) == expect, f"python-op-reduce-root-{root}", f"{list(recv)}")
check(not op.Is_commutative(), "python-op-not-commutative")
op.Free()
mat.Free()

# --- Pickled objects.
obj = {"rank": rank, "data": list(range(rank + 3)), "text": "x" * (rank * 1000)}
got = comm.sendrecv(obj, dest=right, source=left)
check(got["rank"] == left and len(got["text"]) == left * 1000, "object-sendrecv")
got = comm.bcast(obj if rank == 0 else None, root=0)
check(got["rank"] == 0, "object-bcast")
got = comm.gather(rank * rank, root=size - 1)
if rank == size - 1:
    check(got == [r * r for r in range(size)], "object-gather", f"{got}")
got = comm.scatter([(r, "s") for r in range(size)] if rank == 0 else None, root=0)
check(got == (rank, "s"), "object-scatter", f"{got}")
got = comm.allgather((rank, "a"))
check(got == [(r, "a") for r in range(size)], "object-allgather")
got = comm.alltoall([(rank, d) for d in range(size)])
check(got == [(s, rank) for s in range(size)], "object-alltoall", f"{got}")
big = bytes(200000) if rank == 0 else None  # past the eager limit
got = comm.bcast(big, root=0)
check(len(got) == 200000, "object-bcast-large")

# --- Derived datatypes on buffers.
try:
    n = 8
    every_other = MPI.INT.Create_vector(n, 1, 2).Commit()
    src = array.array("i", [rank * 100 + i for i in range(2 * n)])
    dst = array.array("i", [-1] * (2 * n))
    comm.Sendrecv([src, 1, every_other], dest=right, recvbuf=[dst, 1, every_other], source=left)
    want = [left * 100 + i if i % 2 == 0 else -1 for i in range(2 * n)]
    check(list(dst) == want, "vector-sendrecv", f"{list(dst)} != {want}")
    gathered = array.array("i", [0] * (2 * n * size))
    pair = MPI.INT.Create_contiguous(2).Commit()
    comm.Allgather([src, n, pair], [gathered, n, pair])
    want = [r * 100 + i for r in range(size) for i in range(2 * n)]
    check(list(gathered) == want, "contiguous-allgather")
    st = MPI.Datatype.Create_struct([1, 1], [0, 8], [MPI.INT, MPI.DOUBLE]).Commit()
    check(st.Get_size() == 12 and st.Get_extent() == (0, 16), "struct-size-extent",
          f"{st.Get_size()} {st.Get_extent()}")
    for t in (every_other, pair, st):
        t.Free()
except Exception as e:  # a missing function is a failure, said plainly
    check(False, "derived-datatypes", repr(e))

comm.Barrier()
say(f"done {rank} of {size}: {checks} checks, {failed} failed")
sys.exit(1 if failed else 0)
