// torusmpi_info: what this torusmpi build is, what it was built against, what the host looks like
// to it, every run-time parameter with its current value, every collective algorithm, and the
// emulated machine of an instance model (--topology: its figures, chip grid, ranks and links).
//
// It reads the build configuration and the parameter table directly and never calls MPI_Init, so
// it runs anywhere, launcher or not, even when a job would fail to start. It is also the one
// producer of the man page's ENVIRONMENT section (--man-params), so the page cannot drift from
// src/core/params.def.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "coll/select/registry.h"
#include "config.h"
#include "core/flight.h"
#include "core/log.h"
#include "core/params.h"
#include "pml/net.h"
#include "topo/host.h"
#include "topo/machine.h"

// Only the version macros of Open MPI's mpi.h are used: the ABI torusmpi implements is the one of
// the header it was compiled against. Nothing here calls MPI, and libmpi is not linked.
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

namespace torusmpi::info {
namespace {

// Installation directories, passed by the Makefile (they are only final at make time).
#ifndef TORUSMPI_PREFIX
#error "TORUSMPI_PREFIX must be defined by the Makefile"
#endif

constexpr char kUsage[] =
    "Usage: torusmpi_info [--params | --algorithms | --topology [MODEL]] [--parsable]\n"
    "       torusmpi_info --hang PID\n"
    "       torusmpi_info --man-params | --help | --version\n"
    "\n"
    "Shows this torusmpi build (version, ABI, build configuration, data transports), the host as\n"
    "hwloc sees it, and every TORUSMPI_* run-time parameter with its type, default, meaning and,\n"
    "when set in the environment, its current value. It does not start MPI.\n"
    "\n"
    "  --params      only the run-time parameters\n"
    "  --algorithms  only the collective algorithms: token, cost, restrictions (the tokens are\n"
    "                what TORUSMPI_<COLL>_ALGORITHM and rule files take)\n"
    "  --topology [MODEL]\n"
    "                the emulated machine of an instance model (default: TORUSMPI_INSTANCE,\n"
    "                else host): its link figures and their sources, the chip grid with the\n"
    "                ranks each chip holds, and its links\n"
    "  --hang PID    what the ranks of PID's job on this node are doing now, from their flight\n"
    "                recorders: each rank's MPI call, its step, whom it waits for and since when,\n"
    "                then its last operations (PID: any rank's process; the job goes on)\n"
    "  --parsable    stable key:value lines for scripts (e.g. param:NAME:type:int:default:1000)\n"
    "  --man-params  the parameters as the troff ENVIRONMENT section of torusmpi(7)\n"
    "  --help        this text\n"
    "  --version     the torusmpi version\n";

struct Options {
  bool params_only = false;
  bool algorithms_only = false;
  bool topology = false;
  std::string model;  // --topology's MODEL; empty: TORUSMPI_INSTANCE
  bool parsable = false;
  bool man_params = false;
  long hang_pid = 0;  // --hang
};

// Environment values are arbitrary bytes; one value must stay one output line.
std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  return out;
}

// Word-wraps `text` to lines of at most `width` columns, each starting with `indent` spaces.
std::string wrap(const std::string& text, size_t indent, size_t width) {
  std::string out;
  std::string line(indent, ' ');
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (line.size() > indent && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line.assign(indent, ' ');
    }
    if (line.size() > indent) line += ' ';
    line += word;
  }
  if (line.size() > indent) out += line + "\n";
  return out;
}

