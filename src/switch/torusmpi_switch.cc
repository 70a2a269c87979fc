// torusmpi_switch: the emulated in-network aggregation switch. A UDP socket on a loopback address,
// a loop that feeds each datagram to sw::Switch (switch.h, the logic) and sends what it answers,
// ageing every few milliseconds; optional random loss on both directions to exercise the
// sources' retransmissions; statistics on SIGUSR1 and at exit (SIGINT, SIGTERM).
//
//   torusmpi_switch --listen 127.0.0.1:7000 &
//   TORUSMPI_SWITCH=127.0.0.1:7000 mpirun -n 8 ./app
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "switch/switch.h"

namespace torusmpi::sw {
namespace {

constexpr char kUsage[] =
    "Usage: torusmpi_switch --listen ADDR:PORT [--slots N] [--timeout SECONDS] [--drop RATE]\n"
    "                       [--seed N] [--die-after BLOCKS]\n"
    "\n"
    "Emulates a switch that aggregates in the network (SHARP / Trio style): MPI ranks send it\n"
    "their blocks over UDP (TORUSMPI_SWITCH=ADDR:PORT), it combines them in its slots and sends\n"
    "every rank the result. Runs until SIGINT or SIGTERM; prints its statistics then, and on\n"
    "SIGUSR1.\n"
    "\n"
    "  --listen ADDR:PORT  a loopback address (127.0.0.0/8 or localhost) and a UDP port; port 0\n"
    "                      takes a free one, given on the first line of output\n"
    "  --slots N           aggregation slots, blocks in progress at once (default 1024,\n"
    "                      at most 16384)\n"
    "  --timeout SECONDS   a block not complete this long after its first contribution fails\n"
    "                      (default 1.0)\n"
    "  --drop RATE         drop this fraction (0 to 1) of the packets received and of those\n"
    "                      sent, at random (default 0), to make the sources retransmit\n"
    "  --seed N            seed of the drop's random numbers (default 1)\n"
    "  --die-after BLOCKS  a crash, for tests: once BLOCKS blocks are complete, send the next\n"
    "                      block's result to its first source only, then stop\n"
    "  --help              this text\n"
    "\n"
    "Exit status: 0 after SIGINT or SIGTERM, 1 when the socket cannot be set up, 2 on bad usage.\n";

constexpr int kBatch = 64;              // datagrams per recvmmsg / sendmmsg
constexpr size_t kDatagramMax = 65536;  // every UDP datagram fits: nothing arrives truncated
constexpr int kPollMs = 2;              // ageing runs at least this often
constexpr int kSocketBuffer = 8 << 20;  // the kernel caps it at net.core.[rw]mem_max
constexpr int kSendWaitMs = 200;        // a full send buffer is waited for this long, then lost
constexpr int kReceiveRounds = 16;      // batches read before ageing and signals get a turn

volatile sig_atomic_t g_stop = 0;
volatile sig_atomic_t g_report = 0;

void on_stop(int) { g_stop = 1; }
void on_report(int) { g_report = 1; }

struct Options {
  uint32_t ip = 0;  // network byte order
  uint16_t port = 0;
  uint32_t slots = 1024;
  double timeout = 1.0;
  double drop = 0;
  uint64_t seed = 1;
  uint64_t die_after = 0;  // 0: never
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "torusmpi_switch: %s (see --help)\n", message.c_str());
  std::exit(2);
}

bool parse_u64(const char* s, uint64_t* v) {
  if (*s < '0' || *s > '9') return false;  // strtoull would take "-1" and " 1"
  errno = 0;
  char* end = nullptr;
  *v = std::strtoull(s, &end, 10);
  return errno == 0 && *end == '\0';
}

bool parse_double(const char* s, double* v) {
  if (*s == '\0') return false;
  errno = 0;
  char* end = nullptr;
  *v = std::strtod(s, &end);
  return errno == 0 && *end == '\0' && std::isfinite(*v);
}

bool is_loopback(uint32_t ip) { return (ntohl(ip) >> 24) == 127; }

void parse_listen(const std::string& arg, Options* o) {
  const size_t colon = arg.rfind(':');
  if (colon == std::string::npos) usage_error("--listen: '" + arg + "' is not ADDR:PORT");
  std::string host = arg.substr(0, colon);
  const std::string port = arg.substr(colon + 1);
  if (host == "localhost") host = "127.0.0.1";
  in_addr addr{};
  if (inet_pton(AF_INET, host.c_str(), &addr) != 1) {
    usage_error("--listen: '" + host + "' is not an IPv4 address (a loopback one: 127.0.0.1)");
  }
  if (!is_loopback(addr.s_addr)) {
    usage_error("--listen: " + host +
                " is not a loopback address (127.0.0.0/8): the switch serves this machine only");
  }
  uint64_t p = 0;
  if (!parse_u64(port.c_str(), &p) || p > 65535) {
    usage_error("--listen: '" + port + "' is not a port number from 0 to 65535");
  }
  o->ip = addr.s_addr;
  o->port = static_cast<uint16_t>(p);
}

Options parse(int argc, char** argv) {
  Options o;
  bool listen = false;
  for (int i = 1; i < argc; ++i) {
    std::string name = argv[i];
    std::string value;
    bool inline_value = false;
    if (name == "--help" || name == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (name.compare(0, 2, "--") == 0 && name.find('=') != std::string::npos) {
      value = name.substr(name.find('=') + 1);
      name = name.substr(0, name.find('='));
      inline_value = true;
    }
    if (name != "--listen" && name != "--slots" && name != "--timeout" && name != "--drop" &&
        name != "--seed" && name != "--die-after") {
      usage_error("unknown argument '" + std::string(argv[i]) + "'");
    }
    if (!inline_value) {
      if (i + 1 >= argc) usage_error(name + " needs a value");
      value = argv[++i];
    }
    if (name == "--listen") {
      parse_listen(value, &o);
      listen = true;
    } else if (name == "--slots") {
      uint64_t n = 0;
      if (!parse_u64(value.c_str(), &n) || n < 1 || n > Switch::kMaxSlots) {
        usage_error("--slots: '" + value + "' is not a number from 1 to " +
                    std::to_string(Switch::kMaxSlots));
      }
      o.slots = static_cast<uint32_t>(n);
    } else if (name == "--timeout") {
      // At least a millisecond (the hello reply gives it in ms), at most a day.
      if (!parse_double(value.c_str(), &o.timeout) || o.timeout < 0.001 || o.timeout > 86400) {
        usage_error("--timeout: '" + value + "' is not a number of seconds from 0.001 to 86400");
      }
    } else if (name == "--drop") {
      if (!parse_double(value.c_str(), &o.drop) || o.drop < 0 || o.drop > 1) {
        usage_error("--drop: '" + value + "' is not a rate from 0 to 1");
      }
    } else if (name == "--die-after") {
      if (!parse_u64(value.c_str(), &o.die_after) || o.die_after == 0) {
        usage_error("--die-after: '" + value + "' is not a positive number of blocks");
      }
    } else {
      if (!parse_u64(value.c_str(), &o.seed)) {
        usage_error("--seed: '" + value + "' is not a non-negative integer");
      }
    }
  }
  if (!listen) usage_error("--listen ADDR:PORT is required");
  return o;
}

double monotonic_now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// The loss simulation: splitmix64, reproducible from --seed.
class Dropper {
 public:
  Dropper(double rate, uint64_t seed) : rate_(rate), state_(seed) {}
  bool drop() {
    if (rate_ <= 0) return false;
    state_ += 0x9e3779b97f4a7c15ULL;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return double(z >> 11) * 0x1.0p-53 < rate_;
  }

 private:
  double rate_;
  uint64_t state_;
};

class Server {
 public:
  explicit Server(const Options& o)
      : sw_(o.slots, o.timeout),
        dropper_(o.drop, o.seed),
        die_after_(o.die_after),
        rx_(size_t(kBatch) * kDatagramMax) {}

  // Returns the exit status.
  int run(const Options& o);

 private:
  bool open_socket(const Options& o);
  void receive(double* now);
  void flush();
  void print_stats();

  Switch sw_;
  Dropper dropper_;
  uint64_t die_after_;
  int fd_ = -1;
  Out out_;
  uint64_t dropped_ = 0;
  std::vector<uint8_t> rx_;
  mmsghdr rx_msgs_[kBatch];
  iovec rx_iov_[kBatch];
  sockaddr_in rx_from_[kBatch];
  mmsghdr tx_msgs_[kBatch];
  iovec tx_iov_[kBatch][2];
  sockaddr_in tx_to_[kBatch];
};

bool Server::open_socket(const Options& o) {
  fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    std::fprintf(stderr, "torusmpi_switch: socket: %s\n", std::strerror(errno));
    return false;
  }
  // Bursts (a result to 256 sources, a window of blocks from each) must not overflow the buffers.
  // Failure only costs retransmissions.
  int size = kSocketBuffer;
  setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = o.ip;
  sa.sin_port = htons(o.port);
  char text[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &sa.sin_addr, text, sizeof(text));
  if (bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
    std::fprintf(stderr, "torusmpi_switch: bind %s:%u: %s\n", text, unsigned(o.port),
                 std::strerror(errno));
    return false;
  }
  socklen_t len = sizeof(sa);
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
    std::fprintf(stderr, "torusmpi_switch: getsockname: %s\n", std::strerror(errno));
    return false;
  }
  std::printf("torusmpi_switch: listening on %s:%u slots=%u timeout=%g\n", text,
              unsigned(ntohs(sa.sin_port)), o.slots, o.timeout);
  std::fflush(stdout);
  return true;
}

