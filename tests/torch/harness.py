"""What tests/torch/*.py share: starting the process groups under mpirun, and TAP output.

The backend under test is `torusmpi` (the default; `import torusmpi.torch` registers it and serves
env:// rendezvous over MPI) or, to dry-run the scripts without it, `gloo` (rendezvous through a
file store in the Open MPI job's session directory, or env:// when MASTER_ADDR is set). The
reference is always a gloo group over the same ranks, made with dist.new_group(backend="gloo").

Checks: every rank runs the same checks in the same order; Tap.flush() gathers every rank's
verdicts over the gloo group and rank 0 prints one line per check, "not ok" when it failed on any
rank. A check that failed on some rank names the rank and what it saw.
"""

import datetime
import os
import sys
import traceback

import torch.distributed as dist


def add_backend_args(parser):
    parser.add_argument("--backend", default=os.environ.get("TORUSMPI_TORCH_BACKEND", "torusmpi"),
                        help="backend under test: torusmpi (default) or gloo (dry run)")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="process group timeout in seconds (default 60)")


def mpirun_rank_size():
    """This process's rank and the job's size, from Open MPI's launcher."""
    try:
        return int(os.environ["OMPI_COMM_WORLD_RANK"]), int(os.environ["OMPI_COMM_WORLD_SIZE"])
    except KeyError:
        sys.exit("run under Open MPI's mpirun (OMPI_COMM_WORLD_RANK is not set)")


def init(backend, timeout_s, reference=True):
    """Initializes the default group on `backend` and returns the gloo reference group (None
    without `reference`)."""
    # Loopback only, whatever the host name resolves to.
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    timeout = datetime.timedelta(seconds=timeout_s)
    if backend == "torusmpi":
        import torusmpi.torch  # noqa: F401  registers the backend and the env:// store
        dist.init_process_group("torusmpi", timeout=timeout)
    else:
        rank, size = mpirun_rank_size()
        if "MASTER_ADDR" in os.environ:
            method = "env://"
        else:
            # The session directory is the job's own: no port to collide with another job's.
            # The store deletes its file when the last rank closes it, mpirun the directory.
            session = os.environ.get("OMPI_MCA_orte_jobfam_session_dir", "/tmp")
            jobid = os.environ.get("OMPI_MCA_ess_base_jobid", str(os.getppid()))
            method = "file://%s/torch-store-%s" % (session, jobid)
        dist.init_process_group(backend, init_method=method, rank=rank, world_size=size,
                                timeout=timeout)
    return dist.new_group(backend="gloo", timeout=timeout) if reference else None


def libmpi_mapped():
    """The libmpi files mapped into this process (resolved paths)."""
    paths = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)  # address perms offset dev inode [path]
            if len(fields) == 6 and "/libmpi.so" in fields[5]:
                paths.add(fields[5].strip())
    return sorted(paths)


def torusmpi_prefix():
    """The prefix torusmpi.torch was imported from (<prefix>/lib/python3/dist-packages/...)."""
    for name in ("torusmpi.torch", "torusmpi"):
        path = getattr(sys.modules.get(name), "__file__", None)
        if path:
            path = os.path.realpath(path)
            return path[:path.find("/lib/python3")] if "/lib/python3" in path else None
    return None


class Skip(Exception):
    """Raised by a check that does not apply at this size: "ok N - name # SKIP reason"."""


class Tap:
    def __init__(self, ref_group, script):
        self.ref = ref_group
        self.script = script
        self.rank = dist.get_rank()
        self.size = dist.get_world_size()
        self.pending = []  # (name, status, detail); status: "ok", "fail", "skip"
        self.count = 0
        self.failed = 0
        self.notes = []  # "#" lines rank 0 prints at the next flush

    def check(self, name, fn, *args):
        """Runs fn(*args), which returns None (pass), a failure text, or a (name, text) pair
        whose name replaces `name` (a check that learns its name while running)."""
        try:
            res = fn(*args)
            if isinstance(res, tuple):
                name, res = res
            status, detail = ("ok", "") if res is None else ("fail", str(res))
        except Skip as e:
            status, detail = "skip", str(e)
        except Exception as e:  # noqa: BLE001  any exception fails the check, not the script
            tb = traceback.extract_tb(e.__traceback__)
            where = "%s:%d" % (os.path.basename(tb[-1].filename), tb[-1].lineno) if tb else "?"
            status, detail = "fail", "%s: %s (at %s)" % (type(e).__name__, one_line(e), where)
        self.pending.append((name, status, detail))

    def note(self, text):
        """A diagnostic line, printed by rank 0 (rank 0's text only)."""
        self.notes.append(text)

    def flush(self):
        """Gathers the pending verdicts of every rank; rank 0 prints them. Every rank counts the
        same failures, so that all agree on the exit status."""
        every = [None] * self.size
        dist.all_gather_object(every, (self.pending, self.notes), group=self.ref)
        self.pending, self.notes = [], []
        lines = ["# " + text for text in every[0][1]]
        lengths = [len(v[0]) for v in every]
        if len(set(lengths)) != 1:
            self.count += 1
            self.failed += 1
            lines.append("not ok %d - every rank ran the same checks: counts %s"
                         % (self.count, lengths))
        for i in range(lengths[0]):
            self.count += 1
            verdicts = [v[0][i] if i < len(v[0]) else ("?", "fail", "no verdict") for v in every]
            ran = [v for v in verdicts if v[1] != "skip"]
            # A check that learns its name as it runs ("... = gloo") is named after the first
            # rank that ran it; the part before " = " must be the same everywhere.
            name = (ran or verdicts)[0][0]
            fails = ["rank %d: %s" % (r, v[2]) for r, v in enumerate(verdicts) if v[1] == "fail"]
            fails += ["rank %d ran '%s'" % (r, v[0]) for r, v in enumerate(verdicts)
                      if v[1] != "skip" and stem(v[0]) != stem(name)]
            if fails:
                self.failed += 1
                detail = "; ".join(fails[:3]) + ("; ..." if len(fails) > 3 else "")
                lines.append("not ok %d - %s: %s" % (self.count, name, detail[:600]))
            elif not ran:
                why = [v[2] for v in verdicts if v[2] != "not a member"] or [verdicts[0][2]]
                lines.append("ok %d - %s # SKIP %s" % (self.count, name, why[0]))
            else:
                lines.append("ok %d - %s" % (self.count, name))
        if self.rank == 0 and lines:
            print("\n".join(lines), flush=True)

    def progress(self, text):
        """Where the script is, on stderr (what a timed-out job's output ends with)."""
        if self.rank == 0:
            print("# %s: %s" % (self.script, text), file=sys.stderr, flush=True)

    def done(self):
        """Prints the summary and returns the exit status (the same on every rank)."""
        self.flush()
        if self.rank == 0:
            print("# %s: %d checks, %d failed, %d ranks, backend %s"
                  % (self.script, self.count, self.failed, self.size, dist.get_backend()))
            sys.stdout.flush()
        return 1 if self.failed else 0


def stem(name):
    """A check's name without what it learnt while running."""
    return name.split(" = ")[0]


def one_line(e):
    """An exception's message, first line, shortened."""
    text = str(e).strip().splitlines()
    return (text[0] if text else type(e).__name__)[:300]