// Escapes text for troff: backslashes print as themselves, '-' is a real minus/hyphen (so that
// options and variable names can be searched and copied), quotes can sit inside macro arguments,
// and a leading '.' or '\'' is not taken as a request.
std::string troff(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c == '"') {
      out += "\\(dq";  // a plain quote would end a macro argument
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

// The parameter problems params::load() found in the environment, and TORUSMPI_DEBUG's unknown
// subsystems (MPI_Init warns about all of these; showing them here lets a user check a setup
// before launching a job).
struct EnvReport {
  std::vector<std::string> errors;    // "TORUSMPI_X=v: not a valid int (default 1000 kept)"
  std::vector<std::string> warnings;  // unknown TORUSMPI_* variables, unknown debug subsystems
  std::vector<std::string> unknown_variables;
};

EnvReport read_environment() {
  EnvReport report;
  std::vector<std::string> warnings;
  params::load(&report.errors, &warnings);
  for (const std::string& w : warnings) {
    report.warnings.push_back(w);
    report.unknown_variables.push_back(w.substr(0, w.find(' ')));
  }
  std::string unknown;
  log::parse_mask(params::debug(), &unknown);
  if (!unknown.empty()) {
    report.warnings.push_back("TORUSMPI_DEBUG names unknown subsystem(s) " + unknown);
  }
  return report;
}

// Whether the variable's value was rejected (load() names the variable first in its error line).
bool rejected(const EnvReport& report, const char* env) {
  std::string head = std::string(env) + "=";
  for (const std::string& e : report.errors) {
    if (e.compare(0, head.size(), head) == 0) return true;
  }
  return false;
}

std::string default_text(const params::Info& p) {
  return p.default_text[0] != '\0' ? p.default_text : "empty";
}

#ifdef TORUSMPI_HAVE_OFI
constexpr bool kHaveOfi = true;
#else
constexpr bool kHaveOfi = false;
#endif
#ifdef TORUSMPI_HAVE_UCX
constexpr bool kHaveUcx = true;
#else
constexpr bool kHaveUcx = false;
#endif

std::string ompi_abi() {
  return std::to_string(OMPI_MAJOR_VERSION) + "." + std::to_string(OMPI_MINOR_VERSION);
}
std::string ompi_header_version() {
  return ompi_abi() + "." + std::to_string(OMPI_RELEASE_VERSION);
}
std::string mpi_standard() {
  return std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION);
}
std::string mpi_h() { return std::string(TORUSMPI_OMPI_INCDIR) + "/mpi.h"; }

// TORUSMPI_NET's default, as the parameter table has it.
std::string net_default() {
  for (const params::Info& p : params::all()) {
    if (std::strcmp(p.env, "TORUSMPI_NET") == 0) return p.default_text;
  }
  return "";
}

// What moves data, and to whom: the transports this build has (pml::net::transport_names(), what
// MPI_Get_library_version names too), each with the peers it serves. Each peer gets one transport
// (pml::set_transport): self for the rank itself, shm for the other ranks of its node and emulated
// instance, the network transport TORUSMPI_NET names for every other rank (pml/net.h).
struct TransportUse {
  std::string name;
  std::string peers;  // whom it reaches, and when it is the one chosen
};

std::vector<TransportUse> transports() {
  const std::string net = net_default();
  std::vector<TransportUse> out;
  const std::string names = pml::net::transport_names();
  for (size_t pos = 0; pos <= names.size();) {
    size_t end = names.find(',', pos);
    if (end == std::string::npos) end = names.size();
    const std::string name = names.substr(pos, end - pos);
    pos = end + 1;
    if (name.empty()) continue;
    std::string peers;
    if (name == "shm") {
      peers = "the other ranks of this node and emulated instance, through shared memory";
    } else if (name == "self") {
      peers = "the rank itself";
    } else {
      const char* library = name == "ofi" ? "libfabric" : name == "ucx" ? "UCX" : name.c_str();
      peers = "ranks on other nodes and other emulated instances, through " + std::string(library) +
              ", when TORUSMPI_NET=" + name + (name == net ? " (the default)" : "");
    }
    out.push_back({name, peers});
  }
  return out;
}

// What the list above leaves unsaid: no network transport at all, or not the default one.
std::string network_note(const std::vector<TransportUse>& list) {
  const std::string net = net_default();
  bool have_net = false;
  bool have_default = false;
  for (const TransportUse& t : list) {
    if (t.name == "shm" || t.name == "self") continue;
    have_net = true;
    have_default = have_default || t.name == net;
  }
  if (!have_net) {
    return "no network transport: a job with ranks on other nodes or emulated instances fails in "
           "MPI_Init";
  }
  if (!have_default) {
    return "TORUSMPI_NET's default, " + net + ", is not compiled in: a job that needs the " +
           "network must set TORUSMPI_NET";
  }
  return "";
}

