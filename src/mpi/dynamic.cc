// Dynamic processes: MPI_Comm_spawn, MPI_Comm_spawn_multiple, MPI_Comm_get_parent, MPI_Open_port,
// MPI_Close_port, MPI_Comm_accept, MPI_Comm_connect, MPI_Publish_name, MPI_Lookup_name,
// MPI_Unpublish_name, MPI_Comm_join and MPI_Comm_disconnect.
//
// Processes of another job become peers of the pml at run time, numbered after the job's ranks
// (pml.h: add_peer), and are reached through the network transport (pml/net.h: dynamic_card,
// dynamic_connect), on one node too: shared memory stays within a job, whose segment is made at
// start-up for its own ranks. An intercommunicator's remote group holds those numbers as job ranks.
//
// A port is a TCP socket listening on this host; its name says where and carries a random key the
// connecting side must present ("torusmpi-port:<host>:<tcp port>:<key>"). Accept and connect:
//
//   1. every process of each group takes its network card; the group allgathers them
//   2. the roots meet on the port: the connecting root presents the key and sends its group's
//      cards, the accepting root answers with its own
//   3. each root gives the other group's cards to its group (after a status word, so a failure at
//      the root fails every process alike, never leaving one waiting)
//   4. context ids: contexts_agree, OR-ing within each group and between the roots over the socket
//   5. every process adds the processes it does not know yet to the pml, and makes the
//      intercommunicator (its groups in each side's rank order)
//
// MPI_Comm_spawn is a port opened by the root, named to the children in their environment
// (kParentPortVar), PMIx_Spawn through the launcher, then an accept; the children connect from
// MPI_Init (dynamic_init). MPI_Comm_join swaps port names over the application's socket and the
// side with the lower name accepts.
#include "mpi/dynamic.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "boot/boot.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "mpi/errors.h"
#include "mpi/group.h"
#include "mpi/info.h"
#include "mpi/p2p.h"
#include "mpi/runtime.h"
#include "pml/net.h"
#include "pml/pml.h"

namespace torusmpi::mpi {
namespace {

// The port a spawned job's processes connect to, in their environment. Not TORUSMPI_*: those
// name parameters, and an unknown one is warned about.
constexpr char kParentPortVar[] = "TMPI_PARENT_PORT";
constexpr char kPortPrefix[] = "torusmpi-port:";

// A process's card in the exchange: its job, its rank there, and its network card. Fixed size,
// so a group allgathers them in one run.
constexpr size_t kCardBytes = 512;
struct CardHead {
  uint64_t job;
  int32_t rank;
  uint32_t len;  // network card bytes that follow
};

// How long a root waits for the other side's answer once connected: a live peer answers at once,
// so a silent one is a process that died or a connection that is not torusmpi's.
constexpr double kReplyTimeoutS = 60.0;

struct Port {
  int fd = -1;  // listening socket
  std::string key;
};

std::map<std::string, Port>& ports() {
  static auto* p = new std::map<std::string, Port>;
  return *p;
}

// Processes of other jobs this one knows: (job, rank) -> the pml's number for it.
std::map<std::pair<uint64_t, int>, int>& known() {
  static auto* k = new std::map<std::pair<uint64_t, int>, int>;
  return *k;
}

// ... and the other way: (job, rank) of the pml's number job size + i.
std::vector<std::pair<uint64_t, int>>& named() {
  static auto* n = new std::vector<std::pair<uint64_t, int>>;
  return *n;
}

std::pair<uint64_t, int> name_of(int peer) {
  const boot::JobInfo& job = runtime().job;
  if (peer < job.size) return {boot::job_id(job.nspace), peer};
  const size_t at = static_cast<size_t>(peer - job.size);
  return at < named().size() ? named()[at] : std::pair<uint64_t, int>{~uint64_t{0}, peer};
}

Comm* g_parent = nullptr;
MPI_Comm g_parent_handle = MPI_COMM_NULL;

std::string errno_text(const char* what) { return std::string(what) + ": " + strerror(errno); }

// --- Sockets: blocking steps made in slices, with the library's lock let go meanwhile.

// Waits until fd is ready for `events`, or until deadline (progress::now_seconds(); 0: none).
Status wait_fd(int fd, short events, double deadline, std::string* error) {
  progress::Unlocked unlocked;
  for (;;) {
    int ms = 200;
    if (deadline > 0) {
      double left = deadline - progress::now_seconds();
      if (left <= 0) {
        *error = "timed out";
        return Status::kErrTimeout;
      }
      ms = std::min(ms, static_cast<int>(left * 1000) + 1);
    }
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, ms);
    if (n > 0) return Status::kOk;
    if (n < 0 && errno != EINTR) {
      *error = errno_text("poll");
      return Status::kErrPeerGone;
    }
  }
}

Status write_all(int fd, const void* data, size_t len, double deadline, std::string* error) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (len > 0) {
    TORUSMPI_CHECK(wait_fd(fd, POLLOUT, deadline, error));
    ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) {
      *error = errno_text("send");
      return Status::kErrPeerGone;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return Status::kOk;
}

Status read_all(int fd, void* data, size_t len, double deadline, std::string* error) {
  auto* p = static_cast<uint8_t*>(data);
  while (len > 0) {
    TORUSMPI_CHECK(wait_fd(fd, POLLIN, deadline, error));
    ssize_t n = ::recv(fd, p, len, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n == 0) {
      *error = "the other side closed the connection";
      return Status::kErrPeerGone;
    }
    if (n < 0) {
      *error = errno_text("recv");
      return Status::kErrPeerGone;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return Status::kOk;
}

// Messages on a socket: an 8-byte length, then the bytes. A length past `max` is not ours.
Status send_msg(int fd, const std::vector<uint8_t>& m, double deadline, std::string* error) {
  uint64_t len = m.size();
  TORUSMPI_CHECK(write_all(fd, &len, sizeof len, deadline, error));
  return write_all(fd, m.data(), m.size(), deadline, error);
}

Status recv_msg(int fd, std::vector<uint8_t>* m, size_t max, double deadline, std::string* error) {
  uint64_t len = 0;
  TORUSMPI_CHECK(read_all(fd, &len, sizeof len, deadline, error));
  if (len > max) {
    *error = "a message of " + std::to_string(len) + " B, more than any of this protocol's";
    return Status::kErrPeerGone;
  }
  m->assign(len, 0);
  return read_all(fd, m->data(), len, deadline, error);
}

std::vector<uint8_t> as_bytes(const std::string& s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

// --- Ports

std::string random_key() {
  uint64_t k[2] = {0, 0};
  if (getrandom(k, sizeof k, 0) != static_cast<ssize_t>(sizeof k)) {
    k[0] = static_cast<uint64_t>(progress::now_seconds() * 1e9);
    k[1] = static_cast<uint64_t>(getpid()) * 0x9e3779b97f4a7c15ull;
  }
  char text[40];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(k[0]),
                static_cast<unsigned long long>(k[1]));
  return text;
}

Status open_port(std::string* name, std::string* error) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *error = errno_text("socket");
    return Status::kErrNoMem;
  }
  // Any address of this host: processes on other nodes connect by its name; on one node the
  // connection goes over the loopback interface (see connect_port).
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 64) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    *error = errno_text("bind/listen");
    close(fd);
    return Status::kErrNoMem;
  }
  Port p;
  p.fd = fd;
  p.key = random_key();
  *name = std::string(kPortPrefix) + runtime().job.hostname + ":" +
          std::to_string(ntohs(addr.sin_port)) + ":" + p.key;
  ports()[*name] = p;
  return Status::kOk;
}

