// Which ranks need the network, which network transport serves them, and the steps every
// transport goes through (pml/net.h), address cards included.
#include "pml/net.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "config.h"
#include "core/log.h"
#include "core/params.h"
#include "pml/pml.h"
#include "topo/machine.h"

namespace torusmpi::pml::net {
namespace {

// The network transports, by TORUSMPI_NET's value; `open` is null for one not compiled in.
struct Choice {
  const char* name;
  const char* library;  // for messages
  OpenFn open;
};

constexpr Choice kChoices[] = {
#ifdef TORUSMPI_HAVE_OFI
    {"ofi", "libfabric", &ofi::open},
#else
    {"ofi", "libfabric", nullptr},
#endif
#ifdef TORUSMPI_HAVE_UCX
    {"ucx", "UCX", &ucx::open},
#else
    {"ucx", "UCX", nullptr},
#endif
};

// The transport prepare() opened, until detach().
struct Active {
  const Choice* choice = nullptr;
  std::unique_ptr<NetworkTransport> transport;
  std::vector<uint8_t> card;  // this process's, as published
};

Active& active() {
  static Active a;
  return a;
}

Status choose(const Choice** out, std::string* error) {
  const std::string& name = params::net();
  for (const Choice& c : kChoices) {
    if (name != c.name) continue;
    if (c.open == nullptr) {
      *error = "TORUSMPI_NET=" + name +
               ": this torusmpi was built without it (configure found no " + c.library +
               "), and this job needs the network";
      return Status::kErrUnsupported;
    }
    *out = &c;
    return Status::kOk;
  }
  *error = "TORUSMPI_NET=" + name + ": not a network transport (ofi or ucx)";
  return Status::kErrArg;
}

// The card's fixed part; the endpoint's address (addr_len bytes) follows it. Published under
// "torusmpi.<transport>".
struct CardHead {
  int32_t pid;
  uint32_t addr_len;
  char host[64];
};

std::string card_key(const Choice& c) { return std::string("torusmpi.") + c.name; }

std::vector<uint8_t> make_card(const boot::JobInfo& job, const std::vector<uint8_t>& address) {
  CardHead head{};
  head.pid = static_cast<int32_t>(getpid());
  head.addr_len = static_cast<uint32_t>(address.size());
  std::snprintf(head.host, sizeof head.host, "%s", job.hostname.c_str());
  std::vector<uint8_t> card(sizeof head + address.size());
  std::memcpy(card.data(), &head, sizeof head);
  std::copy(address.begin(), address.end(), card.begin() + sizeof head);
  return card;
}

Status lookup_card(const Choice& c, const boot::JobInfo& job, int peer, AddressCard* card,
                   std::string* error) {
  std::vector<uint8_t> value;
  // None published reads as an empty card, which parse_card() reports.
  if (boot::get(peer, card_key(c), &value) != Status::kOk) value.clear();
  return parse_card(c.name, c.library, peer, value, job.hostname, card, error);
}

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};

}  // namespace

Status parse_card(const char* transport, const char* library, int peer,
                  const std::vector<uint8_t>& value, const std::string& hostname, AddressCard* card,
                  std::string* error) {
  const std::string who = std::string(transport) + ": rank " + std::to_string(peer);
  CardHead head;
  if (value.size() < sizeof head) {
    *error = who + " published no " + library +
             " address (is it running with TORUSMPI_NET=" + transport + " too?)";
    return Status::kErrBoot;
  }
  std::memcpy(&head, value.data(), sizeof head);
  if (value.size() != sizeof head + head.addr_len || head.addr_len == 0 || head.pid <= 0) {
    *error = who + " published a malformed " + library + " address (" +
             std::to_string(value.size()) + " B)";
    return Status::kErrBoot;
  }
  // The host as make_card() wrote it: cut to what fits, so compared on that much.
  const bool here = std::strncmp(head.host, hostname.c_str(), sizeof head.host - 1) == 0;
  card->local_pid = here ? head.pid : 0;
  card->address.assign(value.begin() + sizeof head, value.end());
  return Status::kOk;
}

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
  static const std::string names = [] {
    std::string s = "shm,self";
    for (const Choice& c : kChoices) {
      if (c.open != nullptr) s += std::string(",") + c.name;
    }
    return s;
  }();
  return names.c_str();
}

Status prepare(const boot::JobInfo& job, const std::vector<int>& peers, std::string* error) {
  if (peers.empty()) return Status::kOk;
  Active& a = active();
  TORUSMPI_CHECK(choose(&a.choice, error));
  std::vector<uint8_t> address;
  TORUSMPI_CHECK(a.choice->open(job, &a.transport, &address, error));
  a.card = make_card(job, address);
  return boot::put(card_key(*a.choice), a.card.data(), a.card.size());
}

Status dynamic_card(const boot::JobInfo& job, std::vector<uint8_t>* card, std::string* error) {
  Active& a = active();
  if (a.transport == nullptr) {
    TORUSMPI_CHECK(choose(&a.choice, error));
    std::vector<uint8_t> address;
    if (Status s = a.choice->open(job, &a.transport, &address, error); s != Status::kOk) {
      a.transport.reset();
      return s;
    }
    a.card = make_card(job, address);
    TORUSMPI_DEBUG(kPml, "%s: opened for processes of other jobs", a.choice->name);
  }
  *card = a.card;
  return Status::kOk;
}

Status dynamic_connect(const boot::JobInfo& job, uint64_t job_id, int rank,
                       const std::vector<uint8_t>& card, int* index, std::string* error) {
  Active& a = active();
  if (a.transport == nullptr) {
    *error = "net: a process of another job before this one's card";
    return Status::kErrInternal;
  }
  AddressCard parsed;
  TORUSMPI_CHECK(
      parse_card(a.choice->name, a.choice->library, rank, card, job.hostname, &parsed, error));
  const int next = peer_count();
  TORUSMPI_CHECK(a.transport->connect_dynamic(next, job_id, rank, parsed, error));
  *index = add_peer(a.transport.get());
  return Status::kOk;
}

Status attach(const boot::JobInfo& job, const std::vector<int>& peers, std::string* error) {
  if (peers.empty()) return Status::kOk;
  Active& a = active();
  if (a.transport == nullptr) {
    *error = "net: attach before prepare";
    return Status::kErrInternal;
  }
  // Every peer connected before any is handed to the pml.
  for (int peer : peers) {
    AddressCard card;
    TORUSMPI_CHECK(lookup_card(*a.choice, job, peer, &card, error));
    TORUSMPI_CHECK(a.transport->connect(peer, card, error));
  }
  for (int peer : peers) set_transport(peer, a.transport.get());
  TORUSMPI_DEBUG(kPml, "%s: rank %d has endpoints to %zu rank(s)", a.choice->name, job.rank,
                 peers.size());
  return Status::kOk;
}

void detach() {
  Active& a = active();
  if (a.transport != nullptr) a.transport->flush();
  a.transport.reset();
  a.choice = nullptr;
}

}  // namespace torusmpi::pml::net