// Whether configure found a network library, and when a job loads it.
std::string detected(bool found, const char* what, const char* transport) {
  return found ? std::string(what) + " found by configure: loaded only by a job that needs the " +
                     "network, with TORUSMPI_NET=" + transport
               : std::string(what) + " not found by configure";
}

std::string host_line(const topo::HostInfo& h) {
  std::string line =
      std::to_string(h.cores) + (h.cores == 1 ? " core, " : " cores, ") + std::to_string(h.pus) +
      (h.pus == 1 ? " hardware thread, " : " hardware threads, ") + std::to_string(h.numa_nodes) +
      (h.numa_nodes == 1 ? " NUMA node" : " NUMA nodes");
  if (!h.cpu_model.empty()) line += "; " + h.cpu_model;
  return line;
}

// "  name            : value", the value wrapped under itself at `width` columns.
void print_field(const char* name, const std::string& value, size_t width = 100) {
  char head[32];
  std::snprintf(head, sizeof(head), "  %-16s: ", name);
  size_t indent = std::strlen(head);
  std::string text = wrap(value, indent, width);
  // wrap() indents its first line too; the head takes those columns.
  std::printf("%s%s", head, text.size() > indent ? text.c_str() + indent : "\n");
}

void print_build() {
  std::printf("torusmpi %s\n", PACKAGE_VERSION);
  print_field("ABI", "Open MPI " + ompi_abi() + " (libmpi.so.40, MPI " + mpi_standard() +
                         "), from " + mpi_h() + " of Open MPI " + ompi_header_version());
  print_field("prefix", TORUSMPI_PREFIX);
  print_field("library", std::string(TORUSMPI_LIBDIR) + "/libmpi.so.40");
  print_field("wrappers", std::string(TORUSMPI_BINDIR) + "/mpicc, " + TORUSMPI_BINDIR +
                              "/mpicxx, " + TORUSMPI_BINDIR + "/mpifort (mpif90, mpif77)");
  print_field("C++ compiler", TORUSMPI_CXX);
  print_field("configure args", TORUSMPI_CONFIGURE_ARGS[0] ? TORUSMPI_CONFIGURE_ARGS : "(none)");
  const std::vector<TransportUse> list = transports();
  std::string names;
  for (const TransportUse& t : list) names += (names.empty() ? "" : ", ") + t.name;
  print_field("data transports", names + " (each peer is reached by one of them)");
  for (const TransportUse& t : list) print_field(("  " + t.name).c_str(), t.peers);
  const std::string note = network_note(list);
  if (!note.empty()) print_field("  network", note);
  print_field("libfabric (OFI)", detected(kHaveOfi, "libfabric", "ofi"));
  print_field("UCX", detected(kHaveUcx, "UCX", "ucx"));
  print_field("host (hwloc)", host_line(topo::host_info()));
}

void print_params(const EnvReport& report) {
  std::printf(
      "Run-time parameters (environment variables, read by MPI_Init; a bad value keeps the "
      "default):\n");
  for (const params::Info& p : params::all()) {
    std::printf("  %s (%s, default: %s)\n", p.env, params::type_name(p.type),
                default_text(p).c_str());
    std::fputs(wrap(p.doc, 6, 98).c_str(), stdout);
    if (const char* value = std::getenv(p.env)) {
      std::printf("      set: \"%s\"%s\n", one_line(value).c_str(),
                  rejected(report, p.env) ? " (not valid: the default is used)" : "");
    }
  }
  if (!report.errors.empty() || !report.warnings.empty()) {
    std::printf("Problems MPI_Init would report:\n");
    for (const std::string& e : report.errors) std::printf("  error: %s\n", one_line(e).c_str());
    for (const std::string& w : report.warnings) {
      std::printf("  warning: %s\n", one_line(w).c_str());
    }
  }
}