void close_port(const std::string& name) {
  auto it = ports().find(name);
  if (it == ports().end()) return;
  close(it->second.fd);
  ports().erase(it);
}

// Splits a port name into host, TCP port and key; false for a name that is not a port's.
bool parse_port(const std::string& name, std::string* host, int* tcp, std::string* key) {
  if (name.compare(0, sizeof kPortPrefix - 1, kPortPrefix) != 0) return false;
  const std::string rest = name.substr(sizeof kPortPrefix - 1);
  const size_t last = rest.rfind(':');
  if (last == std::string::npos || last == 0) return false;
  const size_t mid = rest.rfind(':', last - 1);
  if (mid == std::string::npos) return false;
  *host = rest.substr(0, mid);
  *key = rest.substr(last + 1);
  char* end = nullptr;
  const std::string digits = rest.substr(mid + 1, last - mid - 1);
  long v = std::strtol(digits.c_str(), &end, 10);
  if (digits.empty() || *end != '\0' || v <= 0 || v > 65535) return false;
  *tcp = static_cast<int>(v);
  return !key->empty();
}

// The root's end of step 2, accepting side: the first connection that presents the port's key.
// `spawned` (a spawn's: the children's namespace) stops the wait when that job has ended.
Status accept_on(const std::string& name, double deadline, int* out, std::string* error,
                 const std::string& spawned = "") {
  auto it = ports().find(name);
  if (it == ports().end()) {
    *error = "no port of this process has that name (MPI_Open_port makes one)";
    return Status::kErrArg;
  }
  const Port port = it->second;
  for (;;) {
    if (!spawned.empty()) {
      // In slices, between which the launcher's word on the children is read.
      double slice = progress::now_seconds() + 1.0;
      if (deadline > 0 && deadline < slice) slice = deadline;
      Status w = wait_fd(port.fd, POLLIN, slice, error);
      if (w == Status::kErrTimeout) {
        if (deadline > 0 && progress::now_seconds() >= deadline) return w;
        bool ended;
        {
          progress::Unlocked unlocked;
          ended = boot::spawned_job_ended(spawned);
        }
        if (ended) {
          *error = "the spawned job " + spawned + " ended before all of it connected";
          return Status::kErrPeerGone;
        }
        continue;
      }
      TORUSMPI_CHECK(w);
    } else {
      TORUSMPI_CHECK(wait_fd(port.fd, POLLIN, deadline, error));
    }
    int fd = accept4(port.fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) continue;
      *error = errno_text("accept");
      return Status::kErrPeerGone;
    }
    std::vector<uint8_t> hello;
    std::string why;
    const double soon = progress::now_seconds() + 10.0;
    if (recv_msg(fd, &hello, 256, soon, &why) == Status::kOk &&
        std::string(hello.begin(), hello.end()) == port.key) {
      *out = fd;
      return Status::kOk;
    }
    // Something else knocked (a scanner, a stale connector): not the caller's business.
    TORUSMPI_DEBUG(kMpi, "port %s: a connection without its key was closed", name.c_str());
    close(fd);
  }
}

