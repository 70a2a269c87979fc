"""torch.distributed on torusmpi.

``import torusmpi.torch`` registers the backend ``"torusmpi"``::

    import torusmpi.torch
    import torch.distributed as dist
    dist.init_process_group("torusmpi")   # under mpirun: rank and size come from MPI

It also does three things a job launched by mpirun needs:

- ``env://`` rendezvous (init_process_group's default) without MASTER_ADDR: the store is served
  over MPI by world rank 0, so no address or port is needed, for this backend and for gloo groups
  made beside it;
- an uncaught exception on any rank prints its traceback, then ends every rank (MPI_Abort), instead
  of leaving the others waiting in a collective;
- MPI is finalized at interpreter exit.
"""

import atexit
import os
import sys

import torch.distributed as dist
import torch.distributed.rendezvous  # noqa: F401 (the module, not its rendezvous function)

from . import _C

_rendezvous = sys.modules["torch.distributed.rendezvous"]

__all__ = ["world_store"]


def _seconds(timeout):
    return timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)


def _create_group(options, group_options=None):
    if group_options is not None:
        raise ValueError("torusmpi: process group options are not supported")
    return _C.ProcessGroup(
        list(options.global_ranks_in_group),
        options.group_rank,
        options.group_size,
        _seconds(options.timeout),
    )


def world_store():
    """The job's store, served over MPI (collective over all ranks on first call)."""
    return _C.world_store()


def _mpi_rendezvous(url, timeout=None, **kwargs):
    rank, size = _C.world()
    query = dict(p.split("=", 1) for p in url.partition("?")[2].split("&") if "=" in p)
    for name, value in (("rank", rank), ("world_size", size)):
        given = query.get(name, os.environ.get(name.upper()))
        if given is not None and int(given) not in (-1, value):
            raise ValueError(
                "torusmpi: %s=%s given, but MPI says %d (launch with mpirun, and leave rank and "
                "world_size unset)" % (name, given, value)
            )
    store = _C.world_store()
    if timeout is not None:
        store.set_timeout(timeout)
    yield (store, rank, size)
    raise RuntimeError("torusmpi: unable to perform rerendezvous using the MPI store")


_env_handler = _rendezvous._rendezvous_handlers.get("env")


def _env_or_mpi(url, timeout=None, **kwargs):
    # MASTER_ADDR set: torch's own env:// rendezvous, as without this module.
    if "MASTER_ADDR" in os.environ and _env_handler is not None:
        if timeout is None:
            return _env_handler(url, **kwargs)
        return _env_handler(url, timeout=timeout, **kwargs)
    return _mpi_rendezvous(url, timeout=timeout, **kwargs)


def _abort_on_uncaught(kind, value, traceback):
    _previous_hook(kind, value, traceback)
    sys.stderr.flush()
    if _C.mpi_running() and _C.world()[1] > 1:
        _C.abort(1, "uncaught %s: %s" % (kind.__name__, value))


if "TORUSMPI" not in dist.Backend._plugins:
    dist.Backend.register_backend("torusmpi", _create_group, extended_api=True)
    _rendezvous._rendezvous_handlers["env"] = _env_or_mpi
    _previous_hook = sys.excepthook
    sys.excepthook = _abort_on_uncaught
    atexit.register(_C.finalize)
