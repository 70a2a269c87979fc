// torusmpi_sim --plot: one simulated call drawn as a PNG with gnuplot (Debian's gnuplot-nox, its
// pngcairo terminal). The picture is the torus of each instance: every chip a circle at its grid
// position, with its number and the ranks it holds; every directed link an arrow from chip to
// chip, the two directions of a link side by side (each on the right of its way), coloured by
// the bytes it carried on one colour scale, grey when it carried none. A wrap-around link is a
// dashed stub that leaves its chip towards the grid's edge and a dashed stub that enters the chip
// it reaches from the opposite edge, both of its colour. A 3D torus is one panel per z plane;
// each chip's links to the next plane (+z) and the previous one (-z) are short diagonal stubs
// (up-right and down-left). Several instances are a row of panels each (instance i, z = k), and a
// ring round each chip, on the same scale, is the bytes its network interface received from other
// instances. The title says the call: collective, algorithm, size, ranks, machine, the predicted
// time and the busiest link.
#ifndef TORUSMPI_SIM_PLOT_H_
#define TORUSMPI_SIM_PLOT_H_

#include <cstddef>
#include <string>

#include "coll/sim/sim.h"
#include "topo/machine.h"

namespace torusmpi::sim_tool {

// The call a picture shows.
struct PlotCall {
  const topo::Machine* machine = nullptr;  // emulated, with its instances
  int ranks = 0;                           // placed core, then chip, then instance
  const char* collective = "";
  const char* algorithm = "";
  size_t bytes = 0;  // as the table gives the size
  const coll::sim::Result* result = nullptr;
};

// Empty when gnuplot can be run (it is on PATH); else the message saying what to install.
std::string plot_unavailable();

// Draws `call` into the PNG `file`. False, with *error saying why (gnuplot's own message when
// it failed), when the picture could not be made; no file of its own is left behind.
bool plot(const PlotCall& call, const std::string& file, std::string* error);

}  // namespace torusmpi::sim_tool

#endif  // TORUSMPI_SIM_PLOT_H_
