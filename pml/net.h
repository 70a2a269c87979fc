// The network between instances and nodes: the transport TORUSMPI_NET names (ofi: libfabric, ucx:
// UCX) carries every fragment between ranks that shared memory does not reach, i.e. ranks of other
// nodes and, under emulation, ranks of other emulated instances (TORUSMPI_INSTANCES) on this node.
//
// The steps, the same whichever transport (this file drives them; pml/ofi and pml/ucx make only
// their library's calls):
//   prepare  before the bootstrap's exchange: the transport opens its library and its endpoint,
//            and this rank publishes an address card (its pid, host and endpoint address);
//   attach   after the exchange: the transport connects to each of `peers` (job ranks) by its
//            card, and becomes their transport (set_transport);
//   detach   after pml::finalize: lets what is in flight leave, then closes everything.
#ifndef TORUSMPI_PML_NET_H_
#define TORUSMPI_PML_NET_H_

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "boot/boot.h"
#include "core/status.h"
#include "pml/transport.h"

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

// Processes of other jobs (MPI_Comm_spawn, _connect, _join) talk through the network transport,
// shared memory on one node included (a job's segment is its own). dynamic_card() gives this
// process's address card for them, opening TORUSMPI_NET's transport now if the job did not need
// it at start-up. dynamic_connect() makes process `rank` of job `job_id` (boot::job_id), whose
// card is `card`, a peer of the pml; *index is its number there.
Status dynamic_card(const boot::JobInfo& job, std::vector<uint8_t>* card, std::string* error);
Status dynamic_connect(const boot::JobInfo& job, uint64_t job_id, int rank,
                       const std::vector<uint8_t>& card, int* index, std::string* error);

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
// missing. Called once per process, from the transport's open() (through Calls::load below).
Status open_library(const char* transport, const char* soname, const char* libdir,
                    const std::vector<Symbol>& symbols, std::string* error);

// A transport's table of calls, from an X-macro list of names:
//   TORUSMPI_NET_CALLS(Calls, LIST);
// defines struct Calls, one typed pointer per name, and Calls::load(transport, soname, libdir,
// error), which fills them through open_library().
#define TORUSMPI_NET_POINTER(f) decltype(&::f) f = nullptr;
#define TORUSMPI_NET_SYMBOL(f) {#f, reinterpret_cast<void**>(&this->f)},
#define TORUSMPI_NET_CALLS(Name, LIST)                                                     \
  struct Name {                                                                            \
    LIST(TORUSMPI_NET_POINTER)                                                             \
    ::torusmpi::Status load(const char* transport, const char* soname, const char* libdir, \
                            std::string* error) {                                          \
      return ::torusmpi::pml::net::open_library(transport, soname, libdir,                 \
                                                {LIST(TORUSMPI_NET_SYMBOL)}, error);       \
    }                                                                                      \
  }

// A peer's address card, as attach() read it.
struct AddressCard {
  pid_t local_pid = 0;           // the peer's process when it runs on this host, else 0
  std::vector<uint8_t> address;  // its endpoint's, in its library's format
};

// Decodes the card job rank `peer` published for `transport` (`library` names it in messages):
// its fixed part (pid, host), then the endpoint's address. `hostname` is this rank's, to tell
// whether the peer runs on this host. A card of the wrong size, or with no address or pid, is an
// error naming the transport and the peer.
Status parse_card(const char* transport, const char* library, int peer,
                  const std::vector<uint8_t>& value, const std::string& hostname, AddressCard* card,
                  std::string* error);

// What a network transport adds to Transport for the steps above.
class NetworkTransport : public Transport {
 public:
  bool network() const override { return true; }
  // Makes job rank `peer` reachable at card.address, and watches card.local_pid (pml/liveness.h).
  virtual Status connect(int peer, const AddressCard& card, std::string* error) = 0;
  // Makes process `rank` of another job (`job`: boot::job_id) reachable as the pml's peer
  // `index` (a number past the job's ranks), at card.address. Its process is not watched: it may
  // end normally while this one runs on.
  virtual Status connect_dynamic(int index, uint64_t job, int rank, const AddressCard& card,
                                 std::string* error) {
    (void)index, (void)job, (void)rank, (void)card;
    *error = std::string(name()) + ": this network transport cannot reach processes of other jobs";
    return Status::kErrUnsupported;
  }
  // detach(), before the transport is destroyed: lets the fragments still in flight leave.
  virtual void flush() {}
};

// Each transport's part of prepare: opens its library and an endpoint, and gives the endpoint's
// address for this rank's card.
using OpenFn = Status (*)(const boot::JobInfo& job, std::unique_ptr<NetworkTransport>* transport,
                          std::vector<uint8_t>* address, std::string* error);

}  // namespace torusmpi::pml::net

namespace torusmpi::pml::ofi {
Status open(const boot::JobInfo& job, std::unique_ptr<net::NetworkTransport>* transport,
            std::vector<uint8_t>* address, std::string* error);
}  // namespace torusmpi::pml::ofi

namespace torusmpi::pml::ucx {
Status open(const boot::JobInfo& job, std::unique_ptr<net::NetworkTransport>* transport,
            std::vector<uint8_t>* address, std::string* error);
}  // namespace torusmpi::pml::ucx

#endif  // TORUSMPI_PML_NET_H_