// Reads what is queued, a bounded number of batches, and answers each batch at once.
void Server::receive(double* now) {
  for (int round = 0; round < kReceiveRounds && !g_stop; ++round) {
    for (int i = 0; i < kBatch; ++i) {
      rx_iov_[i] = iovec{rx_.data() + size_t(i) * kDatagramMax, kDatagramMax};
      rx_msgs_[i].msg_hdr = msghdr{};
      rx_msgs_[i].msg_hdr.msg_name = &rx_from_[i];
      rx_msgs_[i].msg_hdr.msg_namelen = sizeof(rx_from_[i]);
      rx_msgs_[i].msg_hdr.msg_iov = &rx_iov_[i];
      rx_msgs_[i].msg_hdr.msg_iovlen = 1;
      rx_msgs_[i].msg_len = 0;
    }
    const int n = recvmmsg(fd_, rx_msgs_, kBatch, MSG_DONTWAIT, nullptr);
    if (n <= 0) return;  // EAGAIN: drained; EINTR: the loop looks at the signals
    *now = monotonic_now();
    for (int i = 0; i < n; ++i) {
      if (dropper_.drop()) {
        ++dropped_;
        continue;
      }
      const Address from{rx_from_[i].sin_addr.s_addr, rx_from_[i].sin_port};
      const uint64_t blocks = sw_.stats().blocks;
      const size_t queued = out_.size();
      sw_.handle(static_cast<const uint8_t*>(rx_iov_[i].iov_base), rx_msgs_[i].msg_len, from, *now,
                 &out_);
      if (die_after_ > 0 && blocks == die_after_ && sw_.stats().blocks > blocks) {
        // The crash: the result's first datagram goes out (complete() sends them in source
        // order), the others never do.
        out_.keep_first(queued + 1);
        flush();
        std::printf("torusmpi_switch: --die-after %" PRIu64 ": stopping with block %" PRIu64
                    "'s result sent to its first source only\n",
                    die_after_, blocks + 1);
        g_stop = 1;
        return;
      }
    }
    flush();
    if (n < kBatch) return;
  }
}

