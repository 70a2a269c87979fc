// torusmpi_sim: runs a collective's schedules for every rank in one process (coll/sim) and, per
// message size, says whether each algorithm's result is right, how long it would take under the
// cost model, its algbw and busbw, and which algorithm the selector would pick. On an emulated
// instance (--instance) the messages follow the torus links and the busiest link is shown; the
// selector's pick is made with the Model the library builds at run time for that placement
// (coll::topo_view and coll::topo_model, the code Team uses), so the table says what a job
// would run.
//
//   torusmpi_sim --collective allreduce --ranks 64 --bytes 8:1M
//   torusmpi_sim --collective alltoall --ranks 1000 --bytes 1K --algorithm bruck
//   torusmpi_sim --instance trn2.48xl --collective allreduce --bytes 8:1G
//   torusmpi_sim --instance trn2.48xl --instances 2 --collective allreduce --bytes 8:1G --nics
//   torusmpi_sim --instance trn2u --collective allreduce --bytes 64M --plot allreduce.png
//   torusmpi_sim --calibrate > coll/select/calibration.def
//   torusmpi_sim --published
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "coll/collective.h"
#include "coll/select/registry.h"
#include "coll/select/select.h"
#include "coll/sim/calibrate.h"
#include "coll/sim/calls.h"
#include "coll/sim/published.h"
#include "coll/sim/sim.h"
#include "core/params.h"
#include "sim/plot.h"
#include "topo/machine.h"

