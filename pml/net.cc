// Which ranks need the network, and which network transport serves them.
#include "pml/net.h"

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

}  // namespace

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
