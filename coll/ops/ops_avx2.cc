// The reduction kernels for AVX2 (256-bit vectors), built with that instruction set
// (coll/Makefile.am) and called only when the processor has it (ops.cc's dispatch).
#define TORUSMPI_OPS_ISA avx2
#include "coll/ops/kernels.h"