// The connecting root's end of step 2.
Status connect_to(const std::string& name, double deadline, int* out, std::string* error) {
  std::string host, key;
  int tcp = 0;
  if (!parse_port(name, &host, &tcp, &key)) {
    *error = "\"" + name + "\" is not a port name of torusmpi (MPI_Open_port makes them)";
    return Status::kErrArg;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(tcp));
  if (host == runtime().job.hostname || host == "localhost") {
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  } else {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
      *error = "cannot resolve the port's host " + host;
      return Status::kErrArg;
    }
    addr.sin_addr = reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr;
    freeaddrinfo(found);
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *error = errno_text("socket");
    return Status::kErrNoMem;
  }
  int err = 0;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      Status s = wait_fd(fd, POLLOUT, deadline, error);
      if (s != Status::kOk) {
        close(fd);
        return s;
      }
      socklen_t len = sizeof err;
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    }
  }
  if (err != 0) {
    close(fd);
    // Nobody listens (yet, or any more): MPI_Comm_connect fails rather than waits for a port that
    // may never be there.
    *error = "cannot connect to " + host + ":" + std::to_string(tcp) + ": " + strerror(err);
    return Status::kErrPeerGone;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  Status s = send_msg(fd, as_bytes(key), deadline, error);
  if (s != Status::kOk) {
    close(fd);
    return s;
  }
  *out = fd;
  return Status::kOk;
}

// --- Cards

Status my_card(std::vector<uint8_t>* out, std::string* error) {
  const boot::JobInfo& job = runtime().job;
  std::vector<uint8_t> net;
  TORUSMPI_CHECK(pml::net::dynamic_card(job, &net, error));
  if (net.size() > kCardBytes - sizeof(CardHead)) {
    *error =
        "this process's network address (" + std::to_string(net.size()) + " B) does not fit a card";
    return Status::kErrInternal;
  }
  CardHead head{boot::job_id(job.nspace), static_cast<int32_t>(job.rank),
                static_cast<uint32_t>(net.size())};
  out->assign(kCardBytes, 0);
  std::memcpy(out->data(), &head, sizeof head);
  std::memcpy(out->data() + sizeof head, net.data(), net.size());
  return Status::kOk;
}

// The pml's number for the process of `card` (kCardBytes), adding it if it is new.
Status peer_of(const uint8_t* card, int* index, std::string* error) {
  CardHead head;
  std::memcpy(&head, card, sizeof head);
  const boot::JobInfo& job = runtime().job;
  if (head.len > kCardBytes - sizeof head || head.rank < 0) {
    *error = "a malformed card came from the other side";
    return Status::kErrPeerGone;
  }
  if (head.job == boot::job_id(job.nspace)) {
    if (head.rank >= job.size) {
      *error = "the other side names rank " + std::to_string(head.rank) + " of this job, which " +
               "has " + std::to_string(job.size);
      return Status::kErrPeerGone;
    }
    *index = head.rank;
    return Status::kOk;
  }
  auto it = known().find({head.job, head.rank});
  if (it != known().end()) {
    *index = it->second;
    return Status::kOk;
  }
  std::vector<uint8_t> net(card + sizeof head, card + sizeof head + head.len);
  TORUSMPI_CHECK(pml::net::dynamic_connect(job, head.job, head.rank, net, index, error));
  known()[{head.job, head.rank}] = *index;
  std::vector<std::pair<uint64_t, int>>& names = named();
  const size_t at = static_cast<size_t>(*index - job.size);
  if (names.size() <= at) names.resize(at + 1);
  names[at] = {head.job, head.rank};
  return Status::kOk;
}

Status allgather_cards(Comm* c, const std::vector<uint8_t>& mine, std::vector<uint8_t>* all) {
  all->assign(kCardBytes * c->size, 0);
  coll::Args a;
  a.coll = coll::Coll::kAllgather;
  a.count = kCardBytes;
  coll::RunArgs r;
  r.send = mine.data();
  r.recv = all->data();
  return run_tagged(*c, agreement_tag(c), a, r);
}

// The status word of step 3: what failed at the root, for every process of its group.
struct Outcome {
  int32_t status = 0;  // Status
  char text[400] = {};
};

