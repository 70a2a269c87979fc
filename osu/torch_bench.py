#!/usr/bin/python3
"""torch.distributed collectives timed like nccl-tests, on several backends in one job.

    mpirun -np N /usr/bin/python3 torch_bench.py [--backends torusmpi,gloo]
        [--ops all_reduce,all_gather,reduce_scatter,all_to_all] [--min 8] [--max 64M]
        [--iters N] [--warmup N] [--check] [--csv FILE] [--timeout S]

The default group runs on the first backend (torusmpi: `import torusmpi.torch`, which registers
it and serves the rendezvous over MPI; gloo first: a file store in the job's Open MPI session
directory), the others on dist.new_group(backend=...) over the same ranks. Sizes double from
--min to --max bytes of float32; for each size, each operation runs on each backend in turn, so
that the machine's noise falls on all of them alike.

What is timed, per size, operation and backend: a barrier on that backend's group, then --iters
blocking calls back to back; a rank's time is the mean per call and the row shows the largest
over ranks (the collective is as slow as its slowest rank). As in nccl-tests (PERFORMANCE.md),
the size is the whole buffer the collective covers and

    algbw = size / time        busbw = algbw * factor (GB/s = 1e9 B/s)

  operation       call                                    size                     factor
  all_reduce      all_reduce                              the vector               2(n-1)/n
  all_gather      all_gather_into_tensor                  the gathered output      (n-1)/n
  reduce_scatter  reduce_scatter_tensor                   a rank's whole input     (n-1)/n
  all_to_all      all_to_all_single (equal blocks)        a rank's send buffer     (n-1)/n

A size whose element count is not a multiple of n (for the three last) is rounded down to one.
A backend that refuses the single-tensor form (gloo has no all_gather_into_tensor and no
reduce_scatter at all) is timed with the list form where it has one (the row says "list"), else
shown as n/a. The last columns are each other backend's time over the first's (gloo/torusmpi > 1:
torusmpi is faster). --check runs each operation once more per size on integer-valued data and
compares the result with the one computed locally (ok/FAIL column). --csv writes one row per
operation, size and backend.
"""

import argparse
import csv
import datetime
import os
import sys
import time
import warnings

import torch
import torch.distributed as dist

# (name, busbw factor as a function of n, formula as text)
OPS = {
    "all_reduce": (lambda n: 2.0 * (n - 1) / n, "2(n-1)/n"),
    "all_gather": (lambda n: (n - 1) / n, "(n-1)/n"),
    "reduce_scatter": (lambda n: (n - 1) / n, "(n-1)/n"),
    "all_to_all": (lambda n: (n - 1) / n, "(n-1)/n"),
}