namespace torusmpi::sim_tool {
namespace {

using coll::Algorithm;
using coll::Coll;

constexpr char kUsage[] =
    "Usage: torusmpi_sim --collective C --ranks P [--bytes MIN[:MAX]] [--algorithm TOKEN|all]\n"
    "                    [--root R] [--in-place] [--non-commutative] [--elem N]\n"
    "                    [--oversubscribed] [--alpha S] [--beta S] [--gamma S]\n"
    "       torusmpi_sim --instance MODEL [--instances N] [--ranks P] --collective C ...\n"
    "       torusmpi_sim --calibrate\n"
    "       torusmpi_sim --published\n"
    "\n"
    "Simulates every rank's schedule of one collective call (no processes, any rank count),\n"
    "checks the result (every output holds exactly the contributions the collective defines),\n"
    "and predicts the time with the cost model's figures. Sizes go from MIN to MAX by doubling,\n"
    "in bytes (K, M, G suffixes), as the OSU benchmark of the collective counts them: the vector\n"
    "(allreduce, reduce, bcast, scan, exscan, reduce_scatter[_block]) or one rank's block\n"
    "(allgather[v], alltoall[v,w], gather[v], scatter[v]). The selector's pick is marked '*'.\n"
    "\n"
    "  --instance MODEL   an emulated machine (trn1.32xl, trn2.48xl, trn2.48xl:lnc=1, trn2u,\n"
    "                     trn2u:lnc=1, torus:AxB[xC]:cores=N): messages follow the torus\n"
    "                     links (dimension-order routes, contention on shared links); the\n"
    "                     busiest link (<chip>-<chip>) and its bytes are shown\n"
    "  --instances N      instances of the model (default 1); ranks fill instance 0, then 1...,\n"
    "                     and talk across instances through their chips' network interfaces\n"
    "                     (host: --ranks split evenly, one chip per instance)\n"
    "  --collective C     barrier, bcast, reduce, allreduce, allgather, allgatherv,\n"
    "                     reduce_scatter, reduce_scatter_block, alltoall, alltoallv, alltoallw,\n"
    "                     gather, gatherv, scatter, scatterv, scan, exscan\n"
    "  --ranks P          ranks in the communicator (with --instance: default the model's\n"
    "                     capacity; fewer are placed core, then chip)\n"
    "  --bytes MIN[:MAX]  sizes (default 8:1M)\n"
    "  --algorithm T      one algorithm, or all (default) of the collective\n"
    "  --root R           root of rooted collectives (default 0)\n"
    "  --in-place         MPI_IN_PLACE where the collective allows it\n"
    "  --non-commutative  a non-commutative op (reductions)\n"
    "  --elem N           bytes per element (default: 4 for the reductions; 1 for the\n"
    "                     collectives that only move data, which the library moves as bytes)\n"
    "  --oversubscribed   the figures of more ranks than cores on a node\n"
    "  --links            with --instance: after each row, every link's bytes as\n"
    "                     'link <chip>-<chip> bytes=<N>' lines, in the order and with the\n"
    "                     counts TORUSMPI_STATS=1 gives for a real run of the same call\n"
    "  --nics             with --instances: after each row, the bytes each chip received\n"
    "                     from other instances, one 'torusmpi-stats nic <instance>.<chip>\n"
    "                     bytes=<N>' line per chip of every instance, as TORUSMPI_STATS=1\n"
    "  --plot FILE.png    with --instance: draws one call with gnuplot (Debian package\n"
    "                     gnuplot-nox): the torus of each instance, every link coloured by\n"
    "                     its bytes, the ranks on each chip, and with --instances each chip's\n"
    "                     network bytes; the call is the table's last size (MAX, or the\n"
    "                     last doubling below it) with --algorithm's algorithm, or with\n"
    "                     all the selector's pick\n"
    "  --switch           an in-network aggregation switch joins the instances (torusmpi_switch,\n"
    "                     TORUSMPI_SWITCH): the ina algorithms run, and the selector weighs them\n"
    "  --alpha/--beta/--gamma S   override the flat model: seconds per message, per byte\n"
    "                     moved, per byte reduced (not with --instance)\n"
    "  --calibrate        alone: writes the cost model's calibration, the factors on the\n"
    "                     torus algorithms' per-byte terms, as coll/select/calibration.def\n"
    "                     holds it, from allreduce simulated on trn2.48xl and trn2u (each\n"
    "                     point's ratio on stderr)\n"
    "  --published        alone: every collective figure AWS publishes for Neuron (nccom-test)\n"
    "                     beside the simulator's prediction for the same call on trn1.32xl or\n"
    "                     trn2.48xl, and their ratio; exit status 1 when a checked point is\n"
    "                     outside 1/1.5..1.5\n"
    "Exit status: 0 when every simulated call was right, 1 when one was not, 2 on bad usage\n"
    "or when --plot could not draw its picture.\n";

struct Options {
  Coll coll = Coll::kAllreduce;
  bool have_coll = false;
  int ranks = 0;
  size_t min_bytes = 8, max_bytes = 1 << 20;
  std::string algorithm = "all";
  int root = 0;
  bool in_place = false;
  bool commutative = true;
  size_t elem = 0;  // 0: the default of the collective
  bool oversubscribed = false;
  bool links = false;
  bool nics = false;
  double alpha = -1, beta = -1, gamma = -1;
  std::string instance;  // empty: the flat model
  int instances = 1;
  bool switched = false;  // --switch
  std::string plot;       // --plot FILE.png
  topo::Machine machine;
};

bool parse_size(const char* text, size_t* out) {
  int64_t v = 0;
  if (!params::parse_size(text, &v)) return false;
  *out = static_cast<size_t>(v);
  return true;
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "torusmpi_sim: %s needs a value\n", a.c_str());
        return nullptr;
      }
      return argv[++i];
    };
    const char* v = nullptr;
    if (a == "--collective") {
      if ((v = value()) == nullptr) return false;
      if (!coll::coll_from_name(v, &o->coll)) {
        std::fprintf(stderr, "torusmpi_sim: no collective '%s'\n", v);
        return false;
      }
      o->have_coll = true;
    } else if (a == "--instance") {
      if ((v = value()) == nullptr) return false;
      o->instance = v;
      std::string error;
      if (!topo::parse_machine(o->instance, &o->machine, &error)) {
        std::fprintf(stderr, "torusmpi_sim: --instance %s\n", error.c_str());
        return false;
      }
    } else if (a == "--instances") {
      if ((v = value()) == nullptr) return false;
      o->instances = std::atoi(v);
    } else if (a == "--ranks") {
      if ((v = value()) == nullptr) return false;
      o->ranks = std::atoi(v);
    } else if (a == "--bytes") {
      if ((v = value()) == nullptr) return false;
      std::string t = v;
      size_t colon = t.find(':');
      if (!parse_size(t.substr(0, colon).c_str(), &o->min_bytes) ||
          !parse_size(colon == std::string::npos ? t.c_str() : t.substr(colon + 1).c_str(),
                      &o->max_bytes)) {
        std::fprintf(stderr, "torusmpi_sim: --bytes %s: expected MIN[:MAX]\n", v);
        return false;
      }
    } else if (a == "--algorithm") {
      if ((v = value()) == nullptr) return false;
      o->algorithm = v;
    } else if (a == "--root") {
      if ((v = value()) == nullptr) return false;
      o->root = std::atoi(v);
    } else if (a == "--elem") {
      if ((v = value()) == nullptr) return false;
      o->elem = static_cast<size_t>(std::atol(v));
      if (o->elem == 0) {
        std::fprintf(stderr, "torusmpi_sim: --elem must be 1 or more\n");
        return false;
      }
    } else if (a == "--alpha" || a == "--beta" || a == "--gamma") {
      if ((v = value()) == nullptr) return false;
      (a == "--alpha" ? o->alpha : a == "--beta" ? o->beta : o->gamma) = std::atof(v);
    } else if (a == "--in-place") {
      o->in_place = true;
    } else if (a == "--non-commutative") {
      o->commutative = false;
    } else if (a == "--links") {
      o->links = true;
    } else if (a == "--nics") {
      o->nics = true;
    } else if (a == "--plot") {
      if ((v = value()) == nullptr) return false;
      o->plot = v;
    } else if (a == "--switch") {
      o->switched = true;
    } else if (a == "--oversubscribed") {
      o->oversubscribed = true;
    } else if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else {
      std::fprintf(stderr, "torusmpi_sim: unknown option '%s'\n", a.c_str());
      return false;
    }
  }
  const bool emulated = o->machine.emulated();
  if (!o->plot.empty() && !emulated) {
    std::fprintf(stderr, "torusmpi_sim: --plot needs an emulated --instance (not host)\n");
    return false;
  }
  if (o->instance.empty() && o->instances != 1) {
    std::fprintf(stderr, "torusmpi_sim: --instances needs --instance (host for host instances)\n");
    return false;
  }
  if (!o->instance.empty()) {
    if (o->instances < 1 || (!emulated && o->instances > 1 && o->ranks < o->instances)) {
      std::fprintf(stderr,
                   "torusmpi_sim: --instances %d: expected 1 or more (host: at most "
                   "--ranks)\n",
                   o->instances);
      return false;
    }
    o->machine.instances = o->instances;
    // A host instance is one chip holding its share of the ranks (as topo::load places them).
    if (!emulated && o->ranks > 0) o->machine.cores = (o->ranks + o->instances - 1) / o->instances;
    if (emulated && (o->alpha >= 0 || o->beta >= 0 || o->gamma >= 0)) {
      std::fprintf(stderr,
                   "torusmpi_sim: --alpha, --beta and --gamma override the flat model, "
                   "not an instance's figures\n");
      return false;
    }
    if (emulated && o->ranks == 0) o->ranks = o->machine.ranks();
    if (emulated && o->ranks > o->machine.ranks()) {
      std::fprintf(stderr, "torusmpi_sim: --ranks %d: %d x %s hold %d ranks\n", o->ranks,
                   o->instances, o->machine.name.c_str(), o->machine.ranks());
      return false;
    }
  }
  if (!o->have_coll || o->ranks < 1) {
    std::fprintf(stderr, "torusmpi_sim: --collective and --ranks (1 or more) are needed\n");
    return false;
  }
  if (o->elem == 0) o->elem = coll::coll_reduces(o->coll) ? 4 : 1;
  if (o->root < 0 || o->root >= o->ranks || o->elem == 0 || o->min_bytes > o->max_bytes) {
    std::fprintf(stderr, "torusmpi_sim: --root must be a rank, --elem > 0, MIN <= MAX\n");
    return false;
  }
  return true;
}

