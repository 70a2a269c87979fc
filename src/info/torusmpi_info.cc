// torusmpi_info: what this torusmpi build is, what it was built against, what the host looks like
// to it, every run-time parameter with its current value, and every collective algorithm.
//
// It reads the build configuration and the parameter table directly and never calls MPI_Init, so
// it runs anywhere, launcher or not, even when a job would fail to start. It is also the one
// producer of the man page's ENVIRONMENT section (--man-params), so the page cannot drift from
// src/core/params.def.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "config.h"
#include "core/log.h"
#include "coll/select/registry.h"
#include "core/params.h"
#include "topo/host.h"

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
    "Usage: torusmpi_info [--params | --algorithms] [--parsable]\n"
    "       torusmpi_info --man-params | --help | --version\n"
    "\n"
    "Shows this torusmpi build (version, ABI, build configuration, data transports), the host as\n"
    "hwloc sees it, and every TORUSMPI_* run-time parameter with its type, default, meaning and,\n"
    "when set in the environment, its current value. It does not start MPI.\n"
    "\n"
    "  --params      only the run-time parameters\n"
    "  --algorithms  only the collective algorithms: token, cost, restrictions (the tokens are\n"
    "                what TORUSMPI_<COLL>_ALGORITHM and rule files take)\n"
    "  --parsable    stable key:value lines for scripts (e.g. param:NAME:type:int:default:1000)\n"
    "  --man-params  the parameters as the troff ENVIRONMENT section of torusmpi(7)\n"
    "  --help        this text\n"
    "  --version     the torusmpi version\n";

struct Options {
  bool params_only = false;
  bool algorithms_only = false;
  bool parsable = false;
  bool man_params = false;
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

// What moves data today: shared memory between the ranks of one node, the loopback to oneself.
// Ranks on different nodes cannot talk until a network transport exists.
constexpr char kTransports[] =
    "shm (ranks of one node: shared-memory rings, single-copy rendezvous with process_vm_readv), "
    "self (a rank to itself); no network transport yet: a job spanning nodes cannot communicate";
constexpr char kTransportNames[] = "shm,self";

std::string detected(bool found, const char* what) {
  return found ? std::string(what) + " found by configure; no transport uses it yet"
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

// "  name            : value", the value wrapped under itself at 100 columns.
void print_field(const char* name, const std::string& value) {
  char head[32];
  std::snprintf(head, sizeof(head), "  %-16s: ", name);
  size_t indent = std::strlen(head);
  std::string text = wrap(value, indent, 100);
  // wrap() indents its first line too; the head takes those columns.
  std::printf("%s%s", head, text.size() > indent ? text.c_str() + indent : "\n");
}

void print_build() {
  std::printf("torusmpi %s\n", PACKAGE_VERSION);
  print_field("ABI", "Open MPI " + ompi_abi() + " (libmpi.so.40, MPI " + mpi_standard() +
                         "), from " + mpi_h() + " of Open MPI " + ompi_header_version());
  print_field("prefix", TORUSMPI_PREFIX);
  print_field("library", std::string(TORUSMPI_LIBDIR) + "/libmpi.so.40");
  print_field("wrappers", std::string(TORUSMPI_BINDIR) + "/mpicc, " + TORUSMPI_BINDIR + "/mpicxx");
  print_field("C++ compiler", TORUSMPI_CXX);
  print_field("configure args", TORUSMPI_CONFIGURE_ARGS[0] ? TORUSMPI_CONFIGURE_ARGS : "(none)");
  print_field("data transports", kTransports);
  print_field("libfabric (OFI)", detected(kHaveOfi, "libfabric"));
  print_field("UCX", detected(kHaveUcx, "UCX"));
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
  std::printf("build:transports:%s\n", kTransportNames);
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

bool parse_options(int argc, char** argv, Options* opt, bool* help, bool* version) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--params") == 0) {
      opt->params_only = true;
    } else if (std::strcmp(a, "--algorithms") == 0) {
      opt->algorithms_only = true;
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
  if (opt->params_only && opt->algorithms_only) {
    std::fprintf(stderr, "torusmpi_info: --params and --algorithms exclude each other\n");
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
  if (opt.man_params) {
    print_man_params();
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
