// The emulated machine: which instance model the job runs on (TORUSMPI_INSTANCE), where each rank
// sits on it (instance, chip, core; torus coordinates), which links join the chips and which
// links a message between two chips crosses. Nothing here moves data: pml/shm charges bytes to the
// links named here, the collective engine reads placements, the simulator routes its messages.
//
//   trn1.32xl: 16 chips, 4x4 2D torus        chip (x,y) has index x + 4y; its links go to
//   trn2.48xl: 16 chips, 4x4 2D torus        (x+-1, y) and (x, y+-1), with wrap-around
//   trn2u:     64 chips, 4x4x4 3D torus      (4 trn2 instances, same-coordinate chips in a ring)
//   torus:AxB[xC]:cores=N                    any small torus, for tests
//   host                                     no emulation: ranks are where the launcher put them
//
// Ranks are placed core first, then chip, then instance: rank r sits on core r % cores of chip
// (r / cores) % chips of instance r / (cores * chips). A host job that spans several nodes is one
// host instance per node instead, each rank where the launcher put it (Machine::placement): ranks
// of a node need not be consecutive (mpirun --map-by node) and nodes may hold different numbers.
#ifndef TORUSMPI_TOPO_MACHINE_H_
#define TORUSMPI_TOPO_MACHINE_H_

#include <string>
#include <vector>

#include "core/status.h"

namespace torusmpi::topo {

// One direction of one link: its latency (seconds per message, per hop) and bandwidth (bytes per
// second).
struct LinkFigures {
  double latency = 0;
  double bandwidth = 0;
};

struct Place {
  int instance = 0;
  int chip = 0;  // within its instance
  int core = 0;  // within its chip
};

struct Machine {
  std::string name;  // as given: "trn2.48xl", "trn2.48xl:lnc=1", "torus:2x2:cores=2", "host"
  int ndims = 0;     // torus dimensions; 0 for host (one chip, no links)
  int dims[3] = {1, 1, 1};
  int cores = 1;                // ranks per chip
  int instances = 1;            // instances of this model in the job (TORUSMPI_INSTANCES, issue 7),
                                // or the host's nodes
  LinkFigures neuronlink;       // one chip-to-chip link, one direction
  LinkFigures intra_chip;       // between two cores of one chip
  LinkFigures efa;              // one chip's network interface (between instances)
  double hbm_bandwidth = 0;     // bytes/s a chip's DMA engine copies within its HBM
  double reduce_bandwidth = 0;  // bytes/s of input a chip's reduction kernels consume
  // The runtime's own cost of one collective call, on top of its messages' (topo::call_time):
  // launching it and its CC cores' start handshake. Zero for the host and the test tori.
  struct CallFigures {
    double fixed = 0;         // seconds per call
    double per_chip = 0;      // seconds per chip of the call beyond the first
    double per_instance = 0;  // seconds per instance of the call beyond the first
  } call;
  int cc_cores = 0;    // a chip's collective-communication cores (listed, not timed)
  std::string source;  // where the figures come from (documentation, with its address)
  // Each job rank's place when the launcher's map decides (a host job across nodes: instance =
  // node, core = the rank's position among its node's ranks); empty: the arithmetic above.
  std::vector<Place> placement;

  bool emulated() const { return ndims > 0; }
  int chips() const { return dims[0] * dims[1] * dims[2]; }  // per instance
  int ranks() const { return chips() * cores * instances; }  // ranks the machine holds
};

// Parses a model name (case-sensitive, as above). False with *error naming the text and listing
// the models when it is not one.
bool parse_machine(const std::string& text, Machine* out, std::string* error);
// The named models (not torus:... and host), for listings.
const std::vector<std::string>& model_names();

// Where job rank `rank` sits: from m.placement when it is there, else by the arithmetic above.
Place place(const Machine& m, int rank);

// Torus coordinates of a chip and back (x fastest: chip = x + dims[0] * (y + dims[1] * z)).
void chip_coords(const Machine& m, int chip, int coords[3]);
int chip_at(const Machine& m, const int coords[3]);

// A directed link from a chip to a neighbour chip, by dimension and direction (+1: towards
// higher coordinates, with wrap-around; -1: lower). A dimension of size 2 has one link per
// direction between its two chips, named with dir +1 from the lower chip and from the higher; a
// dimension of size 1 has none.
struct Link {
  int from = 0;
  int to = 0;
  int dim = 0;
  int dir = 1;
};
// Dense ids 0..link_count()-1 for the links of one instance, for counters.
int link_count(const Machine& m);
int link_id(const Machine& m, const Link& l);
Link link_of(const Machine& m, int id);
// Dimension-order route between two chips of one instance: x first, then y, then z, each the
// shorter way round (a tie goes +1). Empty for the same chip.
void route(const Machine& m, int from_chip, int to_chip, std::vector<Link>* out);
int hops(const Machine& m, int from_chip, int to_chip);

// The job's machine: read from TORUSMPI_INSTANCE by load() at MPI_Init; host until then.
const Machine& machine();
// Reads TORUSMPI_INSTANCE and TORUSMPI_INSTANCES and checks that the job's ranks fit (an error
// names the model, its capacity and the job's size).
Status load(int job_size, std::string* error);
// The same, told the node of every job rank (node_of_rank[r], any labels from 0 up, as the
// launcher placed the ranks; empty when unknown): a host job (TORUSMPI_INSTANCE=host) on two or
// more nodes, TORUSMPI_INSTANCES left at 1, becomes one host instance per node, numbered in the
// order of their lowest rank (rank 0's node is instance 0), each rank placed as the launcher put
// it. Emulated models and TORUSMPI_INSTANCES above 1 keep their arithmetic placement.
Status load(int job_size, const std::vector<int>& node_of_rank, std::string* error);

}  // namespace torusmpi::topo

#endif  // TORUSMPI_TOPO_MACHINE_H_