// busbw / algbw (nccl-tests' factor), as the collective's descriptor gives it.
double bus_factor(const Options& o) { return coll::collective(o.coll).bus_factor(o.ranks); }

coll::sim::CallShape shape_for(const Options& o, size_t bytes) {
  coll::sim::CallShape shape;
  shape.coll = o.coll;
  shape.size = o.ranks;
  // Elements per rank's count for a size in bytes (see the usage text).
  shape.count = coll::collective(o.coll).count_for(bytes, o.elem, o.ranks);
  shape.elem = o.elem;
  shape.root = o.root;
  shape.in_place = o.in_place;
  shape.commutative = o.commutative;
  shape.in_network = o.switched;
  return shape;
}

// "<chip>-<chip>" of a link id of Result::link_bytes.
std::string link_text(const topo::Machine& m, int id) {
  if (id < 0) return "-";
  topo::Link l = topo::link_of(m, id % topo::link_count(m));
  return std::to_string(l.from) + "-" + std::to_string(l.to);
}

// Every chip's network bytes, in the order and format TORUSMPI_STATS=1 prints a real run's.
void print_nics(const Options& o, const coll::sim::Result& r) {
  const size_t chips = o.machine.emulated() ? o.machine.chips() : 1;
  for (size_t k = 0; k < chips * o.instances; ++k) {
    std::printf("torusmpi-stats nic %zu.%zu bytes=%llu\n", k / chips, k % chips,
                static_cast<unsigned long long>(k < r.nic_bytes.size() ? r.nic_bytes[k] : 0));
  }
}

