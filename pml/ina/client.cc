#include "pml/ina/client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>

#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"

namespace torusmpi::pml::ina {
namespace {

// A block without a result is sent again after this, then twice as long each time, up to
// kRtoMaxS. Results wait for the group's slowest member, which may still be in its instance's
// stages for milliseconds: resending sooner only loads the switch with duplicates.
constexpr double kRtoS = 0.02;
constexpr double kRtoMaxS = 0.2;
// A block the switch had no slot for is offered again after this.
constexpr double kBusyS = 0.001;
// The hello at MPI_Init: tries, each waiting this long for the answer.
constexpr int kHelloTries = 3;
constexpr int kHelloWaitMs = 100;

struct Key {
  uint64_t group, call;
  bool operator==(const Key& o) const { return group == o.group && call == o.call; }
};
struct KeyHash {
  size_t operator()(const Key& k) const { return k.group * 0x9e3779b97f4a7c15ull ^ k.call; }
};

// What a rank keeps of one group (client.h): its open calls and the results it keeps.
struct GroupState {
  std::multiset<uint64_t> open;  // started and not finished (failed ones: until settle())
  std::map<uint64_t, Kept> kept;
  std::set<uint64_t> forgotten;  // kept, then dropped for TORUSMPI_SWITCH_KEEP
};

struct State {
  int fd = -1;
  bool in_use = false;
  bool available = false;
  bool warned = false;
  uint64_t job = 0;
  int poll_id = 0;
  std::string address;
  std::string why_not;    // TORUSMPI_SWITCH's fault, when init() found one
  double dead_after = 3;  // seconds without a word from the switch while blocks wait
  double last_heard = 0;
  uint32_t window = 16;
  int epoll_fd = -1;  // wait_fd(): the socket and the descriptors added to it
  std::vector<int> epoll_also;
  std::unordered_map<Key, Aggregation*, KeyHash> active;
  std::vector<Aggregation*> order;  // active, in start order (sending is fair across them)
  // This rank's source index in each group it used: a result that comes again after its run
  // ended is still acknowledged.
  std::unordered_map<uint64_t, uint16_t> source_in;
  std::unordered_map<uint64_t, GroupState> groups;
  std::deque<Key> kept_order;  // in the order kept (entries dropped since are skipped)
  size_t kept_bytes = 0;
  size_t keep_limit = 0;
  std::vector<std::vector<uint8_t>> spare;  // dropped results' buffers, for the next ones
  Counters counters;
  uint8_t buf[sizeof(PacketHeader) + kMaxResult + 64];
};

State& st() {
  static State* s = new State;  // never destroyed: finalize may run from atexit
  return *s;
}

// What one block of `a` holds: bytes of src per block, and the number of blocks (the same at
// every member, which all have the same bytes).
size_t per_block(const Aggregation& a) {
  switch (a.op) {
    case AggOp::kBarrier:
      return 0;
    case AggOp::kGather:
      return std::min<size_t>(kMaxPayload, kMaxResult / std::max<uint16_t>(a.sources, 1));
    default: {
      const size_t e = elem_size(a.elem);
      return e == 0 ? 0 : kMaxPayload / e * e;
    }
  }
}

// Cuts a into blocks of at most per_block() bytes: a reduce-scatter's (parts) within each
// member's part, which that member owns; the others' blocks every source needs.
void lay_out(Aggregation* a) {
  a->blocks_.clear();
  if (a->op == AggOp::kBarrier) {
    a->blocks_.push_back(Aggregation::Block{});
    return;
  }
  const size_t per = per_block(*a);
  if (per == 0) return;
  auto cut = [&](size_t at, size_t bytes, uint16_t owner) {
    for (size_t off = 0; off < bytes; off += per) {
      Aggregation::Block k;
      k.offset = at + off;
      k.len = static_cast<uint32_t>(std::min(per, bytes - off));
      k.owner = owner;
      a->blocks_.push_back(k);
    }
  };
  if (a->parts == nullptr) {
    cut(0, a->bytes, kEverySource);
    return;
  }
  size_t at = 0;
  for (uint16_t m = 0; m < a->sources; ++m) {
    cut(at, a->parts[m], m);
    at += a->parts[m];
  }
}

PacketHeader header_of(const Aggregation& a, PacketType type, uint32_t block) {
  PacketHeader h;
  h.type = type;
  h.elem = a.elem;
  h.op = a.op;
  h.job = st().job;
  h.group = a.group;
  h.call = a.call;
  h.block = block;
  h.sources = a.sources;
  h.source = a.source;
  const std::multiset<uint64_t>& open = st().groups[a.group].open;
  h.floor = open.empty() ? a.call : *open.begin();
  return h;
}

// The bytes of a's whole result, in dst.
size_t result_size(const Aggregation& a) {
  if (a.op == AggOp::kBarrier) return 0;
  return a.op == AggOp::kGather ? a.bytes * a.sources : a.bytes;
}

void drop_kept(GroupState& g, std::map<uint64_t, Kept>::iterator it) {
  State& s = st();
  s.kept_bytes -= it->second.bytes.size();
  if (s.spare.size() < 8) s.spare.push_back(std::move(it->second.bytes));
  g.kept.erase(it);
}

// Every member of the group has finished every call below `floor`: nobody will ask for those.
void learn_floor(uint64_t group, uint64_t floor) {
  State& s = st();
  auto it = s.groups.find(group);
  if (it == s.groups.end()) return;
  GroupState& g = it->second;
  while (!g.kept.empty() && g.kept.begin()->first < floor) drop_kept(g, g.kept.begin());
  g.forgotten.erase(g.forgotten.begin(), g.forgotten.lower_bound(floor));
}

// a's result, for members that a dying switch leaves without theirs; the oldest go beyond
// TORUSMPI_SWITCH_KEEP. A reduce-scatter's member has its own part of the result only, which
// nobody else needs: it keeps its contribution, from which the others can make theirs.
void keep_result(const Aggregation& a) {
  State& s = st();
  if (a.sources < 2) return;  // nobody to ask for it
  Kept k;
  if (!s.spare.empty()) {
    k.bytes = std::move(s.spare.back());
    s.spare.pop_back();
  }
  k.contribution = a.parts != nullptr;
  const size_t n = k.contribution ? a.bytes : result_size(a);
  k.bytes.resize(n);
  if (n > 0) std::memcpy(k.bytes.data(), k.contribution ? a.src : a.dst, n);
  s.groups[a.group].kept[a.call] = std::move(k);
  s.kept_bytes += n;
  s.kept_order.push_back(Key{a.group, a.call});
  while (!s.kept_order.empty()) {
    const Key k = s.kept_order.front();
    auto g = s.groups.find(k.group);
    auto it = g == s.groups.end() ? decltype(g->second.kept.end()){} : g->second.kept.find(k.call);
    const bool there = g != s.groups.end() && it != g->second.kept.end();
    if (there && s.kept_bytes <= s.keep_limit) break;
    s.kept_order.pop_front();
    if (!there) continue;  // dropped by a floor already
    g->second.forgotten.insert(k.call);
    drop_kept(g->second, it);
  }
}

void close_call(uint64_t group, uint64_t call) {
  State& s = st();
  auto g = s.groups.find(group);
  if (g == s.groups.end()) return;
  auto it = g->second.open.find(call);
  if (it != g->second.open.end()) g->second.open.erase(it);
}

void send_packet(const PacketHeader& h, const void* payload, size_t len) {
  iovec iov[2] = {{const_cast<PacketHeader*>(&h), sizeof h}, {const_cast<void*>(payload), len}};
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = len > 0 ? 2 : 1;
  // A full socket buffer drops it, as the network would: the block is sent again when late.
  ssize_t ignored = sendmsg(st().fd, &m, MSG_DONTWAIT);
  (void)ignored;
}

void send_block(Aggregation* a, uint32_t b, double now) {
  State& s = st();
  Aggregation::Block& k = a->blocks_[b];
  const size_t len = k.len;
  PacketHeader h = header_of(*a, PacketType::kContribute, b);
  h.count = a->op == AggOp::kGather
                ? static_cast<uint32_t>(len)
                : static_cast<uint32_t>(len / std::max<size_t>(elem_size(a->elem), 1));
  h.payload = static_cast<uint32_t>(len);
  h.owner = k.owner;
  send_packet(h, a->src + k.offset, len);
  if (k.tries == 0) {
    ++s.counters.blocks;
  } else {
    ++s.counters.retransmits;
  }
  s.counters.bytes_out += len;
  double rto = kRtoS;
  for (int i = 0; i < k.tries && rto < kRtoMaxS; ++i) rto *= 2;
  ++k.tries;
  k.sent = now;
  k.due = now + std::min(rto, kRtoMaxS);
}

// The end of an aggregation: a result is kept and its call closed; a failed one's call stays
// open until the executor settles it.
void done(Aggregation* a) {
  if (a->error == Status::kOk) {
    keep_result(*a);
    close_call(a->group, a->call);
  }
  if (a->on_complete != nullptr) a->on_complete(a);
}

void finish(Aggregation* a) {
  State& s = st();
  s.active.erase(Key{a->group, a->call});
  s.order.erase(std::find(s.order.begin(), s.order.end(), a));
  done(a);
}

// A block answered (result or error).
void answered(Aggregation* a, uint32_t b) {
  Aggregation::Block& k = a->blocks_[b];
  k.done = true;
  --a->left_;
  if (k.sent > 0) --a->in_flight_;
}

void fail(Aggregation* a, const std::string& why) {
  if (a->error == Status::kOk) {
    a->error = Status::kErrTimeout;
    a->why = why;
  }
}

void on_result(Aggregation* a, const PacketHeader& h, const uint8_t* payload) {
  const Aggregation::Block& k = a->blocks_[h.block];
  const bool mine = k.owner == kEverySource || k.owner == a->source;
  const size_t want = a->op == AggOp::kBarrier  ? 0
                      : a->op == AggOp::kGather ? size_t{k.len} * a->sources
                      : mine                    ? k.len
                                                : 0;
  if (h.payload != want) return;  // not this run's shape: ignored, the block is sent again
  st().counters.bytes_in += h.payload;
  if (a->op == AggOp::kGather) {
    for (uint16_t m = 0; m < a->sources; ++m) {
      std::memcpy(a->dst + m * a->bytes + k.offset, payload + m * k.len, k.len);
    }
  } else if (want > 0) {
    std::memcpy(a->dst + k.offset, payload, want);
  }
  answered(a, h.block);
}

void on_error(Aggregation* a, const PacketHeader& h, const uint8_t* payload) {
  std::string missing;
  if (h.payload == sizeof(ErrorBody)) {
    ErrorBody body;
    std::memcpy(&body, payload, sizeof body);
    for (uint32_t m = 0; m < a->sources; ++m) {
      if (body.missing[m / 8] & (1u << (m % 8)))
        missing += (missing.empty() ? "" : ", ") + std::to_string(m);
    }
  }
  ++st().counters.timeouts;
  fail(a, "block " + std::to_string(h.block) + " aged out at the switch" +
              (missing.empty() ? std::string() : " (members " + missing + " had not contributed)"));
  answered(a, h.block);
}

// Returns whether anything came.
bool receive(double now) {
  State& s = st();
  bool any = false;
  for (;;) {
    ssize_t n = recv(s.fd, s.buf, sizeof s.buf, MSG_DONTWAIT);
    if (n < 0) break;
    any = true;
    if (static_cast<size_t>(n) < sizeof(PacketHeader)) continue;
    PacketHeader h;
    std::memcpy(&h, s.buf, sizeof h);
    if (h.magic != kMagic || h.version != kVersion || h.job != s.job ||
        sizeof h + h.payload != static_cast<size_t>(n)) {
      continue;
    }
    s.last_heard = now;
    auto it = s.active.find(Key{h.group, h.call});
    Aggregation* a = it == s.active.end() ? nullptr : it->second;
    const bool ours = a != nullptr && h.block < a->blocks_.size() && !a->blocks_[h.block].done;
    switch (h.type) {
      case PacketType::kResult: {
        if (ours) on_result(a, h, s.buf + sizeof h);
        learn_floor(h.group, h.floor);
        // Acknowledged even when it came again (our first acknowledgement was lost), so that
        // the switch frees the slot.
        auto known = s.source_in.find(h.group);
        if (known == s.source_in.end()) break;
        PacketHeader ack = h;
        ack.type = PacketType::kAck;
        ack.source = known->second;
        ack.payload = 0;
        send_packet(ack, nullptr, 0);
        break;
      }
      case PacketType::kError:
        if (ours) on_error(a, h, s.buf + sizeof h);
        break;
      case PacketType::kBusy:
        if (ours) a->blocks_[h.block].due = now + kBusyS;
        break;
      default:
        break;
    }
    if (a != nullptr && a->left_ == 0) finish(a);
  }
  return any;
}

// The switch said nothing for dead_after while blocks waited: it is gone.
void declare_dead(double now) {
  State& s = st();
  if (!s.warned) {
    log::warn(
        "the switch at %s stopped answering (%.1f s): collectives between instances go on "
        "without in-network aggregation",
        s.address.c_str(), now - s.last_heard);
    s.warned = true;
  }
  s.available = false;
  while (!s.order.empty()) {
    Aggregation* a = s.order.front();
    for (uint32_t b = 0; b < a->blocks_.size(); ++b) {
      if (!a->blocks_[b].done) {
        ++s.counters.timeouts;
        answered(a, b);
      }
    }
    fail(a, "the switch at " + s.address + " stopped answering");
    finish(a);
  }
}

int poll_switch(void*) {
  State& s = st();
  if (s.order.empty()) return 0;
  const double now = progress::now_seconds();
  const size_t before = s.order.size();
  // Nothing from the switch: it shares this machine's cores (it stands in for hardware of its
  // own), and a rank spinning for its answers would keep it from giving them (1 MiB at 2 ranks
  // on 2 cores took 4.6 ms spinning, 1.0 ms yielding).
  if (!receive(now)) sched_yield();
  // Send: new blocks while the window has room, late ones again.
  for (Aggregation* a : s.order) {
    while (a->in_flight_ < s.window && a->next_ < a->blocks_.size()) {
      send_block(a, a->next_++, now);
      ++a->in_flight_;
    }
    for (uint32_t b = 0; b < a->next_; ++b) {
      Aggregation::Block& k = a->blocks_[b];
      if (!k.done && now >= k.due) send_block(a, b, now);
    }
  }
  // A late member does not keep the switch silent for long: it ages the record out and says so.
  if (!s.order.empty() && now - s.last_heard > s.dead_after) declare_dead(now);
  return static_cast<int>(before - s.order.size());
}

// "a.b.c.d:port" on the loopback.
bool parse_address(const std::string& text, sockaddr_in* out, std::string* why) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    *why = "not ADDR:PORT";
    return false;
  }
  const std::string host = text.substr(0, colon), port = text.substr(colon + 1);
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  *out = sockaddr_in{};
  out->sin_family = AF_INET;
  if (port.empty() || *end != '\0' || p <= 0 || p > 65535 ||
      inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host.c_str(), &out->sin_addr) != 1) {
    *why = "not ADDR:PORT";
    return false;
  }
  if ((ntohl(out->sin_addr.s_addr) >> 24) != 127) {
    *why = "not a loopback address (the switch is emulated on this machine)";
    return false;
  }
  out->sin_port = htons(static_cast<uint16_t>(p));
  return true;
}