Status share_outcome(Comm* c, int root, Status s, std::string* error) {
  Outcome o;
  if (c->rank == root) {
    o.status = static_cast<int32_t>(s);
    std::snprintf(o.text, sizeof o.text, "%s", error->c_str());
  }
  Status b = bcast_bytes(*c, agreement_tag(c), root, &o, sizeof o);
  if (b != Status::kOk) {
    *error = std::string("the root's result did not reach every process: ") + status_string(b);
    return b;
  }
  *error = o.text;
  return static_cast<Status>(o.status);
}

// Steps 1 to 5 for every process of c, `fd` being the root's connected socket (-1 elsewhere, and
// at a root whose step 2 failed: then `failed` holds why). `connector` orders the roots' sends.
Status join_groups(Comm* c, int root, int fd, bool connector, Status failed,
                   const std::vector<uint8_t>& local_cards, std::string* error, Comm** made) {
  const bool is_root = c->rank == root;
  const double deadline = progress::now_seconds() + kReplyTimeoutS;
  std::vector<uint8_t> remote;
  Status s = failed;
  if (is_root && s == Status::kOk) {
    // The connecting root speaks first: a large group's cards never fill both sockets at once.
    const size_t max = kCardBytes * (size_t{1} << 20);
    if (connector) {
      s = send_msg(fd, local_cards, deadline, error);
      if (s == Status::kOk) s = recv_msg(fd, &remote, max, deadline, error);
    } else {
      s = recv_msg(fd, &remote, max, deadline, error);
      if (s == Status::kOk) s = send_msg(fd, local_cards, deadline, error);
    }
    if (s == Status::kOk && (remote.empty() || remote.size() % kCardBytes != 0)) {
      *error = "the other side sent no group";
      s = Status::kErrPeerGone;
    }
    if (s != Status::kOk) *error = "exchange with the other side's root: " + *error;
  }
  TORUSMPI_CHECK(share_outcome(c, root, s, error));
  uint64_t n = remote.size() / kCardBytes;
  TORUSMPI_CHECK(bcast_bytes(*c, agreement_tag(c), root, &n, sizeof n));
  remote.resize(n * kCardBytes);
  TORUSMPI_CHECK(bcast_bytes(*c, agreement_tag(c), root, remote.data(), remote.size()));

  // Context ids: OR within the group, the roots swap and combine, the root gives the result back.
  OrReduce reduce = [c, root, fd, connector, is_root, error](std::vector<uint64_t>* words) {
    TORUSMPI_CHECK(or_words(*c, agreement_tag(c), words));
    Status r = Status::kOk;
    if (is_root) {
      const double until = progress::now_seconds() + kReplyTimeoutS;
      std::vector<uint8_t> out(words->size() * sizeof(uint64_t)), in;
      std::memcpy(out.data(), words->data(), out.size());
      if (connector) {
        r = send_msg(fd, out, until, error);
        if (r == Status::kOk) r = recv_msg(fd, &in, out.size(), until, error);
      } else {
        r = recv_msg(fd, &in, out.size(), until, error);
        if (r == Status::kOk) r = send_msg(fd, out, until, error);
      }
      if (r == Status::kOk && in.size() != out.size()) r = Status::kErrPeerGone;
      if (r == Status::kOk) {
        for (size_t i = 0; i < words->size(); ++i) {
          uint64_t w;
          std::memcpy(&w, in.data() + i * sizeof w, sizeof w);
          (*words)[i] |= w;
        }
      }
    }
    std::string why = *error;
    TORUSMPI_CHECK(share_outcome(c, root, r, &why));
    return bcast_bytes(*c, agreement_tag(c), root, words->data(), words->size() * sizeof(uint64_t));
  };
  uint32_t contexts[2];
  s = contexts_agree(reduce, 2, contexts);
  if (s != Status::kOk) {
    if (error->empty()) *error = std::string("no context id agreed: ") + status_string(s);
    return s;
  }
  std::vector<int> remote_ranks(n);
  for (uint64_t i = 0; i < n; ++i) {
    Status p = peer_of(remote.data() + i * kCardBytes, &remote_ranks[i], error);
    if (p != Status::kOk) {
      context_release(contexts[0]);
      context_release(contexts[1]);
      return p;
    }
  }
  Comm* inter = comm_new(*c, comm_members(*c), c->rank, contexts[0]);
  comm_make_inter(inter, std::move(remote_ranks), contexts[1]);
  *made = inter;
  return Status::kOk;
}

