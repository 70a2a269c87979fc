// Every algorithm: its builder, a pure function of the call (Args) that emits the calling rank's
// schedule, and its registry entry (token, builder, restrictions, cost, doc: registry.h). One
// file each, coll/<collective>/<collective>_<token>.cc, whose opening comment gives what it does,
// its cost, its restrictions and a picture of its steps; the entry beside it holds that cost as
// the selector computes it. The registry (coll/select/registry.cc) lists the entries.
#ifndef TORUSMPI_COLL_ALGORITHMS_H_
#define TORUSMPI_COLL_ALGORITHMS_H_

#include "coll/coll.h"
#include "coll/sched/schedule.h"
#include "coll/select/registry.h"

namespace torusmpi::coll {

void allreduce_recursive_doubling(Builder& b, const Args& a);
void allreduce_ring(Builder& b, const Args& a);
void allreduce_rabenseifner(Builder& b, const Args& a);
void allreduce_reduce_bcast(Builder& b, const Args& a);
void allreduce_torus_ring(Builder& b, const Args& a);
void allreduce_dual_ring(Builder& b, const Args& a);
void allreduce_rdh(Builder& b, const Args& a);
void allreduce_direct(Builder& b, const Args& a);
void allreduce_chip_ring(Builder& b, const Args& a);
void allreduce_instance_ring(Builder& b, const Args& a);
void allreduce_instance_rdh(Builder& b, const Args& a);
void allreduce_instance_direct(Builder& b, const Args& a);
void allreduce_ina(Builder& b, const Args& a);

void allgather_ring(Builder& b, const Args& a);
void allgather_recursive_doubling(Builder& b, const Args& a);
void allgather_bruck(Builder& b, const Args& a);
void allgather_torus_ring(Builder& b, const Args& a);
void allgather_dual_ring(Builder& b, const Args& a);
void allgather_rdh(Builder& b, const Args& a);
void allgather_direct(Builder& b, const Args& a);
void allgather_chip_ring(Builder& b, const Args& a);
void allgather_instance_ring(Builder& b, const Args& a);
void allgather_instance_rdh(Builder& b, const Args& a);
void allgather_instance_direct(Builder& b, const Args& a);
void allgather_ina(Builder& b, const Args& a);
void allgatherv_ring(Builder& b, const Args& a);

void reduce_scatter_ring(Builder& b, const Args& a);
void reduce_scatter_recursive_halving(Builder& b, const Args& a);
void reduce_scatter_pairwise(Builder& b, const Args& a);
void reduce_scatter_torus_ring(Builder& b, const Args& a);
void reduce_scatter_dual_ring(Builder& b, const Args& a);
void reduce_scatter_rdh(Builder& b, const Args& a);
void reduce_scatter_direct(Builder& b, const Args& a);
void reduce_scatter_chip_ring(Builder& b, const Args& a);
void reduce_scatter_instance_ring(Builder& b, const Args& a);
void reduce_scatter_instance_rdh(Builder& b, const Args& a);
void reduce_scatter_instance_direct(Builder& b, const Args& a);
void reduce_scatter_ina(Builder& b, const Args& a);
void reduce_scatter_block_ring(Builder& b, const Args& a);
void reduce_scatter_block_recursive_halving(Builder& b, const Args& a);
void reduce_scatter_block_pairwise(Builder& b, const Args& a);
void reduce_scatter_block_torus_ring(Builder& b, const Args& a);
void reduce_scatter_block_dual_ring(Builder& b, const Args& a);
void reduce_scatter_block_rdh(Builder& b, const Args& a);
void reduce_scatter_block_direct(Builder& b, const Args& a);
void reduce_scatter_block_chip_ring(Builder& b, const Args& a);
void reduce_scatter_block_instance_ring(Builder& b, const Args& a);
void reduce_scatter_block_instance_rdh(Builder& b, const Args& a);
void reduce_scatter_block_instance_direct(Builder& b, const Args& a);
void reduce_scatter_block_ina(Builder& b, const Args& a);

void alltoall_pairwise(Builder& b, const Args& a);
void alltoall_bruck(Builder& b, const Args& a);
void alltoall_linear(Builder& b, const Args& a);
void alltoall_direct(Builder& b, const Args& a);
void alltoall_torus_ring(Builder& b, const Args& a);
void alltoallv_pairwise(Builder& b, const Args& a);
void alltoallw_pairwise(Builder& b, const Args& a);

void bcast_binomial(Builder& b, const Args& a);
void bcast_scatter_allgather(Builder& b, const Args& a);
void bcast_torus_ring(Builder& b, const Args& a);
void bcast_dual_ring(Builder& b, const Args& a);
void reduce_binomial(Builder& b, const Args& a);
void reduce_rabenseifner(Builder& b, const Args& a);

void barrier_dissemination(Builder& b, const Args& a);
void barrier_recursive_doubling(Builder& b, const Args& a);
void barrier_ina(Builder& b, const Args& a);
void barrier_linear(Builder& b, const Args& a);

void gather_binomial(Builder& b, const Args& a);
void gather_linear(Builder& b, const Args& a);
void gatherv_linear(Builder& b, const Args& a);
void scatter_binomial(Builder& b, const Args& a);
void scatter_linear(Builder& b, const Args& a);
void scatterv_linear(Builder& b, const Args& a);

void scan_recursive_doubling(Builder& b, const Args& a);
void exscan_recursive_doubling(Builder& b, const Args& a);

void neighbor_allgather_linear(Builder& b, const Args& a);
void neighbor_allgatherv_linear(Builder& b, const Args& a);
void neighbor_alltoall_linear(Builder& b, const Args& a);
void neighbor_alltoallv_linear(Builder& b, const Args& a);
void neighbor_alltoallw_linear(Builder& b, const Args& a);

// The registry entries, by collective in Coll order, as the registry lists them.
extern const Algorithm kBarrierDissemination, kBarrierRecursiveDoubling, kBarrierIna,
    kBarrierLinear;
extern const Algorithm kBcastBinomial, kBcastScatterAllgather, kBcastTorusRing, kBcastDualRing;
extern const Algorithm kReduceBinomial, kReduceRabenseifner;
extern const Algorithm kAllreduceRecursiveDoubling, kAllreduceRing, kAllreduceRabenseifner,
    kAllreduceReduceBcast, kAllreduceTorusRing, kAllreduceDualRing, kAllreduceRdh, kAllreduceDirect,
    kAllreduceChipRing, kAllreduceInstanceRing, kAllreduceInstanceRdh, kAllreduceInstanceDirect,
    kAllreduceIna;
extern const Algorithm kAllgatherRing, kAllgatherRecursiveDoubling, kAllgatherBruck,
    kAllgatherTorusRing, kAllgatherDualRing, kAllgatherRdh, kAllgatherDirect, kAllgatherChipRing,
    kAllgatherInstanceRing, kAllgatherInstanceRdh, kAllgatherInstanceDirect, kAllgatherIna;
extern const Algorithm kAllgathervRing;
extern const Algorithm kReduceScatterPairwise, kReduceScatterRing, kReduceScatterRecursiveHalving,
    kReduceScatterTorusRing, kReduceScatterDualRing, kReduceScatterRdh, kReduceScatterDirect,
    kReduceScatterChipRing, kReduceScatterInstanceRing, kReduceScatterInstanceRdh,
    kReduceScatterInstanceDirect, kReduceScatterIna;
extern const Algorithm kReduceScatterBlockPairwise, kReduceScatterBlockRing,
    kReduceScatterBlockRecursiveHalving, kReduceScatterBlockTorusRing, kReduceScatterBlockDualRing,
    kReduceScatterBlockRdh, kReduceScatterBlockDirect, kReduceScatterBlockChipRing,
    kReduceScatterBlockInstanceRing, kReduceScatterBlockInstanceRdh,
    kReduceScatterBlockInstanceDirect, kReduceScatterBlockIna;
extern const Algorithm kAlltoallPairwise, kAlltoallBruck, kAlltoallLinear, kAlltoallDirect,
    kAlltoallTorusRing;
extern const Algorithm kAlltoallvPairwise;
extern const Algorithm kAlltoallwPairwise;
extern const Algorithm kGatherBinomial, kGatherLinear;
extern const Algorithm kGathervLinear;
extern const Algorithm kScatterBinomial, kScatterLinear;
extern const Algorithm kScattervLinear;
extern const Algorithm kScanRecursiveDoubling;
extern const Algorithm kExscanRecursiveDoubling;
extern const Algorithm kNeighborAllgatherLinear;
extern const Algorithm kNeighborAllgathervLinear;
extern const Algorithm kNeighborAlltoallLinear;
extern const Algorithm kNeighborAlltoallvLinear;
extern const Algorithm kNeighborAlltoallwLinear;

}  // namespace torusmpi::coll

#endif  // TORUSMPI_COLL_ALGORITHMS_H_