// Simulates alg on the call of `bytes`: false, with a row saying why, when it cannot run it. An
// algorithm named by --algorithm runs as forcing it (TORUSMPI_<C>_ALGORITHM) runs it, so a real
// forced call's stats equal the simulator's; in the table of all, those the selector passes over
// say why.
bool simulate(const Options& o, const coll::sim::Call& call, const Algorithm& alg, size_t bytes,
              const coll::sim::Costs& costs, coll::sim::Result* r, double* algbw) {
  std::string why;
  const bool named = o.algorithm != "all";
  if (!(named ? coll::runs_forced(alg, call.args[0], &why)
              : coll::supports(alg, call.args[0], &why))) {
    std::printf("  %-10zu %-20s %6s  (%s)\n", bytes, alg.token, "-", why.c_str());
    return false;
  }
  *r = coll::sim::run(
      call.args, [&alg](coll::Builder& b, const coll::Args& a) { alg.build(b, a); }, costs);
  const double moved = coll::collective(o.coll).algbw_bytes(bytes, o.ranks);
  *algbw = r->time > 0 ? moved / r->time / 1e9 : 0;
  return true;
}

int run_on_machine(const Options& o, const std::vector<const Algorithm*>& algs) {
  const topo::Machine& mach = o.machine;
  std::printf(
      "# torusmpi_sim %s on %d x %s, %d ranks (%d chips of %d cores, %dx%dx%d torus)%s%s, "
      "%zu-byte elements\n",
      coll::coll_name(o.coll), o.instances, mach.name.c_str(), o.ranks, mach.chips(), mach.cores,
      mach.dims[0], mach.dims[1], mach.dims[2], o.in_place ? ", in place" : "",
      o.commutative ? "" : ", non-commutative op", o.elem);
  std::printf(
      "# links %.3g GB/s and %.3g us per hop, one direction; within a chip %.3g GB/s, "
      "%.3g us\n",
      mach.neuronlink.bandwidth * 1e-9, mach.neuronlink.latency * 1e6,
      mach.intra_chip.bandwidth * 1e-9, mach.intra_chip.latency * 1e6);
  if (o.instances > 1) {
    std::printf("# network %.3g GB/s per chip's interface, %.3g us per message\n",
                mach.efa.bandwidth * 1e-9, mach.efa.latency * 1e6);
  }
  {
    // What the library builds for a communicator placed so (Team::place); sizes do not change it.
    auto call = coll::sim::make_call([&] {
      coll::sim::CallShape shape = shape_for(o, o.min_bytes);
      shape.machine = &mach;
      return shape;
    }());
    coll::TorusModel torus;
    coll::Model model = coll::topo_model(mach, call->view, o.oversubscribed, &torus);
    std::printf("# selector's model: %s\n", coll::describe_model(model).c_str());
  }
  std::printf("# %-10s %-20s %6s %12s %12s %12s %10s %14s\n", "bytes", "algorithm", "check",
              "time (us)", "algbw (GB/s)", "busbw (GB/s)", "link", "link bytes");
  int wrong = 0;
  // --plot: the named algorithm's call, or the selector's pick's, at the last size.
  const Algorithm* plotted = nullptr;
  coll::sim::Result plotted_result;
  size_t plotted_bytes = 0;
  for (size_t bytes = o.min_bytes;; bytes = bytes == 0 ? 1 : bytes * 2) {
    plotted = nullptr;
    plotted_bytes = bytes;
    coll::sim::CallShape shape = shape_for(o, bytes);
    shape.machine = &mach;
    auto call = coll::sim::make_call(shape);
    coll::TorusModel torus;
    coll::Model model = coll::topo_model(mach, call->view, o.oversubscribed, &torus);
    coll::Choice pick = coll::select_algorithm(call->args[0], model);
    coll::sim::Costs costs = coll::sim::machine_costs(mach, call->view);
    for (const Algorithm* alg : algs) {
      coll::sim::Result r;
      double algbw = 0;
      if (!simulate(o, *call, *alg, bytes, costs, &r, &algbw)) continue;
      std::printf("%c %-10zu %-20s %6s %12.2f %12.3f %12.3f %10s %14llu\n",
                  pick.alg == alg ? '*' : ' ', bytes, alg->token, r.ok ? "ok" : "WRONG",
                  r.time * 1e6, algbw, algbw * bus_factor(o),
                  link_text(mach, r.busiest_link).c_str(),
                  static_cast<unsigned long long>(r.busiest_bytes));
      wrong += !r.ok;
      if (!r.ok) std::printf("    %s\n", r.error.c_str());
      // Every link's bytes, in link id order as TORUSMPI_STATS=1 prints a real run's.
      for (size_t id = 0; o.links && id < r.link_bytes.size(); ++id) {
        std::printf("    link %s bytes=%llu\n", link_text(mach, static_cast<int>(id)).c_str(),
                    static_cast<unsigned long long>(r.link_bytes[id]));
      }
      if (o.nics) print_nics(o, r);
      if (o.algorithm != "all" || pick.alg == alg) {
        plotted = alg;
        plotted_result = r;
      }
    }
    if (bytes >= o.max_bytes || bytes > o.max_bytes / 2) break;
  }
  if (!o.plot.empty()) {
    std::string error = "the algorithm to draw does not run the last size's call (see its row)";
    PlotCall call;
    call.machine = &mach;
    call.ranks = o.ranks;
    call.collective = coll::coll_name(o.coll);
    call.algorithm = plotted != nullptr ? plotted->token : "";
    call.bytes = plotted_bytes;
    call.result = &plotted_result;
    if (plotted == nullptr || !plot(call, o.plot, &error)) {
      std::fprintf(stderr, "torusmpi_sim: --plot %s: %s\n", o.plot.c_str(), error.c_str());
      return 2;
    }
  }
  return wrong == 0 ? 0 : 1;
}