// MPI_Comm_accept / MPI_Comm_connect for every process of c; port matters at the root only.
// deadline (0: none) bounds the wait for the other side at the root. A root that found its
// arguments wrong passes `refused` (and *error): its group fails with it.
Status accept_or_connect(Comm* c, int root, bool accepting, const std::string& port,
                         double deadline, Comm** made, std::string* error,
                         Status refused = Status::kOk, const std::string& spawned = "") {
  std::vector<uint8_t> mine, cards;
  Status s = my_card(&mine, error);
  // Every process takes part in the allgather, failed or not, so none waits for another.
  if (s != Status::kOk) mine.assign(kCardBytes, 0);
  Status g = allgather_cards(c, mine, &cards);
  if (g != Status::kOk) {
    *error = std::string("gathering the group's cards: ") + status_string(g);
    return g;
  }
  // A process without a card makes the group fail as one.
  uint64_t bad = s != Status::kOk;
  std::vector<uint64_t> any{bad};
  TORUSMPI_CHECK(or_words(*c, agreement_tag(c), &any));
  if (any[0] != 0) {
    if (s == Status::kOk) *error = "a process of the group could not open its network transport";
    return s != Status::kOk ? s : Status::kErrUnsupported;
  }
  int fd = -1;
  Status step2 = Status::kOk;
  if (c->rank == root) {
    step2 = refused;
    if (step2 == Status::kOk) {
      step2 = accepting ? accept_on(port, deadline, &fd, error, spawned)
                        : connect_to(port, deadline, &fd, error);
    }
  }
  s = join_groups(c, root, fd, !accepting, step2, cards, error, made);
  if (fd >= 0) close(fd);
  return s;
}

int fail(const char* fn, MPI_Comm comm, int cls, const std::string& why) {
  return raise_error(comm, cls, fn, "%s", why.c_str());
}

int class_for(Status s, int otherwise) {
  switch (s) {
    case Status::kErrNoMem:
      return MPI_ERR_NO_MEM;
    case Status::kErrInternal:
      return MPI_ERR_INTERN;
    case Status::kErrUnsupported:
      return MPI_ERR_UNSUPPORTED_OPERATION;
    default:
      return otherwise;
  }
}

// Spawn and accept/connect run on an intracommunicator, led by its rank `root`.
int check_intra_root(const char* fn, MPI_Comm comm, int root, Comm** c) {
  if (int err = check_comm(fn, comm, c)) return err;
  if ((*c)->is_inter()) {
    return raise_error(comm, MPI_ERR_COMM, fn, "comm argument is an intercommunicator");
  }
  if (root < 0 || root >= (*c)->size) {
    return raise_error(comm, MPI_ERR_ROOT, fn, "root argument is %d, not a rank of comm (size %d)",
                       root, (*c)->size);
  }
  return MPI_SUCCESS;
}

int check_port_name(const char* fn, MPI_Comm comm, const char* port_name) {
  if (port_name == nullptr) return raise_error(comm, MPI_ERR_ARG, fn, "port_name argument is NULL");
  return MPI_SUCCESS;
}

int accept_connect(const char* fn, bool accepting, const char* port_name, MPI_Info info, int root,
                   MPI_Comm comm, MPI_Comm* newcomm) {
  if (int err = require_active(fn)) return err;
  Comm* c;
  if (int err = check_intra_root(fn, comm, root, &c)) return err;
  if (newcomm == nullptr) return raise_error(comm, MPI_ERR_ARG, fn, "newcomm argument is NULL");
  (void)info;
  std::string port, error;
  Status refused = Status::kOk;
  if (c->rank == root) {
    if (int err = check_port_name(fn, comm, port_name)) return err;
    port = port_name;
    std::string host, key;
    int tcp;
    // The group must fail with its root, which says why in step 3.
    if (!parse_port(port, &host, &tcp, &key)) {
      error = "port_name \"" + port + "\" is not a port name of torusmpi (MPI_Open_port)";
      refused = Status::kErrArg;
    }
  }
  Comm* made = nullptr;
  Status s = accept_or_connect(c, root, accepting, port, 0, &made, &error, refused);
  if (s != Status::kOk) {
    *newcomm = MPI_COMM_NULL;
    return fail(fn, comm, class_for(s, MPI_ERR_PORT), error);
  }
  *newcomm = made->handle;
  return MPI_SUCCESS;
}

// --- Spawn

// Whether `command` names a program this process could start: a path with a slash is taken as
// it is (relative ones from wdir, or this directory), a bare name is looked for along PATH. Open
// MPI 4.1's mpirun ends the whole job, parents included, when it cannot start a spawned program,
// so such a command is refused here, before the launcher sees it. (Hosts are assumed to share the
// file system: a program present on another host only is refused too.)
bool runnable(const std::string& command, const std::string& wdir) {
  if (command.find('/') != std::string::npos) {
    std::string path = command;
    if (command[0] != '/' && !wdir.empty()) path = wdir + "/" + command;
    return access(path.c_str(), X_OK) == 0;
  }
  const char* env = std::getenv("PATH");
  const std::string path = env != nullptr ? env : "/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t colon = path.find(':', pos);
    if (colon == std::string::npos) colon = path.size();
    std::string dir = path.substr(pos, colon - pos);
    if (dir.empty()) dir = ".";
    if (access((dir + "/" + command).c_str(), X_OK) == 0) return true;
    pos = colon + 1;
  }
  return false;
}