void print_build_parsable() {
  const topo::HostInfo& h = topo::host_info();
  std::printf("version:%s\n", PACKAGE_VERSION);
  std::printf("abi:ompi:%s\n", ompi_abi().c_str());
  std::printf("abi:soname:libmpi.so.40\n");
  std::printf("abi:mpi_standard:%s\n", mpi_standard().c_str());
  std::printf("abi:mpi_h:%s\n", mpi_h().c_str());
  std::printf("abi:mpi_h_ompi_version:%s\n", ompi_header_version().c_str());
  std::printf("path:prefix:%s\n", TORUSMPI_PREFIX);
  std::printf("path:bindir:%s\n", TORUSMPI_BINDIR);
  std::printf("path:libdir:%s\n", TORUSMPI_LIBDIR);
  std::printf("path:includedir:%s\n", TORUSMPI_INCLUDEDIR);
  std::printf("path:mandir:%s\n", TORUSMPI_MANDIR);
  std::printf("build:cxx:%s\n", TORUSMPI_CXX);
  std::printf("build:configure_args:%s\n", TORUSMPI_CONFIGURE_ARGS);
  // Comma-separated names of the transports that move data.
  std::printf("build:transports:%s\n", pml::net::transport_names());
  std::printf("build:libfabric_found:%s\n", kHaveOfi ? "yes" : "no");
  std::printf("build:ucx_found:%s\n", kHaveUcx ? "yes" : "no");
  std::printf("host:cores:%d\n", h.cores);
  std::printf("host:pus:%d\n", h.pus);
  std::printf("host:node_pus:%d\n", h.node_pus);
  std::printf("host:numa_nodes:%d\n", h.numa_nodes);
  std::printf("host:cpu_model:%s\n", h.cpu_model.c_str());
}

void print_params_parsable(const EnvReport& report) {
  for (const params::Info& p : params::all()) {
    std::printf("param:%s:type:%s:default:%s\n", p.env, params::type_name(p.type), p.default_text);
    std::printf("param:%s:doc:%s\n", p.env, p.doc);
    if (const char* value = std::getenv(p.env)) {
      std::printf("param:%s:value:%s\n", p.env, one_line(value).c_str());
      std::printf("param:%s:valid:%s\n", p.env, rejected(report, p.env) ? "no" : "yes");
    }
  }
  for (const std::string& name : report.unknown_variables) {
    std::printf("unknown_variable:%s\n", name.c_str());
  }
  for (const std::string& e : report.errors) std::printf("error:%s\n", one_line(e).c_str());
  for (const std::string& w : report.warnings) std::printf("warning:%s\n", one_line(w).c_str());
}

std::string restrictions_text(unsigned r) {
  std::string t;
  if (r & coll::kNeedsCommutative) t += "commutative ops only";
  if (r & coll::kNeedsInstances) {
    t += std::string(t.empty() ? "" : ", ") +
         "2 or more instances with equal ranks each (forced elsewhere: one snake ring)";
  }
  return t.empty() ? "none" : t;
}

// Every algorithm of the registry, by collective; the first of each is its fallback.
void print_algorithms() {
  std::printf(
      "Collective algorithms (TORUSMPI_<COLL>_ALGORITHM=<token> forces one; the first of each "
      "collective is its fallback):\n");
  int last = -1;
  for (const coll::Algorithm& a : coll::algorithms()) {
    if (static_cast<int>(a.coll) != last) {
      last = static_cast<int>(a.coll);
      std::printf("  %s\n", coll::coll_name(a.coll));
    }
    std::printf("    %-20s %s\n", a.token, a.doc);
    std::printf("    %-20s %s; restrictions: %s\n", "", a.cost_text,
                restrictions_text(a.restrictions).c_str());
  }
}

void print_algorithms_parsable() {
  for (const coll::Algorithm& a : coll::algorithms()) {
    std::printf("algorithm:%s:%s:restrictions:%s:fallback:%s\n", coll::coll_name(a.coll), a.token,
                restrictions_text(a.restrictions).c_str(),
                &coll::fallback(a.coll) == &a ? "yes" : "no");
    std::printf("algorithm:%s:%s:cost:%s\n", coll::coll_name(a.coll), a.token, a.cost_text);
  }
}