def parse_size(text):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = text.strip().lower().rstrip("b").rstrip("i")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def human(nbytes):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= div and nbytes % div == 0:
            return "%d %s" % (nbytes // div, unit)
    return "%d B" % nbytes


def init(backends, timeout_s):
    """The default group on backends[0]; a group per backend (None: the default group)."""
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    timeout = datetime.timedelta(seconds=timeout_s)
    first = backends[0]
    if "torusmpi" in backends:
        import torusmpi.torch  # noqa: F401  the backend, and env:// served over MPI
    if first == "torusmpi" or "MASTER_ADDR" in os.environ:
        dist.init_process_group(first, timeout=timeout)
    else:
        try:
            rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
            size = int(os.environ["OMPI_COMM_WORLD_SIZE"])
        except KeyError:
            sys.exit("run under Open MPI's mpirun, or set MASTER_ADDR, MASTER_PORT, RANK, "
                     "WORLD_SIZE")
        session = os.environ.get("OMPI_MCA_orte_jobfam_session_dir", "/tmp")
        jobid = os.environ.get("OMPI_MCA_ess_base_jobid", str(os.getppid()))
        dist.init_process_group(first, init_method="file://%s/torch-bench-%s" % (session, jobid),
                                rank=rank, world_size=size, timeout=timeout)
    return [None] + [dist.new_group(backend=b, timeout=timeout) for b in backends[1:]]


PERIOD = 13


def period_of(rank):
    """Rank `rank`'s --check input is this period repeated: i % 13 + 3 rank + 1 (integers: any
    sum of them is exact in float32)."""
    return torch.arange(PERIOD, dtype=torch.float32) + 3 * rank + 1


# The data are periodic, so are the results: they are written and compared in place, a period
# at a time (allocating and computing 64 MiB references takes seconds here).
def fill(t, period, offset=0):
    p = torch.roll(period, -(offset % PERIOD))
    full = t.numel() // PERIOD * PERIOD
    t[:full].view(-1, PERIOD).copy_(p)
    t[full:].copy_(p[:t.numel() - full])


def matches(t, period, offset=0):
    p = torch.roll(period, -(offset % PERIOD))
    full = t.numel() // PERIOD * PERIOD
    return (torch.equal(t[:full].view(-1, PERIOD), p.expand(full // PERIOD, PERIOD)) and
            torch.equal(t[full:], p[:t.numel() - full]))


class Op:
    """One operation at one size: its buffers, and the call on a group in a given form."""

    def __init__(self, name, nbytes, n, rank):
        self.name, self.n, self.rank = name, n, rank
        count = nbytes // 4
        if name != "all_reduce":
            count -= count % n
        self.count = count  # elements of the whole buffer (see the module's table)
        self.block = count // n if name != "all_reduce" else count
        self.nbytes = 4 * count
        c, b = count, self.block
        # (output or in-out, input): inputs of zeros while timing, nothing grows.
        self.bufs = {"all_reduce": lambda: (torch.zeros(c),),
                     "all_gather": lambda: (torch.empty(c), torch.zeros(b)),
                     "reduce_scatter": lambda: (torch.empty(b), torch.zeros(c)),
                     "all_to_all": lambda: (torch.empty(c), torch.zeros(c))}[name]()

    def run(self, group, form):
        out_or_inout, *rest = self.bufs
        if self.name == "all_reduce":
            dist.all_reduce(out_or_inout, group=group)
        elif self.name == "all_gather":
            if form == "tensor":
                dist.all_gather_into_tensor(out_or_inout, rest[0], group=group)
            else:
                dist.all_gather(list(out_or_inout.chunk(self.n)), rest[0], group=group)
        elif self.name == "reduce_scatter":
            if form == "tensor":
                dist.reduce_scatter_tensor(out_or_inout, rest[0], group=group)
            else:
                dist.reduce_scatter(out_or_inout, list(rest[0].chunk(self.n)), group=group)
        else:
            dist.all_to_all_single(out_or_inout, rest[0], group=group)

    def check(self, group, form):
        """Runs once on this rank's periodic data; True when the result is the expected one.
        The input is zeroed again after (the timing of the next backend starts from zeros)."""
        n, b, me = self.n, self.block, self.rank
        inp = self.bufs[-1]
        fill(inp, period_of(me))
        self.run(group, form)
        out = self.bufs[0]
        total = sum(period_of(r) for r in range(n))
        if self.name == "all_reduce":
            ok = matches(out, total)
        elif self.name == "all_gather":
            ok = all(matches(out[r * b:(r + 1) * b], period_of(r)) for r in range(n))
        elif self.name == "reduce_scatter":
            ok = matches(out, total, me * b)
        else:
            ok = all(matches(out[r * b:(r + 1) * b], period_of(r), me * b) for r in range(n))
        inp.zero_()
        return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="torusmpi,gloo",
                        help="comma-separated, the first one the default group's")
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--min", default="8", help="smallest size in bytes (suffixes K, M)")
    parser.add_argument("--max", default="64M", help="largest size in bytes (default 64M)")
    parser.add_argument("--iters", type=int, default=None,
                        help="timed calls per size (default 50 up to 1 MiB, 10 above)")
    parser.add_argument("--warmup", type=int, default=None,
                        help="untimed calls first (default 5 up to 1 MiB, 2 above)")
    parser.add_argument("--check", action="store_true", help="validate each result once")
    parser.add_argument("--csv", metavar="FILE", help="also write the results as CSV")
    parser.add_argument("--timeout", type=float, default=300.0, help="group timeout (s)")
    args = parser.parse_args()
    backends = [b for b in args.backends.split(",") if b]
    # Labels: a backend named twice (gloo,gloo: the noise between two identical groups) is
    # told apart by its position.
    labels = [b if backends.count(b) == 1 else "%s#%d" % (b, backends[:i].count(b) + 1)
              for i, b in enumerate(backends)]
    ops = [o for o in args.ops.split(",") if o]
    bad = [o for o in ops if o not in OPS]
    if bad or not backends:
        sys.exit("unknown operation %s (known: %s)" % (bad, ", ".join(OPS)) if bad else
                 "no backend")
    warnings.filterwarnings("ignore")

    groups = init(backends, args.timeout)
    rank, n = dist.get_rank(), dist.get_world_size()
    lo, hi = parse_size(args.min), parse_size(args.max)
    sizes = []
    s = max(lo, 4)
    while s <= hi:
        sizes.append(s)
        s *= 2
    # The form each backend takes for each operation, learnt at its first call.
    forms = {}
    results = []  # dicts, one per operation, size and backend
    t_start = time.monotonic()
    for nbytes in sizes:
        big = nbytes > (1 << 20)
        iters = args.iters if args.iters is not None else (10 if big else 50)
        warmup = args.warmup if args.warmup is not None else (2 if big else 5)
        for name in ops:
            op = Op(name, nbytes, n, rank)
            if op.count == 0:
                continue
            for b, g in zip(labels, groups):
                row = {"op": name, "bytes": op.nbytes, "count": op.count, "backend": b,
                       "ranks": n, "iters": iters, "form": "", "time_us": None,
                       "algbw": None, "busbw": None, "check": "", "note": ""}
                results.append(row)
                key = (b, name)
                if key not in forms:
                    forms[key] = learn_form(op, g)
                form = forms[key]
                if isinstance(form, Exception):
                    row["note"] = "refused: %s" % str(form).splitlines()[0][:80]
                    continue
                row["form"] = form if form == "list" else ""
                for _ in range(warmup):
                    op.run(g, form)
                dist.barrier(group=g)
                t0 = time.perf_counter()
                for _ in range(iters):
                    op.run(g, form)
                mine = (time.perf_counter() - t0) / iters
                worst = torch.tensor([mine], dtype=torch.float64)
                dist.all_reduce(worst, op=dist.ReduceOp.MAX, group=g)
                t = worst.item()
                row["time_us"] = t * 1e6
                row["algbw"] = op.nbytes / t / 1e9
                row["busbw"] = row["algbw"] * OPS[name][0](n)
                if args.check:
                    flag = torch.tensor([0 if op.check(g, form) else 1])
                    dist.all_reduce(flag, group=g)
                    row["check"] = "ok" if flag.item() == 0 else "FAIL"
            op.bufs = None
        if rank == 0:
            print("# %s done (%.1f s)" % (human(nbytes), time.monotonic() - t_start),
                  file=sys.stderr, flush=True)

    if rank == 0:
        report(results, labels, ops, n, args)
    dist.destroy_process_group()


def learn_form(op, g):
    """"tensor" if the backend takes the single-tensor form, else "list", else the exception."""
    if op.name in ("all_reduce", "all_to_all"):
        return "tensor"
    try:
        op.run(g, "tensor")
        return "tensor"
    except RuntimeError:
        pass
    try:
        op.run(g, "list")
        return "list"
    except RuntimeError as e:
        return e


def report(results, backends, ops, n, args):
    first = backends[0]
    by = {(r["op"], r["bytes"], r["backend"]): r for r in results}
    for r in results:
        base = by.get((r["op"], r["bytes"], first))
        r["ratio"] = (r["time_us"] / base["time_us"]
                      if r["time_us"] and base and base["time_us"] else None)
    print("# torch_bench: %d ranks, float32, backends %s%s" % (
        n, ", ".join(backends), ", results checked" if args.check else ""))
    print("# time: mean per call over the iterations, max over ranks; algbw, busbw in GB/s")
    for name in ops:
        rows = [r for r in results if r["op"] == name]
        if not rows:
            continue
        print("#")
        print("# %s (busbw = algbw * %s = %.3f)" % (name, OPS[name][1], OPS[name][0](n)))
        head = "# %12s %11s" % ("size(B)", "count")
        for b in backends:
            head += " | %12s %8s %8s%s" % (b[:12] + " us", "algbw", "busbw",
                                           "  chk" if args.check else "")
        for b in backends[1:]:
            head += " | %s" % ("%s/%s" % (b, first))[:18].rjust(13)
        print(head)
        for nbytes in sorted({r["bytes"] for r in rows}):
            line = "  %12d %11d" % (nbytes, by[(name, nbytes, first)]["count"])
            notes = []
            for b in backends:
                r = by[(name, nbytes, b)]
                if r["time_us"] is None:
                    line += " | %12s %8s %8s%s" % ("n/a", "", "", "     " if args.check else "")
                    notes.append("%s %s" % (b, r["note"]))
                    continue
                line += " | %12.1f %8.3f %8.3f%s" % (r["time_us"], r["algbw"], r["busbw"],
                                                     "  %3s" % r["check"] if args.check else "")
                if r["form"]:
                    notes.append("%s: list form" % b)
            for b in backends[1:]:
                ratio = by[(name, nbytes, b)]["ratio"]
                line += " | %13s" % ("%.2f" % ratio if ratio else "-")
            if notes and nbytes == min(r["bytes"] for r in rows):
                line += "   (%s)" % "; ".join(notes)
            print(line)
    sys.stdout.flush()
    if args.csv:
        fields = ["op", "bytes", "count", "ranks", "backend", "form", "iters", "time_us",
                  "algbw_gbs", "busbw_gbs", "time_ratio_vs_" + first, "check", "note"]
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(fields)
            for r in results:
                w.writerow([r["op"], r["bytes"], r["count"], r["ranks"], r["backend"],
                            r["form"] or ("tensor" if r["time_us"] is not None else ""),
                            r["iters"], fmt(r["time_us"], 3), fmt(r["algbw"], 6),
                            fmt(r["busbw"], 6), fmt(r["ratio"], 4), r["check"], r["note"]])


def fmt(x, digits):
    return "" if x is None else "%.*f" % (digits, x)


if __name__ == "__main__":
    main()
