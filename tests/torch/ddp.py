#!/usr/bin/python3
"""DistributedDataParallel on the backend under test and on gloo, in one job.

    mpirun -np N /usr/bin/python3 ddp.py [--backend torusmpi|gloo] [--steps 20] [--rtol X]
                                         [--ref-hook reversed]

The same small network (Linear/ReLU) is trained twice, once through DDP on the default group (the
backend under test) and once through DDP on a gloo group over the same ranks: initial weights
drawn from a seed that differs by rank (so DDP's first broadcast must make them rank 0's), each
rank its own shard of synthetic data from fixed seeds, SGD with momentum, small buckets (several
all_reduces in flight each step). Rank 0 prints every step's local loss of both runs (repr, full
precision); the checks:

  - the per-step losses of the two runs are identical on every rank;
  - after the last step every rank holds bit-identical parameters, in each run (an all_reduce
    whose result differed by a rank's last bit would make the replicas drift apart);
  - the final parameters of the two runs are identical.

"Identical" is exact equality. DDP divides each gradient by the size, then sums with all_reduce;
with 2 ranks a float sum has one order (a + b = b + a), with more ranks the backends may add in
different orders and the last bits differ: then --rtol (default 0, exact) allows a relative
difference, and the check says which it used and the largest difference seen. --ref-hook
reversed trains the gloo run with a communication hook that sums the ranks' gradients in
reverse rank order, to show what a different order does to the losses.
"""

import argparse
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import harness


def make_model(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 8))


def shard(rank, step):
    """Rank `rank`'s batch at `step`, one of 4: inputs and a target the network can learn."""
    g = torch.Generator().manual_seed(100003 * (step % 4) + rank)
    x = torch.randn(64, 32, generator=g)
    w = torch.linspace(-1, 1, 32 * 8).view(32, 8)
    y = torch.tanh(x @ w) + 0.1 * torch.randn(64, 8, generator=g)
    return x, y


def reversed_sum_hook(state, bucket):
    """Gradients summed in reverse rank order, from an all_gather (what another backend's
    summation order might do)."""
    size = dist.get_world_size(state)
    t = bucket.buffer()
    parts = [torch.empty_like(t) for _ in range(size)]
    dist.all_gather(parts, t / size, group=state)
    total = parts[-1].clone()
    for p in reversed(parts[:-1]):
        total += p
    fut = torch.futures.Future()
    fut.set_result(total)
    return fut


def train(group, steps, hook=None):
    rank = dist.get_rank()
    model = make_model(1234 + rank)
    ddp = DDP(model, process_group=group, bucket_cap_mb=0.1)
    if hook:
        ddp.register_comm_hook(group, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for step in range(steps):
        x, y = shard(rank, step)
        opt.zero_grad()
        loss = F.mse_loss(ddp(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    params = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    buckets = ddp._get_ddp_logging_data().get("rebuilt_bucket_sizes", "?")
    return losses, params, buckets


def rel_diff(a, b, elementwise):
    """The largest difference relative to each element (losses), or to the largest element
    (parameters: some are near zero)."""
    a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    if not a.numel():
        return 0.0
    scale = b.abs() if elementwise else b.abs().max()
    return ((a - b).abs() / scale.clamp_min(1e-30)).max().item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    harness.add_backend_args(parser)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rtol", type=float, default=None,
                        help="relative difference allowed between the runs (default: 0, exact, "
                        "at 2 ranks or fewer; 1e-5 above)")
    parser.add_argument("--ref-hook", choices=["reversed"], default=None,
                        help="train the gloo run with a hook summing in reverse rank order")
    args = parser.parse_args()

    ref = harness.init(args.backend, args.timeout)
    tap = harness.Tap(ref, "ddp.py")
    size = dist.get_world_size()
    if args.rtol is None:
        args.rtol = 0.0 if size <= 2 else 1e-5
    # DDP's first bucket is 1 MiB whatever bucket_cap_mb says: smaller, so that this network's
    # 0.4 MB of gradients go in several all_reduces (3 after DDP rebuilds its buckets).
    dist._DEFAULT_FIRST_BUCKET_BYTES = 100 * 1024
    t0 = time.monotonic()
    test_losses, test_params, buckets = train(None, args.steps)
    t1 = time.monotonic()
    hook = reversed_sum_hook if args.ref_hook else None
    ref_losses, ref_params, _ = train(ref, args.steps, hook)
    t2 = time.monotonic()
    name = args.backend if args.backend != "gloo" else "gloo (default group)"
    for step, (a, b) in enumerate(zip(test_losses, ref_losses)):
        tap.note("step %2d  %s %r  gloo%s %r%s" % (step, name, a, " (reversed hook)"
                                                  if args.ref_hook else "", b,
                                                  "" if a == b else "  differ"))
    tap.note("%d parameters, buckets of %s bytes; %s %.2f s, gloo %.2f s" % (
        test_params.numel(), buckets, name, t1 - t0, t2 - t1))

    def same(a, b, what, elementwise):
        d = rel_diff(a, b, elementwise)
        if d == 0.0:
            return (what + " = identical (exact)", None)
        if d <= args.rtol:
            return (what + " = within rtol %g (largest relative difference %.3g)" % (args.rtol, d),
                    None)
        return (what + " = different",
                "largest relative difference %.3g (rtol %g)" % (d, args.rtol))

    tap.check("losses of %d steps, %s vs gloo" % (args.steps, name),
              same, test_losses, ref_losses, "losses of %d steps, %s vs gloo" % (args.steps, name),
              True)

    def replicas(params, label):
        every = [None] * size
        dist.all_gather_object(every, params.numpy().tobytes(), group=ref)
        odd = [r for r in range(size) if every[r] != every[0]]
        return ("parameters bit-identical on every rank after training (%s)" % label,
                "ranks %s differ from rank 0" % odd if odd else None)

    tap.check("replicas", replicas, test_params, name)
    tap.check("replicas", replicas, ref_params, "gloo")
    tap.check("final parameters", same, test_params, ref_params,
              "final parameters, %s vs gloo" % name, False)
    # The losses decrease: the run trained something.
    tap.check("training makes progress",
              lambda: None if sum(test_losses[-3:]) < sum(test_losses[:3]) else
              "losses %r ... %r" % (test_losses[:3], test_losses[-3:]))
    status = tap.done()
    dist.destroy_process_group()
    sys.exit(status)


if __name__ == "__main__":
    main()