// The ENVIRONMENT section of torusmpi(7). Only the table goes in, never the environment of
// whoever builds the page.
void print_man_params() {
  // troff wants every sentence on a line of its own.
  std::printf(
      ".\\\" Generated by torusmpi_info --man-params from src/core/params.def: edit the table, "
      "not this text.\n"
      ".SH ENVIRONMENT\n"
      "torusmpi reads its run\\-time parameters from these environment variables when\n"
      ".B MPI_Init\n"
      "runs.\n"
      "A value that does not parse is reported by rank 0, and the default is kept; a\n"
      ".B TORUSMPI_\n"
      "variable that names no parameter is reported as a likely misspelling.\n"
      ".BR torusmpi_info (1)\n"
      "shows the current values.\n"
      "Types: \\fBbool\\fP (1/0, yes/no, true/false, on/off), \\fBint\\fP (decimal, 0 or more),\n"
      "\\fBsize\\fP (bytes, 0 or more, with an optional K, M or G suffix: 64K, 4MiB),\n"
      "\\fBstring\\fP.\n");
  for (const params::Info& p : params::all()) {
    std::printf(".TP\n.BR %s \" (%s, default: %s)\"\n", troff(p.env).c_str(),
                params::type_name(p.type), troff(default_text(p)).c_str());
    std::string doc = troff(p.doc);
    if (!doc.empty() && doc.back() != '.') doc += '.';
    std::printf("%s\n", doc.c_str());
  }
}

// --topology: the emulated machine of one instance model, drawn to be read at 80 columns (a 4x4
// torus with 8 ranks per chip fits): the figures the link emulation and the cost model use, one
// grid of chips per z plane, each chip with its number, coordinates and ranks, the x links drawn
// between neighbours and the y links below them; what a grid cannot draw (wrap-around links, the
// z rings) is said in words under it.

std::string gbs(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g GB/s", bytes_per_s / 1e9);
  return buf;
}

std::string usec(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g us", seconds * 1e6);
  return buf;
}

// The job ranks a chip holds when every core of the model has a rank (placement: core, then chip,
// then instance), as "8-15" or "3"; further instances add one range each.
std::string chip_ranks(const topo::Machine& m, int chip) {
  std::string text;
  int per_instance = m.cores * m.chips();
  for (int i = 0; i < m.instances; ++i) {
    int first = i * per_instance + chip * m.cores;
    if (!text.empty()) text += ",";
    text += std::to_string(first);
    if (m.cores > 1) text += "-" + std::to_string(first + m.cores - 1);
  }
  return text;
}

std::string coords_text(const topo::Machine& m, int chip) {
  int c[3];
  topo::chip_coords(m, chip, c);
  std::string t = "(" + std::to_string(c[0]) + "," + std::to_string(c[1]);
  if (m.ndims == 3) t += "," + std::to_string(c[2]);
  return t + ")";
}

std::string dims_text(const topo::Machine& m) {
  std::string t;
  for (int d = 0; d < m.ndims; ++d) t += (d ? "x" : "") + std::to_string(m.dims[d]);
  return t;
}

// Why a dimension has the links it has, in words: the grid draws neighbours; this says the rest.
std::string dim_links_text(const topo::Machine& m, int d) {
  static const char* const kAxis[] = {"x", "y", "z"};
  const char* a = kAxis[d];
  int n = m.dims[d];
  if (n == 1) return std::string(a) + ": size 1, no links";
  std::string ends = std::string(a) + "=" + std::to_string(n - 1) + " and " + a + "=0";
  if (n == 2) {
    return std::string(a) + ": size 2, one link each way between " + a + "=0 and " + a + "=1";
  }
  std::string t = std::string(a) + ": a ring of " + std::to_string(n) +
                  "; wrap-around links join " + ends + (d == 2 ? "" : " (not drawn)");
  if (d == 2) {
    t = std::string(
            "z: each chip is linked to the chips with the same x,y in the planes above and "
            "below, a ring of ") +
        std::to_string(n) + " with wrap-around links joining " + ends;
  }
  return t;
}

// One line of the drawing, without the blanks that padding leaves at its end.
void put_line(std::string line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::printf("%s\n", line.c_str());
}

