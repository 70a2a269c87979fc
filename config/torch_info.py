# configure's probe for the torch.distributed backend: prints PyTorch's version, Python's include
# directory, whether torch was built with the C++11 ABI (1/0), and the directory holding torch's
# C++ headers; fails when PyTorch or its headers are missing.
import os
import sysconfig

import torch
from torch.utils import cpp_extension

header = "torch/csrc/distributed/c10d/ProcessGroup.hpp"
dirs = [d for d in cpp_extension.include_paths() + ["/usr/include"]
        if os.path.exists(os.path.join(d, header))]
if not dirs:
    raise SystemExit("no " + header)
print(torch.__version__, sysconfig.get_paths()["include"], int(torch._C._GLIBCXX_USE_CXX11_ABI),
      dirs[0])
