// Which ranks need the network, and which network transport serves them.
#include "pml/net.h"

#include <dlfcn.h>

#include <algorithm>

#include "config.h"
#include "core/params.h"
#include "topo/machine.h"

namespace torusmpi::pml::net {
namespace {

enum class Kind { kNone, kOfi, kUcx };

Kind g_active = Kind::kNone;

bool compiled_in(Kind k) {
#ifdef TORUSMPI_HAVE_OFI
  if (k == Kind::kOfi) return true;
#endif
#ifdef TORUSMPI_HAVE_UCX
  if (k == Kind::kUcx) return true;
#endif
  (void)k;
  return false;
}

Status choose(Kind* out, std::string* error) {
  const std::string& name = params::net();
  if (name == "ofi") {
    *out = Kind::kOfi;
  } else if (name == "ucx") {
    *out = Kind::kUcx;
  } else {
    *error = "TORUSMPI_NET=" + name + ": not a network transport (ofi or ucx)";
    return Status::kErrArg;
  }
  if (!compiled_in(*out)) {
    *error = "TORUSMPI_NET=" + name + ": this torusmpi was built without it (configure found no " +
             (*out == Kind::kOfi ? "libfabric" : "UCX") + "), and this job needs the network";
    return Status::kErrUnsupported;
  }
  return Status::kOk;
}

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};

}  // namespace

KeepCrashHandlers::KeepCrashHandlers() {
  static_assert(std::size(kCrashSignals) == sizeof saved_ / sizeof saved_[0]);
  for (size_t i = 0; i < std::size(kCrashSignals); ++i) {
    sigaction(kCrashSignals[i], nullptr, &saved_[i]);
  }
}

KeepCrashHandlers::~KeepCrashHandlers() {
  for (size_t i = 0; i < std::size(kCrashSignals); ++i) {
    sigaction(kCrashSignals[i], &saved_[i], nullptr);
  }
}

Status open_library(const char* transport, const char* soname, const char* libdir,
                    const std::vector<Symbol>& symbols, std::string* error) {
  KeepCrashHandlers keep;
  // Never closed: neither library supports being unloaded and loaded again in one process.
  void* lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const std::string first = dlerror();
    lib = dlopen((std::string(libdir) + "/" + soname).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      *error = std::string(transport) + ": cannot open " + soname + ": " + first;
      return Status::kErrUnsupported;
    }
  }
  for (const Symbol& s : symbols) {
    // With a handle, dlsym searches the library's dependencies too (libucs for libucp).
    *s.address = dlsym(lib, s.name);
    if (*s.address == nullptr) {
      *error = std::string(transport) + ": " + soname + " has no " + s.name +
               " (older than the headers it was built with?)";
      return Status::kErrUnsupported;
    }
  }
  return Status::kOk;
}

std::vector<int> remote_peers(const boot::JobInfo& job) {
  const topo::Machine& m = topo::machine();
  const int my_instance = topo::place(m, job.rank).instance;
  std::vector<int> out;
  for (int r = 0; r < job.size; ++r) {
    if (r == job.rank) continue;
    bool local = std::binary_search(job.local_peers.begin(), job.local_peers.end(), r);
    if (!local || topo::place(m, r).instance != my_instance) out.push_back(r);
  }
  return out;
}

const char* transport_names() {
  return "shm,self"
#ifdef TORUSMPI_HAVE_OFI
         ",ofi"
#endif
#ifdef TORUSMPI_HAVE_UCX
         ",ucx"
#endif
      ;
}

Status prepare(const boot::JobInfo& job, const std::vector<int>& peers, std::string* error) {
  if (peers.empty()) return Status::kOk;
  Kind k;
  Status s = choose(&k, error);
  if (s != Status::kOk) return s;
  g_active = k;
#ifdef TORUSMPI_HAVE_OFI
  if (k == Kind::kOfi) return ofi::prepare(job, error);
#endif
#ifdef TORUSMPI_HAVE_UCX
  if (k == Kind::kUcx) return ucx::prepare(job, error);
#endif
  (void)job;
  return Status::kErrUnsupported;
}

Status attach(const boot::JobInfo& job, const std::vector<int>& peers, std::string* error) {
  if (peers.empty()) return Status::kOk;
#ifdef TORUSMPI_HAVE_OFI
  if (g_active == Kind::kOfi) return ofi::attach(job, peers, error);
#endif
#ifdef TORUSMPI_HAVE_UCX
  if (g_active == Kind::kUcx) return ucx::attach(job, peers, error);
#endif
  (void)job, (void)error;
  return Status::kErrUnsupported;
}

void detach() {
#ifdef TORUSMPI_HAVE_OFI
  if (g_active == Kind::kOfi) ofi::detach();
#endif
#ifdef TORUSMPI_HAVE_UCX
  if (g_active == Kind::kUcx) ucx::detach();
#endif
  g_active = Kind::kNone;
}

}  // namespace torusmpi::pml::net