void print_grid(const topo::Machine& m) {
  int cell = 0;  // widest content of a box
  for (int chip = 0; chip < m.chips(); ++chip) {
    cell = std::max<int>(cell, 5 + static_cast<int>(std::to_string(chip).size()));
    cell = std::max<int>(cell, static_cast<int>(coords_text(m, chip).size()));
    cell = std::max<int>(cell, 2 + static_cast<int>(chip_ranks(m, chip).size()));
  }
  const int box = cell + 4;            // "| " content " |"
  const std::string gap_link = "---";  // an x link between neighbours
  const std::string gap_none = "   ";
  const std::string border = "+" + std::string(box - 2, '-') + "+";
  auto boxed = [&](const std::string& text) {
    return "| " + text + std::string(cell - text.size(), ' ') + " |";
  };
  const int nx = m.dims[0], ny = m.dims[1], nz = m.dims[2];
  const bool x_links = nx >= 2, y_links = ny >= 2;
  for (int z = 0; z < nz; ++z) {
    if (m.ndims == 3) std::printf("\n  plane z=%d\n", z);
    std::string labels = "      ";
    for (int x = 0; x < nx; ++x) {
      std::string label = "x=" + std::to_string(x);
      int pad = box - static_cast<int>(label.size());
      labels += std::string(pad / 2, ' ') + label + std::string(pad - pad / 2, ' ');
      if (x + 1 < nx) labels += gap_none;
    }
    std::printf("\n");
    put_line(labels);
    for (int y = 0; y < ny; ++y) {
      std::string lines[5];
      for (int x = 0; x < nx; ++x) {
        int c[3] = {x, y, z};
        int chip = topo::chip_at(m, c);
        bool last = x + 1 == nx;
        const std::string& gap_mid = x_links && !last ? gap_link : gap_none;
        const std::string sep = last ? "" : gap_none;
        lines[0] += border + sep;
        lines[1] += boxed("chip " + std::to_string(chip)) + (last ? "" : gap_mid);
        lines[2] += boxed(coords_text(m, chip)) + sep;
        lines[3] += boxed("r " + chip_ranks(m, chip)) + sep;
        lines[4] += border + sep;
      }
      for (int i = 0; i < 5; ++i) {
        std::string head = i == 1 ? "y=" + std::to_string(y) : "";
        put_line("  " + head + std::string(4 - std::min<size_t>(4, head.size()), ' ') + lines[i]);
      }
      if (y_links && y + 1 < ny) {
        std::string link;
        for (int x = 0; x < nx; ++x) {
          link += std::string(box / 2, ' ') + "|" + std::string(box - box / 2 - 1, ' ');
          if (x + 1 < nx) link += gap_none;
        }
        put_line("      " + link);
      }
    }
  }
}

