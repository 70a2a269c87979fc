// The reduction kernels for AVX-512 F and BW (512-bit vectors), built with that instruction set
// (coll/Makefile.am) and called only when the processor has it (ops.cc's dispatch).
#define TORUSMPI_OPS_ISA avx512
#include "coll/ops/kernels.h"
