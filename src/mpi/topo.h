// Process topologies (topo.cc): a communicator's Cartesian, graph or distributed-graph structure,
// and the neighbour lists the neighbourhood collectives (neighbor.cc) run over.
#ifndef TORUSMPI_MPI_TOPO_H_
#define TORUSMPI_MPI_TOPO_H_

#include <vector>

#include "mpi/ompi_abi.h"

namespace torusmpi::mpi {

struct Topology {
  int kind = MPI_UNDEFINED;        // MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH
  std::vector<int> dims, periods;  // Cartesian
  std::vector<int> index, edges;   // graph, as MPI_Graph_create takes them
  bool weighted = false;           // distributed graph
  std::vector<int> sweights, dweights;
  // Neighbours in MPI's order for the neighbourhood collectives (MPI_PROC_NULL where a Cartesian
  // dimension ends), for every kind.
  std::vector<int> in, out;
  // The order the engine sends in: out[send_order[j]] is sent j-th. It differs from 0..n-1 only
  // where a periodic Cartesian dimension has 1 or 2 ranks, so that the same rank is both
  // neighbours: then the block sent to the negative neighbour must pair with the receive from
  // the positive one, and messages between a pair match in the order they are posted.
  std::vector<int> send_order;
};

// The topology of comm, or nullptr when it has none.
const Topology* topology_of(MPI_Comm comm);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_TOPO_H_