// Sends out_ and clears it. A datagram that cannot be sent is lost, as on a real wire: the
// sources' retransmissions recover it.
void Server::flush() {
  size_t next = 0;
  int waited_ms = 0;
  while (next < out_.size()) {
    int m = 0;
    for (; next < out_.size() && m < kBatch; ++next) {
      const Datagram& d = out_[next];
      // Learned from packets received on a loopback socket, so always loopback; checked anyway,
      // since this program must never send anywhere else.
      if (dropper_.drop() || !is_loopback(d.to.ip)) {
        ++dropped_;
        continue;
      }
      tx_to_[m] = sockaddr_in{};
      tx_to_[m].sin_family = AF_INET;
      tx_to_[m].sin_addr.s_addr = d.to.ip;
      tx_to_[m].sin_port = d.to.port;
      tx_iov_[m][0] = iovec{const_cast<ina::PacketHeader*>(&d.header), sizeof(d.header)};
      tx_iov_[m][1] = iovec{const_cast<uint8_t*>(out_.body(d)), d.body_len};
      tx_msgs_[m].msg_hdr = msghdr{};
      tx_msgs_[m].msg_hdr.msg_name = &tx_to_[m];
      tx_msgs_[m].msg_hdr.msg_namelen = sizeof(tx_to_[m]);
      tx_msgs_[m].msg_hdr.msg_iov = tx_iov_[m];
      tx_msgs_[m].msg_hdr.msg_iovlen = d.body_len > 0 ? 2 : 1;
      ++m;
    }
    int sent = 0;
    while (sent < m) {
      const int n = sendmmsg(fd_, tx_msgs_ + sent, unsigned(m - sent), 0);
      if (n > 0) {
        sent += n;
        continue;
      }
      if (errno == EINTR) continue;
      if ((errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) &&
          waited_ms < kSendWaitMs) {
        pollfd p{fd_, POLLOUT, 0};
        poll(&p, 1, 1);
        ++waited_ms;
        continue;
      }
      ++dropped_;  // this datagram only; go on with the rest
      ++sent;
    }
  }
  out_.clear();
}

