// The network between instances and nodes: the transport TORUSMPI_NET names (ofi: libfabric, ucx:
// UCX) carries every fragment between ranks that shared memory does not reach, i.e. ranks of other
// nodes and, under emulation, ranks of other emulated instances (TORUSMPI_INSTANCES) on this node.
//
// Each network transport (pml/ofi, pml/ucx) provides the same three steps:
//   prepare  before the bootstrap's exchange: opens its endpoint and publishes its address
//            (boot::put);
//   attach   after the exchange: resolves the addresses of `peers` (job ranks) and becomes their
//            transport (set_transport);
//   detach   after pml::finalize: closes everything.
#ifndef TORUSMPI_PML_NET_H_
#define TORUSMPI_PML_NET_H_

#include <signal.h>

#include <string>
#include <vector>

#include "boot/boot.h"
#include "core/status.h"

namespace torusmpi::pml::net {

// The transports this build moves data with, comma-separated: shm,self and the network ones
// compiled in (ofi, ucx). What MPI_Get_library_version and torusmpi_info say.
const char* transport_names();

// The job ranks this rank reaches only through the network: other nodes' ranks, and other emulated
// instances' (topo::machine() is loaded). Empty for most single-node jobs.
std::vector<int> remote_peers(const boot::JobInfo& job);

// TORUSMPI_NET's transport; does nothing when `peers` is empty. An error names the transport and
// what failed (an unknown TORUSMPI_NET, a transport not compiled in, no provider).
Status prepare(const boot::JobInfo& job, const std::vector<int>& peers, std::string* error);
Status attach(const boot::JobInfo& job, const std::vector<int>& peers, std::string* error);
void detach();

// The network libraries are opened at run time, when a job needs them, not linked into libmpi:
// as they load, libfabric (through its psm provider's libinfinipath) and UCX (libucs) install
// handlers for SIGSEGV, SIGBUS, SIGILL and SIGFPE that print their own backtrace and exit 1, in
// every program linked with this library, displacing a sanitizer's or the program's handlers and
// the core dump. KeepCrashHandlers puts the program's handlers back when it goes out of scope;
// the transports hold one around whatever may load code (dlopen, fi_getinfo, ucp_init).
class KeepCrashHandlers {
 public:
  KeepCrashHandlers();
  ~KeepCrashHandlers();
  KeepCrashHandlers(const KeepCrashHandlers&) = delete;
  KeepCrashHandlers& operator=(const KeepCrashHandlers&) = delete;

 private:
  struct sigaction saved_[4];
};

// One call a transport takes from its library: its name and where its address goes.
struct Symbol {
  const char* name;
  void** address;
};

// Opens `soname` for `transport` (by the loader's search, then from `libdir`, where configure
// found it) and resolves every symbol; an error names the transport, the library and what is
// missing. Called once per process, from the transport's prepare().
Status open_library(const char* transport, const char* soname, const char* libdir,
                    const std::vector<Symbol>& symbols, std::string* error);

// A transport's table of calls, from an X-macro list of names: a struct of typed pointers
//   struct Calls { LIST(TORUSMPI_NET_POINTER) };
// and the symbols to fill it, with a reference named `calls` to it in scope:
//   open_library(..., {LIST(TORUSMPI_NET_SYMBOL)}, error)
#define TORUSMPI_NET_POINTER(f) decltype(&::f) f = nullptr;
#define TORUSMPI_NET_SYMBOL(f) {#f, reinterpret_cast<void**>(&calls.f)},

}  // namespace torusmpi::pml::net

namespace torusmpi::pml::ofi {
Status prepare(const boot::JobInfo& job, std::string* error);
Status attach(const boot::JobInfo& job, const std::vector<int>& peers, std::string* error);
void detach();
}  // namespace torusmpi::pml::ofi

namespace torusmpi::pml::ucx {
Status prepare(const boot::JobInfo& job, std::string* error);
Status attach(const boot::JobInfo& job, const std::vector<int>& peers, std::string* error);
void detach();
}  // namespace torusmpi::pml::ucx

#endif  // TORUSMPI_PML_NET_H_
