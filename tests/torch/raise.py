#!/usr/bin/python3
"""A training-like loop in which one rank raises a Python exception while the others wait in
all_reduce: the job must end, and its output must hold the exception's message.

    mpirun -np N /usr/bin/python3 raise.py [--backend torusmpi|gloo] [--rank 1] [--step 5]

With torusmpi, `import torusmpi.torch` installs a sys.excepthook that prints the traceback and
calls MPI_Abort, which ends every rank. With gloo nothing aborts the others: mpirun ends the job
when the raising rank exits non-zero, or else the others' all_reduce fails after --timeout.

What the caller checks: the job ends well within its time limit, exits non-zero, prints MESSAGE
(below, with the rank and step filled in), and no rank prints "raise.py: rank R finished".
"""

import argparse
import time

import torch
import torch.distributed as dist

import harness

MESSAGE = "raise.py: rank %d fails on purpose at step %d"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    harness.add_backend_args(parser)
    parser.add_argument("--rank", type=int, default=1, help="the rank that raises (default 1)")
    parser.add_argument("--step", type=int, default=5, help="at this step (default 5)")
    parser.set_defaults(timeout=20.0)
    args = parser.parse_args()

    harness.init(args.backend, args.timeout, reference=False)
    rank = dist.get_rank()
    weights = torch.ones(1000)
    for step in range(10):
        grad = torch.full((1000,), float(rank + step))
        if rank == args.rank and step == args.step:
            # Long enough for the others to be inside this step's all_reduce.
            time.sleep(0.5)
            raise RuntimeError(MESSAGE % (rank, step))
        dist.all_reduce(grad)
        weights -= 0.01 * grad
        print("raise.py: rank %d step %d" % (rank, step), flush=True)
    print("raise.py: rank %d finished" % rank, flush=True)


if __name__ == "__main__":
    main()