void Server::print_stats() {
  const Stats& s = sw_.stats();
  std::printf("torusmpi_switch: blocks=%" PRIu64 " bytes_in=%" PRIu64 " bytes_out=%" PRIu64
              " duplicates=%" PRIu64 " busy=%" PRIu64 " timeouts=%" PRIu64 " bad=%" PRIu64
              " dropped=%" PRIu64 " slots_used_max=%" PRIu64 " unacked=%" PRIu64 "\n",
              s.blocks, s.bytes_in, s.bytes_out, s.duplicates, s.busy, s.timeouts, s.bad, dropped_,
              s.slots_used_max, s.unacked);
  std::fflush(stdout);
}

int Server::run(const Options& o) {
  if (!open_socket(o)) return 1;
  while (!g_stop) {
    if (g_report) {
      g_report = 0;
      print_stats();
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = poll(&p, 1, kPollMs);
    double now = monotonic_now();
    if (ready > 0) receive(&now);
    sw_.age(now, &out_);
    flush();
  }
  print_stats();
  close(fd_);
  return 0;
}

}  // namespace
}  // namespace torusmpi::sw

int main(int argc, char** argv) {
  using namespace torusmpi::sw;
  const Options o = parse(argc, argv);
  // No SA_RESTART: a signal interrupts poll(), and the loop sees its flag at once.
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_stop;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sa.sa_handler = on_report;
  sigaction(SIGUSR1, &sa, nullptr);
  // The server holds the switch's slot records and its batch buffers: too big for the stack.
  auto server = std::make_unique<Server>(o);
  return server->run(o);
}