// One command's info keys: host, wdir, env (newline-separated NAME=value entries).
void read_info(MPI_Info info, boot::SpawnApp* app) {
  if (info == MPI_INFO_NULL) return;
  std::string v;
  if (info_value(info, "host", &v)) app->host = v;
  if (info_value(info, "wdir", &v)) {
    // Relative to the caller's directory, not the launcher's.
    if (!v.empty() && v[0] != '/') {
      char cwd[4096];
      if (getcwd(cwd, sizeof cwd) != nullptr) v = std::string(cwd) + "/" + v;
    }
    app->wdir = v;
  }
  if (info_value(info, "env", &v)) {
    size_t pos = 0;
    while (pos <= v.size()) {
      size_t nl = v.find('\n', pos);
      if (nl == std::string::npos) nl = v.size();
      std::string entry = v.substr(pos, nl - pos);
      if (entry.find('=') != std::string::npos) app->env.push_back(entry);
      pos = nl + 1;
    }
  }
}

int spawn(const char* fn, int count, char* commands[], char** argvs[], const int maxprocs[],
          const MPI_Info infos[], int root, MPI_Comm comm, MPI_Comm* intercomm, int errcodes[],
          int my_total) {
  Comm* c;
  if (int err = check_intra_root(fn, comm, root, &c)) return err;
  if (intercomm == nullptr) return raise_error(comm, MPI_ERR_ARG, fn, "intercomm argument is NULL");
  *intercomm = MPI_COMM_NULL;
  auto fill = [&](int code) {
    if (errcodes != MPI_ERRCODES_IGNORE) {
      for (int i = 0; i < my_total; ++i) errcodes[i] = code;
    }
  };
  std::string error, port, nspace;
  Status s = Status::kOk;
  int cls = MPI_ERR_SPAWN;
  if (c->rank == root) {
    std::vector<boot::SpawnApp> apps;
    for (int i = 0; i < count && s == Status::kOk; ++i) {
      if (commands == nullptr || commands[i] == nullptr || commands[i][0] == '\0') {
        error = "command " + std::to_string(i) + " is NULL or empty";
        s = Status::kErrArg;
        cls = MPI_ERR_ARG;
        break;
      }
      if (maxprocs[i] <= 0) {
        error = "maxprocs for command " + std::to_string(i) + " is " + std::to_string(maxprocs[i]) +
                ": at least 1 process";
        s = Status::kErrArg;
        cls = MPI_ERR_ARG;
        break;
      }
      boot::SpawnApp app;
      app.command = commands[i];
      app.procs = maxprocs[i];
      if (argvs != MPI_ARGVS_NULL && argvs[i] != MPI_ARGV_NULL) {
        for (char** a = argvs[i]; *a != nullptr; ++a) app.args.push_back(*a);
      }
      read_info(infos != nullptr ? infos[i] : MPI_INFO_NULL, &app);
      struct stat dir;
      if (!app.wdir.empty() && (stat(app.wdir.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode))) {
        error = "the wdir of command " + std::to_string(i) + ", " + app.wdir +
                ", is not a directory: nothing was spawned";
        s = Status::kErrArg;
        break;
      }
      if (!runnable(app.command, app.wdir)) {
        error = "command " + std::to_string(i) + ", " + app.command +
                ", is not a program that can be started (" + strerror(errno) +
                "): nothing was spawned";
        s = Status::kErrArg;
        break;
      }
      apps.push_back(std::move(app));
    }
    if (s == Status::kOk) s = open_port(&port, &error);
    if (s == Status::kOk) {
      for (boot::SpawnApp& app : apps) app.env.push_back(std::string(kParentPortVar) + "=" + port);
      {
        progress::Unlocked unlocked;  // the launcher starts the processes meanwhile
        s = boot::spawn(apps, &nspace, &error);
      }
      if (s != Status::kOk) {
        error = "spawning " + std::string(commands[0]) + (count > 1 ? " and others" : "") + ": " +
                error;
      }
    }
  }
  Status shared = share_outcome(c, root, s, &error);
  if (shared != Status::kOk) {
    if (!port.empty()) close_port(port);
    fill(MPI_ERR_SPAWN);
    return fail(fn, comm, cls, error);
  }
  Comm* made = nullptr;
  const double wait = static_cast<double>(params::boot_timeout_s());
  const double deadline = wait > 0 ? progress::now_seconds() + wait : 0;
  s = accept_or_connect(c, root, true, port, deadline, &made, &error, Status::kOk, nspace);
  if (!port.empty()) close_port(port);
  if (s != Status::kOk) {
    fill(MPI_ERR_SPAWN);
    if (s == Status::kErrTimeout) {
      error = "none connected within TORUSMPI_BOOT_TIMEOUT=" +
              std::to_string(params::boot_timeout_s()) + " s";
    }
    return fail(fn, comm, MPI_ERR_SPAWN, "the spawned processes did not connect: " + error);
  }
  fill(MPI_SUCCESS);
  *intercomm = made->handle;
  return MPI_SUCCESS;
}

}  // namespace