// Asks the switch what it is; true when it answered.
bool hello(State& s) {
  PacketHeader h;
  h.type = PacketType::kHello;
  h.job = s.job;
  for (int t = 0; t < kHelloTries; ++t) {
    send_packet(h, nullptr, 0);
    pollfd p{s.fd, POLLIN, 0};
    const double until = progress::now_seconds() + kHelloWaitMs * 1e-3;
    while (progress::now_seconds() < until) {
      if (::poll(&p, 1, kHelloWaitMs) <= 0) break;
      ssize_t n = recv(s.fd, s.buf, sizeof s.buf, MSG_DONTWAIT);
      PacketHeader r;
      if (n != static_cast<ssize_t>(sizeof r + sizeof(HelloBody))) continue;
      std::memcpy(&r, s.buf, sizeof r);
      if (r.magic != kMagic || r.type != PacketType::kHelloReply || r.job != s.job) continue;
      HelloBody body;
      std::memcpy(&body, s.buf + sizeof r, sizeof body);
      // Long enough for the switch to age a record out and say so first.
      s.dead_after = std::max(2.0, 3.0 * body.timeout_ms * 1e-3 + 1.0);
      return true;
    }
  }
  return false;
}

}  // namespace

bool init(uint64_t job) {
  State& s = st();
  s.job = job;
  s.address = params::switch_address();
  s.window = static_cast<uint32_t>(std::max<int64_t>(1, params::switch_window()));
  s.keep_limit = static_cast<size_t>(std::max<int64_t>(0, params::switch_keep()));
  if (s.address.empty()) return false;
  sockaddr_in to;
  if (!parse_address(s.address, &to, &s.why_not)) return false;
  s.fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int bytes = 4 << 20;
  if (s.fd >= 0) {
    setsockopt(s.fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
    setsockopt(s.fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
  }
  if (s.fd < 0 || connect(s.fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 || !hello(s)) {
    if (s.fd >= 0) close(s.fd);
    s.fd = -1;
    return false;
  }
  return true;
}

void agree(bool everyone, const std::string& deaf, bool speaks) {
  State& s = st();
  if (s.address.empty()) return;
  if (!everyone) {
    if (speaks) {
      const std::string why = !s.why_not.empty() ? s.why_not
                              : deaf.empty()     ? "no switch answered"
                                                 : "the switch did not answer rank(s) " + deaf;
      log::warn("TORUSMPI_SWITCH=%s: %s; collectives go without in-network aggregation",
                s.address.c_str(), why.c_str());
    }
    s.warned = true;
    if (s.fd >= 0) close(s.fd);
    s.fd = -1;
    return;
  }
  s.in_use = true;
  s.available = true;
  s.last_heard = progress::now_seconds();
  s.poll_id = progress::add(poll_switch, nullptr);
}

int wait_fd(int also) {
  State& s = st();
  if (s.order.empty()) return also;
  if (s.epoll_fd < 0) {
    s.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = s.fd;
    if (s.epoll_fd < 0 || epoll_ctl(s.epoll_fd, EPOLL_CTL_ADD, s.fd, &e) != 0) return also;
  }
  if (also >= 0 &&
      std::find(s.epoll_also.begin(), s.epoll_also.end(), also) == s.epoll_also.end()) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = also;
    if (epoll_ctl(s.epoll_fd, EPOLL_CTL_ADD, also, &e) != 0) return also;
    s.epoll_also.push_back(also);
  }
  return s.epoll_fd;
}

void finalize() {
  State& s = st();
  if (s.poll_id != 0) progress::remove(s.poll_id);
  s.poll_id = 0;
  if (s.epoll_fd >= 0) close(s.epoll_fd);
  s.epoll_fd = -1;
  s.epoll_also.clear();
  if (s.fd >= 0) close(s.fd);
  s.fd = -1;
  s.available = false;
  s.groups.clear();
  s.kept_order.clear();
  s.kept_bytes = 0;
  s.spare.clear();
}

bool in_use() { return st().in_use; }
bool available() { return st().available; }

bool supports(ElemType elem, AggOp op) {
  switch (op) {
    case AggOp::kSum:
    case AggOp::kMin:
    case AggOp::kMax:
      return elem != ElemType::kNone && elem != ElemType::kBytes;
    case AggOp::kBand:
    case AggOp::kBor:
    case AggOp::kBxor:
      return elem == ElemType::kInt32 || elem == ElemType::kUint32 || elem == ElemType::kInt64 ||
             elem == ElemType::kUint64;
    case AggOp::kGather:
    case AggOp::kBarrier:
      return true;
    case AggOp::kNone:
      break;
  }
  return false;
}

Status start(Aggregation* a) {
  State& s = st();
  a->error = Status::kOk;
  a->why.clear();
  s.groups[a->group].open.insert(a->call);
  if (!s.available) {
    a->error = Status::kErrTimeout;
    a->why = "the switch is not available";
    return a->error;
  }
  lay_out(a);
  const uint32_t n = static_cast<uint32_t>(a->blocks_.size());
  a->next_ = 0;
  a->in_flight_ = 0;
  a->left_ = n;
  if (n == 0) {
    done(a);
    return Status::kOk;
  }
  if (s.order.empty()) s.last_heard = progress::now_seconds();
  s.active[Key{a->group, a->call}] = a;
  s.order.push_back(a);
  s.source_in[a->group] = a->source;
  poll_switch(nullptr);
  return Status::kOk;
}

void settle(uint64_t group, uint64_t call) { close_call(group, call); }

const Kept* kept(uint64_t group, uint64_t call) {
  State& s = st();
  auto g = s.groups.find(group);
  if (g == s.groups.end()) return nullptr;
  auto it = g->second.kept.find(call);
  return it == g->second.kept.end() ? nullptr : &it->second;
}

bool forgotten(uint64_t group, uint64_t call) {
  State& s = st();
  auto g = s.groups.find(group);
  return g != s.groups.end() && g->second.forgotten.count(call) != 0;
}

void forget_context(uint32_t context) {
  State& s = st();
  for (auto g = s.groups.begin(); g != s.groups.end();) {
    if (g->first >> 32 != context) {
      ++g;
      continue;
    }
    while (!g->second.kept.empty()) drop_kept(g->second, g->second.kept.begin());
    g = s.groups.erase(g);
  }
}

const Counters& counters() { return st().counters; }
void note_fallback() { ++st().counters.fallbacks; }
void note_rescued() { ++st().counters.rescued; }

}  // namespace torusmpi::pml::ina