// --calibrate: the calibration.def the simulator gives now (coll/sim/calibrate.h).
int calibrate() {
  const std::vector<coll::sim::Calibrated> values = coll::sim::calibrate();
  if (values.empty()) return 1;
  const std::vector<std::string> points = coll::sim::calibration_points();
  for (const coll::sim::Calibrated& c : values) {
    std::fprintf(stderr, "# %s (allreduce %s):", c.name, c.token);
    for (size_t i = 0; i < c.points.size() && i < points.size(); ++i) {
      std::fprintf(stderr, " %s %.4f;", points[i].c_str(), c.points[i]);
    }
    std::fprintf(stderr, " mean %.4f\n", c.value);
  }
  std::fputs(coll::sim::calibration_def(values).c_str(), stdout);
  return 0;
}

int run(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--calibrate") == 0) return calibrate();
  if (argc == 2 && std::strcmp(argv[1], "--published") == 0) {
    int failed = 0;
    std::fputs(coll::sim::published_report(coll::sim::compare_published(), &failed).c_str(),
               stdout);
    return failed == 0 ? 0 : 1;
  }
  Options o;
  if (!parse(argc, argv, &o)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  // --in-place applies where MPI has it: bcast, barrier and the neighbourhood collectives go
  // without, and their report does not claim it.
  if (!coll::collective(o.coll).in_place()) o.in_place = false;
  std::vector<const Algorithm*> algs;
  for (const Algorithm& a : coll::algorithms()) {
    if (a.coll == o.coll && (o.algorithm == "all" || o.algorithm == a.token)) algs.push_back(&a);
  }
  if (algs.empty()) {
    std::fprintf(stderr, "torusmpi_sim: %s has no algorithm '%s'\n", coll::coll_name(o.coll),
                 o.algorithm.c_str());
    return 2;
  }
  if (!o.plot.empty() && !plot_unavailable().empty()) {
    std::fprintf(stderr, "torusmpi_sim: %s\n", plot_unavailable().c_str());
    return 2;
  }
  if (o.machine.emulated()) return run_on_machine(o, algs);
  const bool spans = o.instances > 1;
  if (spans && (o.alpha >= 0 || o.beta >= 0 || o.gamma >= 0)) {
    std::fprintf(stderr,
                 "torusmpi_sim: --alpha, --beta and --gamma override the flat model of "
                 "one host\n");
    return 2;
  }
  coll::Model m = coll::host_model(o.oversubscribed);
  if (o.alpha >= 0) m.alpha = o.alpha;
  if (o.beta >= 0) m.beta = o.beta;
  if (o.gamma >= 0) m.gamma = o.gamma;
  coll::sim::Costs costs;
  costs.alpha = m.alpha;
  costs.beta = m.beta;
  costs.gamma = m.gamma;
  costs.copy = m.copy;

  std::printf(
      "# torusmpi_sim %s, %d ranks%s%s, %zu-byte elements; model: alpha %.3g us, "
      "%.3g GB/s moved, %.3g GB/s reduced\n",
      coll::coll_name(o.coll), o.ranks, o.in_place ? ", in place" : "",
      o.commutative ? "" : ", non-commutative op", o.elem, m.alpha * 1e6, 1e-9 / m.beta,
      1e-9 / m.gamma);
  std::printf("# %-10s %-20s %6s %12s %12s %12s %10s %7s\n", "bytes", "algorithm", "check",
              "time (us)", "algbw (GB/s)", "busbw (GB/s)", "messages", "steps");
  int wrong = 0;
  for (size_t bytes = o.min_bytes;; bytes = bytes == 0 ? 1 : bytes * 2) {
    // Host instances: placed (which instance each rank is on) and chosen with the model Team
    // builds for them; the simulated time stays the flat model's.
    coll::sim::CallShape shape = shape_for(o, bytes);
    if (spans) shape.machine = &o.machine;
    auto call = coll::sim::make_call(shape);
    coll::TorusModel torus;
    const coll::Model placed =
        spans ? coll::topo_model(o.machine, call->view, o.oversubscribed, &torus) : m;
    if (spans) costs.view = &call->view;
    coll::Choice pick = coll::select_algorithm(call->args[0], placed);
    for (const Algorithm* alg : algs) {
      coll::sim::Result r;
      double algbw = 0;
      if (!simulate(o, *call, *alg, bytes, costs, &r, &algbw)) continue;
      std::printf("%c %-10zu %-20s %6s %12.2f %12.3f %12.3f %10llu %7zu\n",
                  pick.alg == alg ? '*' : ' ', bytes, alg->token, r.ok ? "ok" : "WRONG",
                  r.time * 1e6, algbw, algbw * bus_factor(o),
                  static_cast<unsigned long long>(r.messages), r.max_steps);
      wrong += !r.ok;
      if (!r.ok) std::printf("    %s\n", r.error.c_str());
      if (o.nics && spans) print_nics(o, r);
    }
    if (bytes >= o.max_bytes || bytes > o.max_bytes / 2) break;
  }
  return wrong == 0 ? 0 : 1;
}

}  // namespace
}  // namespace torusmpi::sim_tool

int main(int argc, char** argv) { return torusmpi::sim_tool::run(argc, argv); }
