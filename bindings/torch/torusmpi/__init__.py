"""torusmpi's Python side. ``import torusmpi.torch`` adds the torch.distributed backend."""
