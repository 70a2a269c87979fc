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

#include <string>
#include <vector>

#include "boot/boot.h"
#include "core/status.h"

namespace torusmpi::pml::net {

// The job ranks this rank reaches only through the network: other nodes' ranks, and other emulated
// instances' (topo::machine() is loaded). Empty for most single-node jobs.
std::vector<int> remote_peers(const boot::JobInfo& job);

// TORUSMPI_NET's transport; does nothing when `peers` is empty. An error names the transport and
// what failed (an unknown TORUSMPI_NET, a transport not compiled in, no provider).
Status prepare(const boot::JobInfo& job, const std::vector<int>& peers, std::string* error);
Status attach(const boot::JobInfo& job, const std::vector<int>& peers, std::string* error);
void detach();

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