void dynamic_init(const char* fn) {
  const char* port = std::getenv(kParentPortVar);
  if (port == nullptr) return;
  const std::string name = port;
  // Not for this process's own children, which get their own.
  unsetenv(kParentPortVar);
  Runtime& rt = runtime();
  Comm* made = nullptr;
  std::string error;
  const double wait = static_cast<double>(params::boot_timeout_s());
  const double deadline = wait > 0 ? progress::now_seconds() + wait : 0;
  Status s = accept_or_connect(&rt.world, 0, false, name, deadline, &made, &error);
  if (s != Status::kOk) {
    boot::abort_job(MPI_ERR_SPAWN, std::string(fn) +
                                       ": this process was spawned, but cannot connect to its " +
                                       "parents: " + error);
  }
  made->name = "the parent intercommunicator";
  g_parent = made;
  g_parent_handle = made->handle;
}

bool process_before(int a, int b) { return name_of(a) < name_of(b); }

MPI_Comm dynamic_parent() {
  if (g_parent == nullptr || comm_impl(g_parent_handle) != g_parent) return MPI_COMM_NULL;
  return g_parent_handle;
}

}  // namespace torusmpi::mpi

using torusmpi::Status;
using torusmpi::mpi::Comm;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;

int PMPI_Comm_spawn(const char* command, char* argv[], int maxprocs, MPI_Info info, int root,
                    MPI_Comm comm, MPI_Comm* intercomm, int array_of_errcodes[]) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_spawn";
  if (int err = require_active(kFn)) return err;
  char* commands[1] = {const_cast<char*>(command)};
  char** argvs[1] = {argv};
  int procs[1] = {maxprocs};
  MPI_Info infos[1] = {info};
  return torusmpi::mpi::spawn(kFn, 1, commands, argv == MPI_ARGV_NULL ? MPI_ARGVS_NULL : argvs,
                              procs, infos, root, comm, intercomm, array_of_errcodes,
                              maxprocs > 0 ? maxprocs : 0);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_spawn);

int PMPI_Comm_spawn_multiple(int count, char* array_of_commands[], char** array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm* intercomm,
                             int array_of_errcodes[]) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_spawn_multiple";
  if (int err = require_active(kFn)) return err;
  Comm* c;
  if (int err = torusmpi::mpi::check_comm(kFn, comm, &c)) return err;
  int total = 0;
  if (c->rank == root) {
    if (count <= 0) {
      return raise_error(comm, MPI_ERR_ARG, kFn, "count argument is %d: at least 1 command", count);
    }
    if (array_of_commands == nullptr || array_of_maxprocs == nullptr) {
      return raise_error(comm, MPI_ERR_ARG, kFn, "array_of_%s argument is NULL",
                         array_of_commands == nullptr ? "commands" : "maxprocs");
    }
  }
  if (count > 0 && array_of_maxprocs != nullptr) {
    for (int i = 0; i < count; ++i) total += array_of_maxprocs[i] > 0 ? array_of_maxprocs[i] : 0;
  }
  return torusmpi::mpi::spawn(kFn, count, array_of_commands, array_of_argv, array_of_maxprocs,
                              array_of_info, root, comm, intercomm, array_of_errcodes, total);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_spawn_multiple);

int PMPI_Open_port(MPI_Info info, char* port_name) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Open_port";
  if (int err = require_active(kFn)) return err;
  (void)info;
  if (port_name == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "port_name argument is NULL");
  std::string name, error;
  if (Status s = torusmpi::mpi::open_port(&name, &error); s != Status::kOk)
    return raise_error(nullptr, MPI_ERR_PORT, kFn, "%s", error.c_str());
  torusmpi::mpi::copy_out(name, port_name, MPI_MAX_PORT_NAME);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Open_port);

int PMPI_Close_port(const char* port_name) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Close_port";
  if (int err = require_active(kFn)) return err;
  if (port_name == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "port_name argument is NULL");
  if (torusmpi::mpi::ports().count(port_name) == 0) {
    return raise_error(nullptr, MPI_ERR_PORT, kFn,
                       "port_name \"%s\" is not a port this process has open", port_name);
  }
  torusmpi::mpi::close_port(port_name);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Close_port);

int PMPI_Comm_accept(const char* port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm* newcomm) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::accept_connect("MPI_Comm_accept", true, port_name, info, root, comm,
                                       newcomm);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_accept);

int PMPI_Comm_connect(const char* port_name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm* newcomm) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::accept_connect("MPI_Comm_connect", false, port_name, info, root, comm,
                                       newcomm);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_connect);

namespace {

// The name service's calls take both names (a lookup's port_name is where the result goes).
int check_names(const char* fn, const char* service_name, const void* port_name) {
  if (service_name != nullptr && port_name != nullptr) return MPI_SUCCESS;
  return raise_error(nullptr, MPI_ERR_ARG, fn, "%s argument is NULL",
                     service_name == nullptr ? "service_name" : "port_name");
}

// A name-service call the launcher refused: unsupported by it, or `cls` with its reason.
int name_failed(const char* fn, Status s, int cls, const char* what, const char* service_name,
                const std::string& error) {
  return raise_error(nullptr, s == Status::kErrUnsupported ? MPI_ERR_UNSUPPORTED_OPERATION : cls,
                     fn, "%s \"%s\": %s", what, service_name, error.c_str());
}

}  // namespace