int print_topology(const std::string& text, int instances, bool parsable) {
  topo::Machine m;
  std::string error;
  if (!topo::parse_machine(text, &m, &error)) {
    std::fprintf(stderr, "torusmpi_info: --topology: %s\n", error.c_str());
    return 2;
  }
  m.instances = instances > 1 ? instances : 1;
  if (parsable) {
    std::printf("topology:model:%s\n", m.name.c_str());
    std::printf("topology:emulated:%s\n", m.emulated() ? "yes" : "no");
    if (!m.emulated()) return 0;
    std::printf("topology:dims:%s\n", dims_text(m).c_str());
    std::printf("topology:chips:%d\n", m.chips());
    std::printf("topology:cores:%d\n", m.cores);
    std::printf("topology:instances:%d\n", m.instances);
    std::printf("topology:ranks:%d\n", m.ranks());
    std::printf("topology:neuronlink:bandwidth:%.6g\n", m.neuronlink.bandwidth);
    std::printf("topology:neuronlink:latency:%.6g\n", m.neuronlink.latency);
    std::printf("topology:intra_chip:bandwidth:%.6g\n", m.intra_chip.bandwidth);
    std::printf("topology:intra_chip:latency:%.6g\n", m.intra_chip.latency);
    std::printf("topology:efa:bandwidth:%.6g\n", m.efa.bandwidth);
    std::printf("topology:efa:latency:%.6g\n", m.efa.latency);
    std::printf("topology:hbm_bandwidth:%.6g\n", m.hbm_bandwidth);
    std::printf("topology:reduce_bandwidth:%.6g\n", m.reduce_bandwidth);
    std::printf("topology:source:%s\n", m.source.c_str());
    for (int chip = 0; chip < m.chips(); ++chip) {
      std::string c = coords_text(m, chip);
      std::printf("chip:%d:coords:%s:ranks:%s\n", chip, c.substr(1, c.size() - 2).c_str(),
                  chip_ranks(m, chip).c_str());
    }
    std::printf("topology:links:%d\n", topo::link_count(m));
    for (int id = 0; id < topo::link_count(m); ++id) {
      topo::Link l = topo::link_of(m, id);
      std::printf("link:%d:%d-%d:dim:%d:dir:%s\n", id, l.from, l.to, l.dim, l.dir > 0 ? "+" : "-");
    }
    return 0;
  }
  std::printf("Instance model %s\n", m.name.c_str());
  if (!m.emulated()) {
    print_field("emulation",
                "none: every rank runs where the launcher puts it, all on one chip; "
                "no links are emulated or charged, and no binding follows chips",
                80);
    return 0;
  }
  print_field("torus",
              dims_text(m) + " (" + std::to_string(m.ndims) + "D), " + std::to_string(m.chips()) +
                  " chips, " + std::to_string(m.cores) + " ranks per chip, " +
                  std::to_string(m.chips() * m.cores) + " ranks" +
                  (m.instances > 1 ? " per instance" : ""),
              80);
  print_field("NeuronLink",
              gbs(m.neuronlink.bandwidth) + " per link and direction, " +
                  usec(m.neuronlink.latency) + " per hop",
              80);
  print_field("within a chip",
              gbs(m.intra_chip.bandwidth) + ", " + usec(m.intra_chip.latency) + " per message", 80);
  print_field("EFA", gbs(m.efa.bandwidth) + " per chip, " + usec(m.efa.latency) + " per hop", 80);
  if (m.instances > 1) {
    print_field("instances",
                std::to_string(m.instances) + " (TORUSMPI_INSTANCES), " +
                    std::to_string(m.ranks()) +
                    " ranks; ranks of different instances talk only "
                    "through the network (TORUSMPI_NET), from each chip's NIC",
                80);
  }
  print_field(
      "HBM",
      gbs(m.hbm_bandwidth) + " copied by DMA, " + gbs(m.reduce_bandwidth) + " of input reduced",
      80);
  print_field("figures from", m.source, 80);
  print_grid(m);
  std::printf("\n  Links (dimension-order routes: x, then y, then z, the shorter way round):\n");
  for (int d = 0; d < m.ndims; ++d) std::fputs(wrap(dim_links_text(m, d), 4, 80).c_str(), stdout);
  int links = topo::link_count(m);
  std::printf("  %d directed links (%d chip pairs, one link each way)\n", links, links / 2);
  return 0;
}

// --hang: the flight recorders of the ranks on this node of the job `pid` belongs to.
int print_hang(pid_t pid) {
  flight::Book first;
  std::string error;
  if (!flight::read_book(pid, &first, &error)) {
    std::fprintf(stderr, "torusmpi_info: --hang: %s\n", error.c_str());
    return 1;
  }
  std::vector<flight::Seen> ranks;
  for (pid_t p : flight::find_books()) {
    flight::Seen s;
    if (!flight::read_book(p, &s.book, &error)) continue;
    if (std::strncmp(s.book.h.nspace, first.h.nspace, sizeof first.h.nspace) != 0) continue;
    s.state = flight::proc_state(p);
    ranks.push_back(s);
  }
  std::sort(ranks.begin(), ranks.end(), [](const flight::Seen& a, const flight::Seen& b) {
    return a.book.h.rank < b.book.h.rank;
  });
  std::printf("job %s: %zu of its %d ranks on this node (%s); ranks are MPI_COMM_WORLD ranks\n",
              first.h.nspace, ranks.size(), first.h.size, first.h.host);
  std::fputs(flight::describe_node(ranks, flight::now_ns(), 8).c_str(), stdout);
  if (static_cast<int>(ranks.size()) < first.h.size) {
    std::printf("(the job's other ranks run on other nodes: run torusmpi_info --hang there)\n");
  }
  return 0;
}

