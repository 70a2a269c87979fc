#!/usr/bin/python3
"""Every torch.distributed operation on the backend under test, against gloo on the same inputs.

    mpirun -np N /usr/bin/python3 ops.py [--backend torusmpi|gloo] [--only REGEX]

Each check runs an operation on the group under test and on a gloo group over the same ranks,
with inputs every rank can compute for every other rank, and requires the result to equal the
local reference computed from those inputs (int64 or float64, then cast) -- and so gloo's, named
"= gloo" in the check's name when gloo agrees. Where gloo refuses an operation or a dtype, the
name says so ("= local reference (gloo refuses ...)") and the summary at the end lists gloo's
refusals with its message.

The data are small integers chosen so that every result is exact in every dtype (bfloat16 holds
integers to 256, float16 to 2048): sums of values in -3..4, products of +-1 and +-2, bitwise
operations on bytes, AVG on multiples of the size. Counts are 0, 1, size-1, size+1 and 10007 (a
prime); every root (broadcast: every root at every count; scatter, gather, reduce: the root
changes with the count); non-contiguous tensors (transposed, strided slices whose gaps must stay
untouched); subgroups; async handles; errors, whose messages must name the operation. After each
section an all_reduce checks that the section left nothing in flight.

Rank 0 prints one TAP line per check after gathering every rank's verdict (over gloo), and the
job exits non-zero if any check failed on any rank. --only REGEX runs the sections whose name
matches (p2p, broadcast, scatter_gather, all_reduce, reduce, all_gather, reduce_scatter,
all_to_all, barrier, subgroups, async, objects, coalesced, complex, errors); OPS_TRACE=PREFIX
makes each rank log the cases it starts to PREFIX.<rank> (where a hung job stopped).

Gloo in Debian's torch 1.13 crashes (SIGFPE) on an all_gather of empty tensors: that case is
not asked of gloo, and not run at all when the backend under test is gloo (dry runs).
"""

import argparse
import functools
import os
import re
import sys
import time
import warnings

import torch
import torch.distributed as dist

import harness
from harness import Skip, one_line

FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
DTYPES = FLOATS + INTS + [torch.bool]
R = dist.ReduceOp
OPS = [("SUM", R.SUM), ("PRODUCT", R.PRODUCT), ("MIN", R.MIN), ("MAX", R.MAX),
       ("BAND", R.BAND), ("BOR", R.BOR), ("BXOR", R.BXOR)]
if hasattr(R, "AVG"):
    OPS.append(("AVG", R.AVG))
BITWISE = ("BAND", "BOR", "BXOR")
PRIME = 10007

# Filled by main(): the groups, this rank, the size, the counts.
G = argparse.Namespace()
# What gloo refused or got wrong, for the summary: (operation, reduction, dtype) -> its message.
REFUSED = {}
GLOO_WRONG = {}
STICKY = {}  # the keys gloo refused at a non-zero count


def dname(dtype):
    return str(dtype).replace("torch.", "")


def op_pairs():
    """(name, op, dtype) for every reduction this suite checks: bitwise operations on integers and
    bool only, AVG on floating types only."""
    for name, op in OPS:
        for dtype in DTYPES:
            if name in BITWISE and dtype.is_floating_point:
                continue
            if name == "AVG" and not dtype.is_floating_point:
                continue
            yield name, op, dtype


def values(kind, dtype, rank, n, salt=0):
    """Rank `rank`'s input of n elements for `kind` (a ReduceOp name, or "move" for operations
    that only move data); `salt` tells apart the blocks of one rank."""
    i = torch.arange(n, dtype=torch.int64)
    h = i * 7 + rank * 13 + salt * 29 + 3
    signed = dtype != torch.uint8
    if dtype == torch.bool:
        # Mostly true where the operation is an AND, mostly false where it is an OR.
        v = (h % 5 != 0) if kind in ("PRODUCT", "MIN", "BAND") else (h % 3 == 0)
    elif kind == "move":
        v = h % 97 - (48 if signed else 0)
    elif kind == "PRODUCT":
        v = torch.tensor([-2, -1, 1, 2])[h % 4] if signed else torch.tensor([1, 2])[h % 2]
    elif kind in BITWISE:
        v = (h * 37) % 256 - (128 if signed else 0)
    else:
        v = h % 8 - (3 if signed else 0)
        if kind == "AVG":
            v = v * G.size
    return v.to(dtype)


def sentinel(dtype, shape):
    """What an output holds before the operation: a value no input takes (but for bool)."""
    if dtype == torch.bool:
        return torch.ones(shape, dtype=dtype)
    return torch.full(shape, 99).to(dtype)


def reduce_ref(kind, inputs, dtype):
    """The reduction of `inputs` (one tensor per rank) computed wide, then cast to dtype. Casting
    to bool turns a sum into OR and a product into AND, as gloo computes bool."""
    wide = torch.float64 if dtype.is_floating_point else torch.int64
    st = torch.stack([t.to(wide) for t in inputs])
    if kind == "SUM":
        r = st.sum(0)
    elif kind == "AVG":
        r = st.sum(0) / len(inputs)
    elif kind == "PRODUCT":
        r = st.prod(0)
    elif kind == "MIN":
        r = st.amin(0)
    elif kind == "MAX":
        r = st.amax(0)
    else:
        fn = {"BAND": torch.bitwise_and, "BOR": torch.bitwise_or, "BXOR": torch.bitwise_xor}[kind]
        r = functools.reduce(fn, list(st))
    return r.to(dtype)


def diff(got, want):
    """None when the two tensors are equal in dtype, shape and every element."""
    if got.dtype != want.dtype:
        return "dtype %s, expected %s" % (dname(got.dtype), dname(want.dtype))
    if got.shape != want.shape:
        return "shape %s, expected %s" % (list(got.shape), list(want.shape))
    if torch.equal(got, want):
        return None
    bad = (got != want).nonzero()
    at = tuple(bad[0].tolist())
    return "%d of %d elements differ, first at %s: %s, expected %s" % (
        len(bad), got.numel(), list(at), got[at].item(), want[at].item())


def diffs(got, want):
    if len(got) != len(want):
        return "%d results, expected %d" % (len(got), len(want))
    for k, (g, w) in enumerate(zip(got, want)):
        d = diff(g, w)
        if d:
            return ("result %d: " % k if len(want) > 1 else "") + d
    return None