int PMPI_Publish_name(const char* service_name, MPI_Info info, const char* port_name) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Publish_name";
  if (int err = require_active(kFn)) return err;
  (void)info;
  if (int err = check_names(kFn, service_name, port_name)) return err;
  std::string error;
  Status s;
  {
    torusmpi::progress::Unlocked unlocked;
    s = torusmpi::boot::publish_name(service_name, port_name, &error);
  }
  if (s != Status::kOk)
    return name_failed(kFn, s, MPI_ERR_SERVICE, "cannot publish", service_name, error);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Publish_name);

int PMPI_Lookup_name(const char* service_name, MPI_Info info, char* port_name) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Lookup_name";
  if (int err = require_active(kFn)) return err;
  (void)info;
  if (int err = check_names(kFn, service_name, port_name)) return err;
  std::string error, port;
  Status s;
  {
    torusmpi::progress::Unlocked unlocked;
    s = torusmpi::boot::lookup_name(service_name, &port, &error);
  }
  if (s != Status::kOk) {
    return name_failed(kFn, s, MPI_ERR_NAME, "no port is published as", service_name, error);
  }
  torusmpi::mpi::copy_out(port, port_name, MPI_MAX_PORT_NAME);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Lookup_name);

int PMPI_Unpublish_name(const char* service_name, MPI_Info info, const char* port_name) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Unpublish_name";
  if (int err = require_active(kFn)) return err;
  (void)info;
  if (int err = check_names(kFn, service_name, port_name)) return err;
  std::string error;
  Status s;
  {
    torusmpi::progress::Unlocked unlocked;
    s = torusmpi::boot::unpublish_name(service_name, &error);
  }
  if (s != Status::kOk)
    return name_failed(kFn, s, MPI_ERR_SERVICE, "cannot unpublish", service_name, error);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Unpublish_name);

int PMPI_Comm_join(int fd, MPI_Comm* intercomm) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_join";
  if (int err = require_active(kFn)) return err;
  if (intercomm == nullptr)
    return raise_error(MPI_COMM_SELF, MPI_ERR_ARG, kFn, "intercomm argument is NULL");
  *intercomm = MPI_COMM_NULL;
  if (fd < 0) return raise_error(MPI_COMM_SELF, MPI_ERR_ARG, kFn, "fd argument is %d", fd);
  namespace m = torusmpi::mpi;
  std::string mine, theirs, error;
  Status s = m::open_port(&mine, &error);
  if (s == Status::kOk) {
    // The application's socket may be blocking: its end is waited on with poll, never blocked in.
    std::vector<uint8_t> in;
    s = m::send_msg(fd, m::as_bytes(mine), 0, &error);
    if (s == Status::kOk) s = m::recv_msg(fd, &in, MPI_MAX_PORT_NAME, 0, &error);
    if (s == Status::kOk) theirs.assign(in.begin(), in.end());
    if (s == Status::kOk && theirs == mine) {
      error = "both ends of fd are this process";
      s = Status::kErrArg;
    }
  }
  if (s != Status::kOk) {
    if (!mine.empty()) m::close_port(mine);
    return raise_error(MPI_COMM_SELF, MPI_ERR_ARG, kFn, "swapping port names over fd %d: %s", fd,
                       error.c_str());
  }
  const bool accepting = mine < theirs;
  Comm* made = nullptr;
  s = m::accept_or_connect(&m::runtime().self, 0, accepting, accepting ? mine : theirs, 0, &made,
                           &error);
  m::close_port(mine);
  if (s != Status::kOk) {
    return raise_error(MPI_COMM_SELF, m::class_for(s, MPI_ERR_OTHER), kFn, "%s", error.c_str());
  }
  *intercomm = made->handle;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_join);

int PMPI_Comm_disconnect(MPI_Comm* comm) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_disconnect";
  if (int err = require_active(kFn)) return err;
  if (comm == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "comm argument is NULL");
  Comm* c;
  if (int err = torusmpi::mpi::check_comm(kFn, *comm, &c)) return err;
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) {
    return raise_error(*comm, MPI_ERR_COMM, kFn, "comm argument is %s, which cannot be freed",
                       *comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
  }
  // Every process of both groups gets here: whatever was sent on comm before has arrived (each
  // pair's messages keep their order, and the barrier's come last).
  if (int err = PMPI_Barrier(*comm); err != MPI_SUCCESS) return err;
  if (torusmpi::mpi::g_parent == c) {
    torusmpi::mpi::g_parent = nullptr;
    torusmpi::mpi::g_parent_handle = MPI_COMM_NULL;
  }
  return PMPI_Comm_free(comm);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_disconnect);