bool parse_options(int argc, char** argv, Options* opt, bool* help, bool* version) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--params") == 0) {
      opt->params_only = true;
    } else if (std::strcmp(a, "--algorithms") == 0) {
      opt->algorithms_only = true;
    } else if (std::strcmp(a, "--topology") == 0) {
      opt->topology = true;
      // MODEL is optional: the next argument is one unless it is an option.
      if (i + 1 < argc && argv[i + 1][0] != '-') opt->model = argv[++i];
    } else if (std::strncmp(a, "--topology=", 11) == 0) {
      opt->topology = true;
      opt->model = a + 11;
    } else if (std::strcmp(a, "--hang") == 0 && i + 1 < argc) {
      char* end = nullptr;
      opt->hang_pid = std::strtol(argv[++i], &end, 10);
      if (opt->hang_pid <= 0 || *end != '\0') {
        std::fprintf(stderr, "torusmpi_info: --hang takes a process id, not '%s'\n", argv[i]);
        return false;
      }
    } else if (std::strcmp(a, "--parsable") == 0) {
      opt->parsable = true;
    } else if (std::strcmp(a, "--man-params") == 0) {
      opt->man_params = true;
    } else if (std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0) {
      *help = true;
    } else if (std::strcmp(a, "--version") == 0) {
      *version = true;
    } else {
      std::fprintf(stderr, "torusmpi_info: unknown option '%s'\n", a);
      return false;
    }
  }
  if (opt->params_only + opt->algorithms_only + opt->topology + opt->man_params +
          (opt->hang_pid > 0) >
      1) {
    std::fprintf(stderr,
                 "torusmpi_info: --params, --algorithms, --topology, --hang and --man-params "
                 "exclude each other\n");
    return false;
  }
  // A troff section has no parsable form, and the two cannot share stdout.
  if (opt->man_params && opt->parsable) {
    std::fprintf(stderr, "torusmpi_info: --man-params and --parsable exclude each other\n");
    return false;
  }
  return true;
}

}  // namespace

int run(int argc, char** argv) {
  Options opt;
  bool help = false;
  bool version = false;
  if (!parse_options(argc, argv, &opt, &help, &version)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (version) {
    std::printf("torusmpi_info (torusmpi) %s\n", PACKAGE_VERSION);
    return 0;
  }
  if (opt.hang_pid > 0) {
    int rc = print_hang(static_cast<pid_t>(opt.hang_pid));
    if (rc != 0) return rc;
    return std::fflush(stdout) == 0 && !std::ferror(stdout) ? 0 : 1;
  }
  if (opt.man_params) {
    print_man_params();
    return std::fflush(stdout) == 0 && !std::ferror(stdout) ? 0 : 1;
  }
  if (opt.topology) {
    std::string model = opt.model;
    read_environment();  // TORUSMPI_INSTANCE(S), as MPI_Init would read them
    if (model.empty()) model = params::instance();
    int rc = print_topology(model, static_cast<int>(params::instances()), opt.parsable);
    if (rc != 0) return rc;
    return std::fflush(stdout) == 0 && !std::ferror(stdout) ? 0 : 1;
  }
  if (opt.algorithms_only) {
    opt.parsable ? print_algorithms_parsable() : print_algorithms();
    return std::fflush(stdout) == 0 && !std::ferror(stdout) ? 0 : 1;
  }
  EnvReport report = read_environment();
  if (opt.parsable) {
    if (!opt.params_only) print_build_parsable();
    print_params_parsable(report);
    if (!opt.params_only) print_algorithms_parsable();
  } else {
    if (!opt.params_only) {
      print_build();
      std::printf("\n");
    }
    print_params(report);
    if (!opt.params_only) {
      std::printf("\n");
      print_algorithms();
    }
  }
  // A full pipe or disk must not pass for a complete listing (scripts read this output).
  return std::fflush(stdout) == 0 && !std::ferror(stdout) ? 0 : 1;
}

}  // namespace torusmpi::info

int main(int argc, char** argv) { return torusmpi::info::run(argc, argv); }