class Versus:
    """One check: cases run on the group under test and on gloo, each result compared with the
    local reference; gloo's result, when it gives one, must agree with it too (else gloo is
    wrong and the summary says so)."""

    def __init__(self, base, test=None, ref=None):
        self.base = base
        self.test = G.test if test is None else test
        self.ref = G.ref if ref is None else ref
        self.cases = 0
        self.refused = []
        self.wrong = []
        self.errors = []

    def case(self, label, fn, expect, key, gloo_crashes=None, n=None):
        """fn(group) runs the operation on fresh inputs and returns this rank's results (a list).
        key: (operation, reduction, dtype), naming the case in the summary of gloo's refusals;
        once gloo refused a key at a non-zero count it is not asked again (a refusal costs
        milliseconds). gloo_crashes: why gloo is not asked at all (it would end the job)."""
        self.cases += 1
        trace(self.base + " " + label)
        try:
            if gloo_crashes and G.test_is_gloo:
                raise RuntimeError("not run on gloo: " + gloo_crashes)
            got = fn(self.test)
            d = diffs(got, expect)
            if d:
                self.errors.append("%s: %s" % (label, d))
        except Exception as e:  # noqa: BLE001
            self.errors.append("%s: %s: %s" % (label, type(e).__name__, one_line(e)))
        if self.ref is None:
            return
        if gloo_crashes:
            self.refused.append(label)
            REFUSED.setdefault((key[0] + " " + label, key[1], key[2]), "not asked: " + gloo_crashes)
            return
        if key in STICKY:
            self.refused.append(label)
            return
        try:
            trace("gloo")
            ref = fn(self.ref)
        except (RuntimeError, ValueError) as e:
            self.refused.append(label)
            REFUSED.setdefault(key, one_line(e))
            if n != 0:
                STICKY[key] = one_line(e)
            return
        d = diffs(ref, expect)
        if d:
            self.wrong.append(label)
            GLOO_WRONG.setdefault(key, "%s: %s" % (label, d))

    def verdict(self):
        if self.ref is None:
            name = self.base + " = local reference"
        elif not self.refused and not self.wrong:
            name = self.base + " = gloo"
        else:
            why = []
            if self.refused:
                why.append("gloo refuses" + self._which(self.refused))
            if self.wrong:
                why.append("gloo gets wrong" + self._which(self.wrong))
            name = "%s = local reference (%s)" % (self.base, "; ".join(why))
        err = "; ".join(self.errors[:2]) + ("; ..." if len(self.errors) > 2 else "")
        return name, (err or None)

    def _which(self, labels):
        if len(labels) == self.cases:
            return ""
        return " %s" % ", ".join(labels[:3]) + (", ..." if len(labels) > 3 else "")


def trace(text):
    """With OPS_TRACE=PREFIX, each rank appends the case it starts to PREFIX.<rank>: where a
    job that hangs stopped, rank by rank."""
    if os.environ.get("OPS_TRACE"):
        with open("%s.%d" % (os.environ["OPS_TRACE"], G.rank), "a") as f:
            f.write(text + "\n")


def roots_and_counts():
    """(root, count) pairs: every count once, every root at least once."""
    k = max(len(G.sizes), G.size)
    return [(i % G.size, G.sizes[i % len(G.sizes)]) for i in range(k)]


def wants_peers():
    if G.size < 2:
        raise Skip("needs 2 ranks")


# ---- point to point ---------------------------------------------------------------------------

def p2p_ring(dtype):
    wants_peers()
    v = Versus("send/recv ring %s, counts %s" % (dname(dtype), G.sizes_text))
    nxt, prv = (G.rank + 1) % G.size, (G.rank - 1) % G.size
    for n in G.sizes:
        def fn(g, n=n):
            out = sentinel(dtype, (n,))
            data = values("move", dtype, G.rank, n, 1)
            # Even ranks send first: no cycle of blocking sends, whatever the size's parity.
            if G.rank % 2 == 0:
                dist.send(data, nxt, group=g)
                dist.recv(out, prv, group=g)
            else:
                dist.recv(out, prv, group=g)
                dist.send(data, nxt, group=g)
            return [out]
        v.case("n=%d" % n, fn, [values("move", dtype, prv, n, 1)], ("send/recv", "", dname(dtype)),
               n=n)
    return v.verdict()


def p2p_pairs(dtype):
    """isend/irecv between every pair at once, waited in reverse order."""
    wants_peers()
    v = Versus("isend/irecv all pairs %s, counts %s" % (dname(dtype), G.sizes_text))
    peers = [q for q in range(G.size) if q != G.rank]
    for n in G.sizes:
        def fn(g, n=n):
            outs = {q: sentinel(dtype, (n,)) for q in peers}
            ins = {q: values("move", dtype, G.rank, n, q) for q in peers}
            reqs = [dist.irecv(outs[q], src=q, group=g, tag=7) for q in peers]
            reqs += [dist.isend(ins[q], q, group=g, tag=7) for q in peers]
            for r in reversed(reqs):
                r.wait()
            return [outs[q] for q in peers]
        v.case("n=%d" % n, fn, [values("move", dtype, q, n, G.rank) for q in peers],
               ("isend/irecv", "", dname(dtype)), n=n)
    return v.verdict()


def p2p_any_source(test=None, ref=None, members=None, label=""):
    """Every member in turn receives one message from each other member with dist.recv(t)
    without src; the senders it returns (global ranks) and the data must match."""
    members = list(range(G.size)) if members is None else members
    if len(members) < 2:
        raise Skip("needs 2 ranks")
    if G.rank not in members:
        raise Skip("not a member")
    v = Versus("recv from any source%s: returned senders and data" % label, test, ref)
    n = 5
    for root in members:
        others = [q for q in members if q != root]

        def fn(g, root=root, others=others):
            if G.rank != root:
                dist.send(values("move", torch.int32, G.rank, n, root), root, group=g, tag=3)
                return []
            got = {}
            for _ in others:
                t = sentinel(torch.int32, (n,))
                src = dist.recv(t, group=g, tag=3)
                got[src] = t
            return [torch.tensor(sorted(got))] + [got[q] for q in sorted(got)]
        want = [] if G.rank != root else (
            [torch.tensor(others)] + [values("move", torch.int32, q, n, root) for q in others])
        v.case("root %d" % root, fn, want, ("recv any source", "", "int32"))
    return v.verdict()


def p2p_irecv_any_source():
    """dist.irecv(t) without src, several posted at once; each work's _source_rank()."""
    wants_peers()
    v = Versus("irecv from any source, several posted: data and work._source_rank()")
    n = 4
    root = G.size - 1
    others = list(range(G.size - 1))

    def fn(g):
        if G.rank != root:
            dist.send(values("move", torch.int64, G.rank, n, 9), root, group=g, tag=4)
            return []
        outs = [sentinel(torch.int64, (n,)) for _ in others]
        works = [dist.irecv(t, group=g, tag=4) for t in outs]
        got = {}
        for w, t in zip(works, outs):
            w.wait()
            got[w._source_rank()] = t
        return [torch.tensor(sorted(got))] + [got[q] for q in sorted(got)]
    want = [] if G.rank != root else (
        [torch.tensor(others)] + [values("move", torch.int64, q, n, 9) for q in others])
    v.case("root %d" % root, fn, want, ("irecv any source", "", "int64"))
    return v.verdict()


def p2p_tags():
    """Two messages to one peer under tags 1 then 2, received by tag 2 then 1."""
    wants_peers()
    v = Versus("isend/irecv matched by tag, received in the other order")
    nxt, prv = (G.rank + 1) % G.size, (G.rank - 1) % G.size

    def fn(g):
        a, b = sentinel(torch.float32, (6,)), sentinel(torch.float32, (6,))
        rb = dist.irecv(b, src=prv, group=g, tag=2)
        ra = dist.irecv(a, src=prv, group=g, tag=1)
        s1 = values("move", torch.float32, G.rank, 6, 1)
        s2 = values("move", torch.float32, G.rank, 6, 2)
        w1 = dist.isend(s1, nxt, group=g, tag=1)
        w2 = dist.isend(s2, nxt, group=g, tag=2)
        for w in (rb, ra, w1, w2):
            w.wait()
        return [a, b]
    v.case("ring", fn, [values("move", torch.float32, prv, 6, 1),
                        values("move", torch.float32, prv, 6, 2)],
           ("isend/irecv by tag", "", "float32"))
    return v.verdict()


def p2p_batch():
    wants_peers()
    v = Versus("batch_isend_irecv ring, both directions")
    nxt, prv = (G.rank + 1) % G.size, (G.rank - 1) % G.size

    def fn(g):
        a, b = sentinel(torch.int32, (PRIME,)), sentinel(torch.int32, (3,))
        ops = [dist.P2POp(dist.isend, values("move", torch.int32, G.rank, PRIME, 1), nxt, g),
               dist.P2POp(dist.irecv, a, prv, g),
               dist.P2POp(dist.isend, values("move", torch.int32, G.rank, 3, 2), prv, g),
               dist.P2POp(dist.irecv, b, nxt, g)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        return [a, b]
    v.case("ring", fn, [values("move", torch.int32, prv, PRIME, 1),
                        values("move", torch.int32, nxt, 3, 2)],
           ("batch_isend_irecv", "", "int32"))
    return v.verdict()


def p2p_noncontig():
    """Sends a transposed tensor, receives into every other element of a buffer."""
    wants_peers()
    v = Versus("send/recv non-contiguous: transposed source, strided destination")
    nxt, prv = (G.rank + 1) % G.size, (G.rank - 1) % G.size
    rows, cols = 37, 5

    def fn(g):
        src = values("move", torch.float32, G.rank, rows * cols, 4).view(cols, rows).t()
        buf = sentinel(torch.float32, (2 * rows * cols,))
        dst = buf[::2].view(rows, cols)
        if G.rank % 2 == 0:
            dist.send(src, nxt, group=g)
            dist.recv(dst, prv, group=g)
        else:
            dist.recv(dst, prv, group=g)
            dist.send(src, nxt, group=g)
        return [buf]
    want = sentinel(torch.float32, (2 * rows * cols,))
    want[::2] = values("move", torch.float32, prv, rows * cols, 4).view(cols, rows).t().reshape(-1)
    v.case("37x5", fn, [want], ("send/recv non-contiguous", "", "float32"))
    return v.verdict()


# ---- broadcast, scatter, gather -----------------------------------------------------------------

def broadcast_dtype(dtype):
    v = Versus("broadcast %s, every root, counts %s" % (dname(dtype), G.sizes_text))
    for root in range(G.size):
        for n in G.sizes:
            def fn(g, n=n, root=root):
                t = values("move", dtype, G.rank, n, root)
                dist.broadcast(t, root, group=g)
                return [t]
            v.case("root %d n=%d" % (root, n), fn, [values("move", dtype, root, n, root)],
                   ("broadcast", "", dname(dtype)), n=n)
    return v.verdict()


def broadcast_noncontig():
    v = Versus("broadcast non-contiguous: transposed, and every other element")
    rows, cols = 11, 7
    for root in range(G.size):
        def fn(g, root=root):
            t = values("move", torch.int32, G.rank, rows * cols, root).view(rows, cols).t()
            buf = sentinel(torch.int32, (2 * rows,))
            buf[::2] = values("move", torch.int32, G.rank, rows, root + 1)
            dist.broadcast(t, root, group=g)
            dist.broadcast(buf[::2], root, group=g)
            return [t, buf]
        buf = sentinel(torch.int32, (2 * rows,))
        buf[::2] = values("move", torch.int32, root, rows, root + 1)
        want = [values("move", torch.int32, root, rows * cols, root).view(rows, cols).t(), buf]
        v.case("root %d" % root, fn, want, ("broadcast non-contiguous", "", "int32"))
    return v.verdict()


def scatter_dtype(dtype):
    v = Versus("scatter %s, roots rotating, counts %s" % (dname(dtype), G.sizes_text))
    for root, n in roots_and_counts():
        def fn(g, n=n, root=root):
            out = sentinel(dtype, (n,))
            parts = ([values("move", dtype, G.rank, n, j) for j in range(G.size)]
                     if G.rank == root else None)
            dist.scatter(out, parts, src=root, group=g)
            return [out]
        v.case("root %d n=%d" % (root, n), fn, [values("move", dtype, root, n, G.rank)],
               ("scatter", "", dname(dtype)), n=n)
    return v.verdict()


def gather_dtype(dtype):
    v = Versus("gather %s, roots rotating, counts %s" % (dname(dtype), G.sizes_text))
    for root, n in roots_and_counts():
        def fn(g, n=n, root=root):
            outs = [sentinel(dtype, (n,)) for _ in range(G.size)] if G.rank == root else None
            dist.gather(values("move", dtype, G.rank, n, root), outs, dst=root, group=g)
            return outs or []
        want = ([values("move", dtype, q, n, root) for q in range(G.size)]
                if G.rank == root else [])
        v.case("root %d n=%d" % (root, n), fn, want, ("gather", "", dname(dtype)), n=n)
    return v.verdict()


# ---- reductions ---------------------------------------------------------------------------------

def all_reduce_op(name, op, dtype):
    v = Versus("all_reduce %s %s, counts %s" % (name, dname(dtype), G.sizes_text))
    for n in G.sizes:
        def fn(g, n=n):
            t = values(name, dtype, G.rank, n)
            dist.all_reduce(t, op, group=g)
            return [t]
        want = reduce_ref(name, [values(name, dtype, q, n) for q in range(G.size)], dtype)
        v.case("n=%d" % n, fn, [want], ("all_reduce", name, dname(dtype)), n=n)
    return v.verdict()


def all_reduce_noncontig():
    v = Versus("all_reduce SUM non-contiguous: transposed, and every other element")
    rows, cols = 13, 9
    n = rows * cols

    def fn(g):
        t = values("SUM", torch.float32, G.rank, n).view(rows, cols).t()
        buf = sentinel(torch.int64, (2 * PRIME,))
        buf[::2] = values("SUM", torch.int64, G.rank, PRIME, 1)
        dist.all_reduce(t, group=g)
        dist.all_reduce(buf[::2], group=g)
        return [t, buf]
    buf = sentinel(torch.int64, (2 * PRIME,))
    buf[::2] = reduce_ref("SUM", [values("SUM", torch.int64, q, PRIME, 1)
                                  for q in range(G.size)], torch.int64)
    want = reduce_ref("SUM", [values("SUM", torch.float32, q, n) for q in range(G.size)],
                      torch.float32).view(rows, cols).t()
    v.case("13x9, 2x10007", fn, [want, buf], ("all_reduce non-contiguous", "SUM", "float32 int64"))
    return v.verdict()


def reduce_op(name, op, dtype):
    v = Versus("reduce %s %s, roots rotating, counts %s" % (name, dname(dtype), G.sizes_text))
    for root, n in roots_and_counts():
        def fn(g, n=n, root=root):
            t = values(name, dtype, G.rank, n, root)
            dist.reduce(t, root, op, group=g)
            return [t] if G.rank == root else []
        want = ([reduce_ref(name, [values(name, dtype, q, n, root) for q in range(G.size)],
                            dtype)] if G.rank == root else [])
        v.case("root %d n=%d" % (root, n), fn, want, ("reduce", name, dname(dtype)), n=n)
    return v.verdict()


def reduce_scatter_want(name, dtype, n):
    return reduce_ref(name, [values(name, dtype, q, n, G.rank) for q in range(G.size)], dtype)


def reduce_scatter_op(name, op, dtype, form):
    """form: "list" (reduce_scatter), "tensor" (reduce_scatter_tensor), "base"
    (_reduce_scatter_base)."""
    call = {"list": "reduce_scatter", "tensor": "reduce_scatter_tensor",
            "base": "_reduce_scatter_base"}[form]
    v = Versus("%s %s %s, counts %s" % (call, name, dname(dtype), G.sizes_text))
    for n in G.sizes:
        def fn(g, n=n):
            out = sentinel(dtype, (n,))
            parts = [values(name, dtype, G.rank, n, j) for j in range(G.size)]
            if form == "list":
                dist.reduce_scatter(out, parts, op, group=g)
            else:
                getattr(dist, call)(out, torch.cat(parts), op, group=g)
            return [out]
        v.case("n=%d" % n, fn, [reduce_scatter_want(name, dtype, n)],
               (call, name, dname(dtype)), n=n)
    return v.verdict()


# ---- all_gather ---------------------------------------------------------------------------------

def all_gather_dtype(dtype, form):
    call = {"list": "all_gather", "tensor": "all_gather_into_tensor",
            "base": "_all_gather_base"}[form]
    v = Versus("%s %s, counts %s" % (call, dname(dtype), G.sizes_text))
    for n in G.sizes:
        def fn(g, n=n):
            t = values("move", dtype, G.rank, n, 2)
            if form == "list":
                outs = [sentinel(dtype, (n,)) for _ in range(G.size)]
                dist.all_gather(outs, t, group=g)
                return outs
            out = sentinel(dtype, (G.size * n,))
            getattr(dist, call)(out, t, group=g)
            return [out]
        parts = [values("move", dtype, q, n, 2) for q in range(G.size)]
        v.case("n=%d" % n, fn, parts if form == "list" else [torch.cat(parts)],
               (call, "", dname(dtype)), n=n,
               gloo_crashes="SIGFPE in gloo's allgather" if n == 0 and form == "list" else None)
    return v.verdict()


def all_gather_noncontig():
    v = Versus("all_gather non-contiguous: transposed input, outputs columns of one buffer")
    rows, cols = 7, 3

    def fn(g):
        t = values("move", torch.float64, G.rank, rows * cols, 5).view(cols, rows).t()
        buf = sentinel(torch.float64, (rows, cols, 2 * G.size))
        outs = [buf[:, :, 2 * j] for j in range(G.size)]
        dist.all_gather(outs, t, group=g)
        return [buf]
    buf = sentinel(torch.float64, (rows, cols, 2 * G.size))
    for q in range(G.size):
        buf[:, :, 2 * q] = values("move", torch.float64, q, rows * cols, 5).view(cols, rows).t()
    v.case("7x3", fn, [buf], ("all_gather non-contiguous", "", "float64"))
    return v.verdict()


# ---- all_to_all ---------------------------------------------------------------------------------

def uneven(src, dst):
    """Rows rank src sends rank dst in the uneven cases: 0 to 3, zero included."""
    return (2 * src + dst) % 4


def all_to_all_dtype(dtype, form, even):
    call = "all_to_all" if form == "list" else "all_to_all_single"
    kind = "equal blocks, counts %s" % G.sizes_text if even else "uneven blocks of 0-3 rows of 3"
    v = Versus("%s %s, %s" % (call, dname(dtype), kind))
    cases = G.sizes if even else [None]
    for n in cases:
        def rows(s, d, n=n):
            return n if even else uneven(s, d)

        def fn(g, n=n):
            width = 1 if even else 3
            ins = [values("move", dtype, G.rank, rows(G.rank, j) * width, j).view(-1, width)
                   for j in range(G.size)]
            outs = [sentinel(dtype, (rows(j, G.rank), width)) for j in range(G.size)]
            if form == "list":
                dist.all_to_all(outs, ins, group=g)
                return outs
            out = sentinel(dtype, (sum(o.shape[0] for o in outs), width))
            if even:
                dist.all_to_all_single(out, torch.cat(ins), group=g)
            else:
                dist.all_to_all_single(out, torch.cat(ins), [o.shape[0] for o in outs],
                                       [i.shape[0] for i in ins], group=g)
            return [out]
        width = 1 if even else 3
        parts = [values("move", dtype, j, rows(j, G.rank) * width, G.rank).view(-1, width)
                 for j in range(G.size)]
        v.case("n=%s" % n if even else "uneven", fn,
               parts if form == "list" else [torch.cat(parts)], (call, "", dname(dtype)),
               n=n if even else None)
    return v.verdict()


# ---- barrier ------------------------------------------------------------------------------------

def barrier_waits():
    """Rank r enters r*30 ms late: nobody leaves before the last one entered (one host: the
    monotonic clock is shared)."""
    wants_peers()
    time.sleep(0.03 * G.rank)
    enter = time.monotonic()
    dist.barrier(group=G.test)
    leave = time.monotonic()
    every = [None] * G.size
    dist.all_gather_object(every, (enter, leave), group=G.ref)
    last_in = max(e for e, _ in every)
    first_out = min(l for _, l in every)
    if first_out < last_in:
        return "a rank left %.1f ms before the last one entered" % ((last_in - first_out) * 1e3)
    return None


def barrier_repeat():
    for _ in range(20):
        dist.barrier(group=G.test)
    return None


# ---- subgroups ----------------------------------------------------------------------------------

def subgroup_checks(tap, members):
    text = "subgroup %s" % members
    test = dist.new_group(members)
    ref = dist.new_group(members, backend="gloo")
    inside = G.rank in members
    q = len(members)
    me = members.index(G.rank) if inside else -1

    def only_members(fn):
        def run():
            if not inside:
                raise Skip("not a member")
            return fn()
        return run

    @only_members
    def sizes():
        got = (dist.get_rank(test), dist.get_world_size(test))
        return None if got == (me, q) else "get_rank/get_world_size %s, expected %s" % (
            got, (me, q))

    @only_members
    def all_reduce():
        v = Versus(text + ": all_reduce SUM int64 and float32, counts 3 and 10007", test, ref)
        for dtype in (torch.int64, torch.float32):
            for n in (3, PRIME):
                def fn(g, n=n, dtype=dtype):
                    t = values("SUM", dtype, G.rank, n)
                    dist.all_reduce(t, group=g)
                    return [t]
                v.case("%s n=%d" % (dname(dtype), n), fn,
                       [reduce_ref("SUM", [values("SUM", dtype, r, n) for r in members], dtype)],
                       ("subgroup all_reduce", "SUM", "int64 float32"))
        return v.verdict()

    @only_members
    def broadcast_reduce():
        v = Versus(text + ": broadcast and reduce MAX, every root (global rank)", test, ref)
        for root in members:
            def fn(g, root=root):
                t = values("move", torch.int32, G.rank, 9, root)
                dist.broadcast(t, root, group=g)
                u = values("MAX", torch.int32, G.rank, 9, root)
                dist.reduce(u, root, R.MAX, group=g)
                return [t] + ([u] if G.rank == root else [])
            want = [values("move", torch.int32, root, 9, root)]
            if G.rank == root:
                want.append(reduce_ref("MAX", [values("MAX", torch.int32, r, 9, root)
                                               for r in members], torch.int32))
            v.case("root %d" % root, fn, want, ("subgroup broadcast, reduce", "MAX", "int32"))
        return v.verdict()

    @only_members
    def gathers():
        v = Versus(text + ": all_gather, all_gather_into_tensor, gather/scatter to the last",
                   test, ref)
        root = members[-1]

        def ag(g):
            outs = [sentinel(torch.float32, (5,)) for _ in members]
            dist.all_gather(outs, values("move", torch.float32, G.rank, 5, 1), group=g)
            return outs
        v.case("all_gather", ag, [values("move", torch.float32, r, 5, 1) for r in members],
               ("subgroup all_gather", "", "float32"))

        def agt(g):
            out = sentinel(torch.float32, (5 * q,))
            dist.all_gather_into_tensor(out, values("move", torch.float32, G.rank, 5, 1), group=g)
            return [out]
        v.case("all_gather_into_tensor", agt,
               [torch.cat([values("move", torch.float32, r, 5, 1) for r in members])],
               ("subgroup all_gather_into_tensor", "", "float32"))

        def gs(g):
            outs = [sentinel(torch.int32, (4,)) for _ in members] if G.rank == root else None
            dist.gather(values("move", torch.int32, G.rank, 4, 2), outs, dst=root, group=g)
            got = sentinel(torch.int32, (4,))
            parts = ([values("move", torch.int32, G.rank, 4, 10 + r) for r in members]
                     if G.rank == root else None)
            dist.scatter(got, parts, src=root, group=g)
            return (outs or []) + [got]
        want = ([values("move", torch.int32, r, 4, 2) for r in members]
                if G.rank == root else [])
        want.append(values("move", torch.int32, root, 4, 10 + G.rank))
        v.case("gather/scatter", gs, want, ("subgroup gather, scatter", "", "int32"))
        return v.verdict()

    @only_members
    def reduce_scatter_alltoall():
        v = Versus(text + ": reduce_scatter_tensor SUM, all_to_all_single uneven", test, ref)

        def rs(g):
            out = sentinel(torch.int32, (6,))
            inp = torch.cat([values("SUM", torch.int32, G.rank, 6, j) for j in range(q)])
            dist.reduce_scatter_tensor(out, inp, group=g)
            return [out]
        v.case("reduce_scatter_tensor", rs,
               [reduce_ref("SUM", [values("SUM", torch.int32, r, 6, me) for r in members],
                           torch.int32)], ("subgroup reduce_scatter_tensor", "SUM", "int32"))

        def a2a(g):
            ins = [values("move", torch.int64, G.rank, uneven(me, j), j) for j in range(q)]
            sizes_out = [uneven(j, me) for j in range(q)]
            out = sentinel(torch.int64, (sum(sizes_out),))
            dist.all_to_all_single(out, torch.cat(ins), sizes_out, [len(i) for i in ins], group=g)
            return [out]
        v.case("all_to_all_single", a2a,
               [torch.cat([values("move", torch.int64, members[j], uneven(j, me), me)
                           for j in range(q)])], ("subgroup all_to_all_single", "", "int64"))
        return v.verdict()

    @only_members
    def p2p():
        if q < 2:
            raise Skip("one member")
        v = Versus(text + ": send/recv ring by global ranks", test, ref)
        nxt, prv = members[(me + 1) % q], members[(me - 1) % q]

        def fn(g):
            out = sentinel(torch.float64, (PRIME,))
            data = values("move", torch.float64, G.rank, PRIME, 3)
            if me % 2 == 0:
                dist.send(data, nxt, group=g)
                dist.recv(out, prv, group=g)
            else:
                dist.recv(out, prv, group=g)
                dist.send(data, nxt, group=g)
            return [out]
        v.case("ring", fn, [values("move", torch.float64, prv, PRIME, 3)],
               ("subgroup send/recv", "", "float64"))
        return v.verdict()

    @only_members
    def barrier():
        for _ in range(5):
            dist.barrier(group=test)
        return None

    tap.check(text + ": get_rank and get_world_size", sizes)
    tap.check(text + ": all_reduce", all_reduce)
    tap.check(text + ": broadcast and reduce", broadcast_reduce)
    tap.check(text + ": gathers", gathers)
    tap.check(text + ": reduce_scatter, all_to_all_single", reduce_scatter_alltoall)
    tap.check(text + ": send/recv", p2p)
    tap.check(text + ": recv from any source returns global ranks",
              p2p_any_source, test, ref, members, " in " + text)
    tap.check(text + ": barrier x5", barrier)
    # The world's own group still works after the subgroup's traffic.
    tap.check(text + ": the world group after it", lambda: (
        lambda name, err: (text + ": the world group after it: " + name, err))(
            *all_reduce_op("SUM", R.SUM, torch.int32)))


# ---- async handles ------------------------------------------------------------------------------

def sum_of(dtype, n, salt=0):
    return reduce_ref("SUM", [values("SUM", dtype, q, n, salt) for q in range(G.size)], dtype)


def async_wait():
    t = values("SUM", torch.float32, G.rank, PRIME)
    w = dist.all_reduce(t, group=G.test, async_op=True)
    before = w.is_completed()
    if not isinstance(before, bool):
        return "is_completed() returned %r" % (before,)
    w.wait()
    if not w.is_completed():
        return "is_completed() is False after wait()"
    return diff(t, sum_of(torch.float32, PRIME))


def async_future():
    t = values("SUM", torch.int32, G.rank, 1000)
    w = dist.all_reduce(t, group=G.test, async_op=True)
    val = w.get_future().wait()
    if not isinstance(val, list) or len(val) != 1:
        return "future value %r, expected a list of one tensor" % (type(val),)
    return diff(val[0], sum_of(torch.int32, 1000)) or diff(t, sum_of(torch.int32, 1000))


def async_then():
    t = values("SUM", torch.int64, G.rank, 100)
    w = dist.all_reduce(t, group=G.test, async_op=True)
    fut = w.get_future().then(lambda f: f.value()[0] * 2)
    return diff(fut.wait(), sum_of(torch.int64, 100) * 2)


def async_overlap():
    """Several operations in flight at once while this rank computes; checked after the waits,
    which run in reverse order."""
    n = PRIME
    ar = values("SUM", torch.float32, G.rank, n)
    bc = values("move", torch.int32, G.rank, n, 0)
    ag_out = [sentinel(torch.float64, (n,)) for _ in range(G.size)]
    ag_in = values("move", torch.float64, G.rank, n, 1)
    a2a_in = torch.cat([values("move", torch.int64, G.rank, 50, j) for j in range(G.size)])
    a2a_out = sentinel(torch.int64, (50 * G.size,))
    rd = values("MAX", torch.int16, G.rank, n, 2)
    works = [dist.all_reduce(ar, group=G.test, async_op=True),
             dist.broadcast(bc, 0, group=G.test, async_op=True),
             dist.all_gather(ag_out, ag_in, group=G.test, async_op=True),
             dist.all_to_all_single(a2a_out, a2a_in, group=G.test, async_op=True),
             dist.reduce(rd, G.size - 1, R.MAX, group=G.test, async_op=True)]
    x = torch.randn(200, 200)
    for _ in range(20):
        x = torch.tanh(x @ x.t() / 200)
    for w in reversed(works):
        w.wait()
    bad = [diff(ar, sum_of(torch.float32, n)),
           diff(bc, values("move", torch.int32, 0, n, 0)),
           diffs(ag_out, [values("move", torch.float64, q, n, 1) for q in range(G.size)]),
           diff(a2a_out, torch.cat([values("move", torch.int64, q, 50, G.rank)
                                    for q in range(G.size)]))]
    if G.rank == G.size - 1:
        bad.append(diff(rd, reduce_ref("MAX", [values("MAX", torch.int16, q, n, 2)
                                               for q in range(G.size)], torch.int16)))
    bad = [b for b in bad if b]
    return "; ".join(bad) if bad else None


def async_overlap_tensor_forms():
    n = 1000
    ag_out = sentinel(torch.float32, (n * G.size,))
    ag_in = values("move", torch.float32, G.rank, n, 1)
    rs_out = sentinel(torch.float32, (n,))
    rs_in = torch.cat([values("SUM", torch.float32, G.rank, n, j) for j in range(G.size)])
    works = [dist.all_gather_into_tensor(ag_out, ag_in, group=G.test, async_op=True),
             dist.reduce_scatter_tensor(rs_out, rs_in, group=G.test, async_op=True)]
    if G.size > 1:
        nxt, prv = (G.rank + 1) % G.size, (G.rank - 1) % G.size
        p2p_out = sentinel(torch.int32, (n,))
        p2p_in = values("move", torch.int32, G.rank, n, 3)
        works += [dist.irecv(p2p_out, prv, group=G.test), dist.isend(p2p_in, nxt, group=G.test)]
    x = torch.randn(200, 200)
    for _ in range(20):
        x = torch.tanh(x @ x.t() / 200)
    for w in works:
        w.wait()
    bad = [diff(ag_out, torch.cat([values("move", torch.float32, q, n, 1)
                                   for q in range(G.size)])),
           diff(rs_out, reduce_scatter_want("SUM", torch.float32, n))]
    if G.size > 1:
        bad.append(diff(p2p_out, values("move", torch.int32, prv, n, 3)))
    bad = [b for b in bad if b]
    return "; ".join(bad) if bad else None


# ---- object collectives, coalesced, complex -----------------------------------------------------

def obj(r):
    return {"rank": r, "list": list(range(3 * r)), "text": "x" * (100 * r), "t": (r, None)}


def objects_all_gather():
    out = [None] * G.size
    dist.all_gather_object(out, obj(G.rank), group=G.test)
    want = [obj(q) for q in range(G.size)]
    return None if out == want else "got %r" % (out,)


def objects_gather():
    bad = []
    for root in range(G.size):
        out = [None] * G.size if G.rank == root else None
        dist.gather_object(obj(G.rank), out, dst=root, group=G.test)
        if G.rank == root and out != [obj(q) for q in range(G.size)]:
            bad.append("root %d: %r" % (root, out))
    return "; ".join(bad) or None


def objects_broadcast():
    bad = []
    for root in range(G.size):
        lst = [obj(G.rank), G.rank * 10]
        dist.broadcast_object_list(lst, src=root, group=G.test)
        if lst != [obj(root), root * 10]:
            bad.append("root %d: %r" % (root, lst))
    return "; ".join(bad) or None


def objects_scatter():
    out = [None]
    inp = [obj(q + 100) for q in range(G.size)] if G.rank == 0 else None
    dist.scatter_object_list(out, inp, src=0, group=G.test)
    return None if out == [obj(G.rank + 100)] else "got %r" % (out,)


def coalesced_all_reduce():
    v = Versus("all_reduce_coalesced SUM float32, counts 3, 0, 10007")
    counts = (3, 0, PRIME)

    def fn(g):
        ts = [values("SUM", torch.float32, G.rank, n, k) for k, n in enumerate(counts)]
        dist.all_reduce_coalesced(ts, group=g)
        return ts
    v.case("3,0,10007", fn, [sum_of(torch.float32, n, k) for k, n in enumerate(counts)],
           ("all_reduce_coalesced", "SUM", "float32"))
    return v.verdict()


def coalesced_all_gather():
    v = Versus("all_gather_coalesced int32, counts 3 and 5")
    counts = (3, 5)

    def fn(g):
        ins = [values("move", torch.int32, G.rank, n, k) for k, n in enumerate(counts)]
        outs = [[sentinel(torch.int32, (n,)) for n in counts] for _ in range(G.size)]
        dist.all_gather_coalesced(outs, ins, group=g)
        return [t for lst in outs for t in lst]
    v.case("3,5", fn, [values("move", torch.int32, q, n, k)
                       for q in range(G.size) for k, n in enumerate(counts)],
           ("all_gather_coalesced", "", "int32"))
    return v.verdict()


def complex_ops():
    v = Versus("complex64: all_reduce SUM, broadcast, all_gather")
    n = 33

    def cplx(r, salt):
        return torch.complex(values("SUM", torch.float32, r, n, salt),
                             values("SUM", torch.float32, r, n, salt + 1))

    def all_reduce(g):
        a = cplx(G.rank, 0)
        dist.all_reduce(a, group=g)
        return [a]

    def broadcast(g):
        b = cplx(G.rank, 2)
        dist.broadcast(b, 0, group=g)
        return [b]

    def all_gather(g):
        outs = [torch.zeros(n, dtype=torch.complex64) for _ in range(G.size)]
        dist.all_gather(outs, cplx(G.rank, 4), group=g)
        return outs
    v.case("all_reduce", all_reduce,
           [torch.complex(sum_of(torch.float32, n, 0), sum_of(torch.float32, n, 1))],
           ("all_reduce", "SUM", "complex64"))
    v.case("broadcast", broadcast, [cplx(0, 2)], ("broadcast", "", "complex64"))
    v.case("all_gather", all_gather, [cplx(q, 4) for q in range(G.size)],
           ("all_gather", "", "complex64"))
    return v.verdict()


# ---- errors -------------------------------------------------------------------------------------

def error_named(op, call):
    """call(group) must raise an exception whose message names `op` (underscores and case
    aside). The messages, and gloo's for the same call, are shown as notes."""
    norm = op.replace("_", "").lower()

    def outcome(g):
        try:
            call(g)
        except Exception as e:  # noqa: BLE001  RuntimeError, ValueError, IndexError...
            return e
        return None
    e = outcome(G.test)
    G.tap.note("%s on a bad %s: %s" % (dist.get_backend(), op, "%s: %s" % (
        type(e).__name__, one_line(e)) if e else "no error"))
    if not G.test_is_gloo:
        r = outcome(G.ref)
        G.tap.note("gloo on a bad %s: %s" % (op, "%s: %s" % (type(r).__name__, one_line(r))
                                             if r else "no error"))
    if e is None:
        return "no exception"
    if norm not in str(e).replace("_", "").lower():
        return "%s does not name %s: %s" % (type(e).__name__, op, one_line(e))
    return None


def errors(tap):
    """Invalid calls every rank makes alike, then two that only the root makes (its own checks
    must reject them before anything is sent: a backend that sent would hang here, last)."""
    p = G.size
    tap.check("send to rank %d of %d raises, naming send" % (p, p),
              error_named, "send", lambda g: dist.send(torch.zeros(2), p, group=g))
    tap.check("recv from rank %d of %d raises, naming recv" % (p + 3, p),
              error_named, "recv", lambda g: dist.recv(torch.zeros(2), p + 3, group=g))
    tap.check("broadcast from root %d of %d raises, naming broadcast" % (p, p),
              error_named, "broadcast", lambda g: dist.broadcast(torch.zeros(2), p, group=g))
    tap.check("all_gather into %d outputs for %d ranks raises, naming all_gather" % (p + 1, p),
              error_named, "all_gather", lambda g: dist.all_gather(
                  [torch.zeros(2) for _ in range(p + 1)], torch.zeros(2), group=g))
    tap.check("reduce_scatter of %d inputs for %d ranks raises, naming reduce_scatter"
              % (p + 1, p), error_named, "reduce_scatter", lambda g: dist.reduce_scatter(
                  torch.zeros(2), [torch.zeros(2) for _ in range(p + 1)], group=g))
    tap.check("all_to_all_single with splits not summing to the input raises, naming it",
              error_named, "all_to_all", lambda g: dist.all_to_all_single(
                  torch.zeros(4 * p), torch.zeros(4 * p), [4] * p, [5] * p, group=g))
    tap.check("all_reduce BAND of float32 raises, naming all_reduce",
              error_named, "all_reduce", lambda g: dist.all_reduce(
                  torch.ones(3), R.BAND, group=g))
    tap.check("scatter with %d tensors for %d ranks raises at the root, naming scatter"
              % (p + 1, p), lambda: (error_named("scatter", lambda g: dist.scatter(
                  torch.zeros(2), [torch.zeros(2)] * (p + 1), src=0, group=g))
                  if G.rank == 0 else None))
    tap.check("gather into %d outputs for %d ranks raises at the root, naming gather"
              % (p + 1, p), lambda: (error_named("gather", lambda g: dist.gather(
                  torch.zeros(2), [torch.zeros(2)] * (p + 1), dst=0, group=g))
                  if G.rank == 0 else None))
    tap.check("after the errors: all_reduce and barrier still work",
              lambda: all_reduce_op("SUM", R.SUM, torch.float32)[1] or
              dist.barrier(group=G.test))


# ---- main ---------------------------------------------------------------------------------------

def setup_checks(tap, args):
    def backend():
        got = dist.get_backend()
        return None if got == args.backend else "get_backend() is %r" % got

    def rank_size():
        want = harness.mpirun_rank_size()
        got = (dist.get_rank(), dist.get_world_size())
        return None if got == want else "rank, size %s; mpirun says %s" % (got, want)

    tap.check("default group on %s" % args.backend, backend)
    tap.check("rank and size are mpirun's", rank_size)
    mapped = harness.libmpi_mapped()
    tap.note("libmpi mapped: %s" % (", ".join(mapped) or "none"))
    if args.backend == "torusmpi":
        prefix = harness.torusmpi_prefix()

        def only_ours():
            if not mapped:
                return "no libmpi is mapped"
            theirs = [m for m in mapped if not prefix or not m.startswith(prefix + "/")]
            return ("not torusmpi's (prefix %s): %s" % (prefix, ", ".join(theirs))
                    if theirs else None)
        tap.check("only torusmpi's libmpi is mapped (under the package's prefix)", only_ours)


def summary():
    """What gloo refused or got wrong, one line per operation and message."""
    by = {}
    for (op, red, dtype), msg in REFUSED.items():
        reds, dtypes = by.setdefault((op, msg), (set(), set()))
        reds.update([red] if red else [])
        dtypes.update(dtype.split())
    order = {dname(d): k for k, d in enumerate(DTYPES)}
    for (op, msg), (reds, dtypes) in sorted(by.items()):
        what = " ".join(sorted(dtypes, key=lambda d: order.get(d, 99)))
        if reds:
            what = "%s; %s" % (" ".join(r for r, _ in OPS if r in reds), what)
        print("# gloo refuses %s (%s): %s" % (op, what, msg))
    for (op, red, dtype), msg in sorted(GLOO_WRONG.items()):
        print("# gloo gets wrong %s %s %s: %s" % (op, red, dtype, msg))


def after(section):
    """An all_reduce after a section: a message it left in flight would show up as a wrong
    result here."""
    name, err = all_reduce_op("SUM", R.SUM, torch.int64)
    return "%s: the next %s" % (section, name), err


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    harness.add_backend_args(parser)
    parser.add_argument("--only", default="", help="run the sections matching this regex")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")  # _all_gather_base and friends warn at every call

    G.ref = harness.init(args.backend, args.timeout)
    G.test = None  # the default group
    # Gloo under test, whatever its name (a dry run): the cases that crash gloo are not run.
    G.test_is_gloo = isinstance(dist.distributed_c10d._get_default_group(), dist.ProcessGroupGloo)
    G.rank, G.size = dist.get_rank(), dist.get_world_size()
    G.sizes = sorted({0, 1, max(G.size - 1, 0), G.size + 1, PRIME})
    G.sizes_text = ",".join(str(n) for n in G.sizes)
    tap = G.tap = harness.Tap(G.ref, "ops.py")
    t0 = time.monotonic()
    sections = [
        ("p2p", lambda: (
            [tap.check("send/recv ring " + dname(d), p2p_ring, d) for d in DTYPES],
            [tap.check("isend/irecv all pairs " + dname(d), p2p_pairs, d) for d in DTYPES],
            tap.check("recv from any source", p2p_any_source),
            tap.check("irecv from any source", p2p_irecv_any_source),
            tap.check("tags", p2p_tags),
            tap.check("batch_isend_irecv", p2p_batch),
            tap.check("send/recv non-contiguous", p2p_noncontig))),
        ("broadcast", lambda: (
            [tap.check("broadcast " + dname(d), broadcast_dtype, d) for d in DTYPES],
            tap.check("broadcast non-contiguous", broadcast_noncontig))),
        ("scatter_gather", lambda: (
            [tap.check("scatter " + dname(d), scatter_dtype, d) for d in DTYPES],
            [tap.check("gather " + dname(d), gather_dtype, d) for d in DTYPES])),
        ("all_reduce", lambda: (
            [tap.check("all_reduce %s %s" % (o, dname(d)), all_reduce_op, o, op, d)
             for o, op, d in op_pairs()],
            tap.check("all_reduce non-contiguous", all_reduce_noncontig))),
        ("reduce", lambda: [tap.check("reduce %s %s" % (o, dname(d)), reduce_op, o, op, d)
                            for o, op, d in op_pairs()]),
        ("all_gather", lambda: (
            [tap.check("all_gather " + dname(d), all_gather_dtype, d, "list") for d in DTYPES],
            [tap.check("all_gather_into_tensor " + dname(d), all_gather_dtype, d, "tensor")
             for d in DTYPES],
            [tap.check("_all_gather_base " + dname(d), all_gather_dtype, d, "base")
             for d in DTYPES],
            tap.check("all_gather non-contiguous", all_gather_noncontig))),
        ("reduce_scatter", lambda: (
            [tap.check("reduce_scatter %s %s" % (o, dname(d)), reduce_scatter_op, o, op, d,
                       "list") for o, op, d in op_pairs()],
            [tap.check("reduce_scatter_tensor %s %s" % (o, dname(d)), reduce_scatter_op, o, op,
                       d, "tensor") for o, op, d in op_pairs()],
            [tap.check("_reduce_scatter_base SUM " + dname(d), reduce_scatter_op, "SUM", R.SUM,
                       d, "base") for d in DTYPES])),
        ("all_to_all", lambda: [
            tap.check("%s %s %s" % (form, dname(d), even), all_to_all_dtype, d, form, even)
            for form in ("list", "single") for even in (True, False) for d in DTYPES]),
        ("barrier", lambda: (
            tap.check("barrier waits for the last rank to enter", barrier_waits),
            tap.check("barrier x20", barrier_repeat))),
        ("subgroups", lambda: [subgroup_checks(tap, m) for m in
                               ([[0, 2]] if G.size >= 3 else []) +
                               ([list(range(1, G.size))] if G.size >= 2 else [])]),
        ("async", lambda: (
            tap.check("async all_reduce: wait(), is_completed()", async_wait),
            tap.check("async all_reduce: get_future().wait() value", async_future),
            tap.check("async all_reduce: get_future().then()", async_then),
            tap.check("5 collectives in flight during computation, waited in reverse",
                      async_overlap),
            tap.check("all_gather_into_tensor, reduce_scatter_tensor, isend/irecv in flight "
                      "during computation", async_overlap_tensor_forms))),
        ("objects", lambda: (
            tap.check("all_gather_object", objects_all_gather),
            tap.check("gather_object, every root", objects_gather),
            tap.check("broadcast_object_list, every root", objects_broadcast),
            tap.check("scatter_object_list", objects_scatter))),
        ("coalesced", lambda: (
            tap.check("all_reduce_coalesced", coalesced_all_reduce),
            tap.check("all_gather_coalesced", coalesced_all_gather))),
        ("complex", lambda: tap.check("complex64", complex_ops)),
        ("errors", lambda: errors(tap)),
    ]
    setup_checks(tap, args)
    tap.flush()
    for name, run in sections:
        if args.only and not re.search(args.only, name):
            continue
        tap.progress("%s (%.1f s)" % (name, time.monotonic() - t0))
        run()
        tap.check("%s: the next all_reduce" % name, after, name)
        tap.flush()
    if G.rank == 0:
        summary()
    status = tap.done()
    if G.rank == 0:
        print("# ops.py: %.1f s" % (time.monotonic() - t0))
    dist.destroy_process_group()
    sys.exit(status)


if __name__ == "__main__":
    main()
