// The libfabric transport: fragments between instances and nodes over a reliable datagram
// (FI_EP_RDM) endpoint, and the rendezvous's single copy as an RMA read of the sender's registered
// buffer.
//
// On the wire a fragment is a net::Stamp (the sender's job rank, so receives need no FI_SOURCE, and
// its place in the order: pml/net_peers.h), the pml's FragHeader, then the payload:
//   | rank | seq | FragHeader (40 B) | payload (<= 64 KiB) |
// Sends copy into buffers of one registered slab (tiny ones, headers alone, go by fi_inject);
// receives land in a pool of posted buffers of the same size, re-posted once delivered.
//
// Order: FI_ORDER_SAS (asked for) orders how sends are processed, not when their receives
// complete: under tcp;ofi_rxm a 16 KiB fragment goes in segments and completes after a header-only
// fragment sent behind it (seen in p2p_basic: a rendezvous RTS matched before the eager message
// before it). So the receiver always restores the order (net::PeerOrder).
//
// Device memory never reaches this file: the pml bounces device eager payloads through host
// memory and pipelines device rendezvous messages in host chunks, so no FI_HMEM is asked for.
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "config.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "pml/liveness.h"
#include "pml/net.h"
#include "pml/net_peers.h"
#include "pml/transport.h"

namespace torusmpi::pml::ofi {
namespace {

// The libfabric calls this transport makes, from libfabric (opened at run time: see pml/net.h);
// the rest of its API is inline calls through the objects' operation tables.
#define TORUSMPI_OFI_CALLS(X) X(fi_dupinfo) X(fi_fabric) X(fi_freeinfo) X(fi_getinfo) X(fi_strerror)

TORUSMPI_NET_CALLS(Calls, TORUSMPI_OFI_CALLS);
Calls g_ofi;

constexpr uint32_t kApiVersion = FI_VERSION(1, 17);
// Fragments are bounded so that a rendezvous pipelines in chunks of this size and an eager message
// of the default eager limit (64 KiB) still goes in one fragment.
constexpr size_t kMaxPayload = size_t{64} << 10;
// With manual data progress (tcp;ofi_rxm) a message past rxm's eager limit (16 KiB by default)
// moves in segments or by a read that only the sender's polling advances. The pml completes an
// eager send when it is queued, so its sender may be in MPI_Finalize's fence, no longer polling,
// while the receiver waits for the rest: seen as p2p_ring hanging with 64 KiB fragments. So before
// libfabric starts, rxm's eager limit is raised to one whole fragment (FI_OFI_RXM_EAGER_LIMIT,
// unless the user set it): every fragment leaves with its post, and over tcp it lands straight in
// a posted buffer (rxm's dynamic receive buffers), so rxm's own 16 KiB bounce buffers stay as they
// are (raising FI_OFI_RXM_BUFFER_SIZE instead cost 250 MB a rank). A user's smaller limit makes the
// fragments smaller. Measured, osu_latency between instances at 16/32/64 KiB: 34/35/48 us with
// 16 KiB fragments (rendezvous), 15/18/32 us with whole ones.
constexpr char kRxmEagerLimit[] = "FI_OFI_RXM_EAGER_LIMIT";
// Over tcp, rxm posts bounce buffers (16 KiB each) for messages that come before their receive to
// one shared receive context, 4096 of them by default: 64 MiB zeroed a rank, 0.4 s of fi_enable
// here, and half of a 12-rank job's start-up on 2 cores. The pml keeps kRecvBuffers receives
// posted, so few come early: 256 (4 MiB) unless the user set it. osu_bw between two instances
// measured the same.
constexpr char kRxmMsgRxSize[] = "FI_OFI_RXM_MSG_RX_SIZE";
constexpr char kRxmMsgRxSizeValue[] = "256";
// rxm waits on its tcp connections' completion queues with an epoll set by default; a pollfd set
// (unless the user chose) makes a small message's round trip cheaper: osu_latency 8 B between two
// instances, 5 alternating runs, 3.82-4.29 us (median 3.95) against 4.51-4.79 (4.56). This
// transport's own completion queue still gives a descriptor to sleep on (FI_WAIT_FD).
constexpr char kRxmTcpWaitObj[] = "FI_OFI_RXM_DEF_TCP_WAIT_OBJ";
constexpr char kRxmTcpWaitObjValue[] = "pollfd";
// Enough in flight to keep a 64 KiB-chunk pipeline busy (2 MiB) without pinning much per rank.
constexpr int kSendBuffers = 32;
constexpr int kRecvBuffers = 32;
constexpr int kCqBatch = 16;

constexpr size_t kWireHeader = sizeof(net::Stamp) + sizeof(FragHeader);
constexpr size_t kBufferBytes = kWireHeader + kMaxPayload;

// What the reader of an exposed buffer needs: the registration's key, and its base address for
// providers that address registered memory by offset (no FI_MR_VIRT_ADDR).
struct RemoteKey {
  uint64_t rkey;
  uint64_t base;
};

struct Read;

// Every operation's context. FI_CONTEXT2 mode: the provider may use the first member.
struct Op {
  enum Kind : uint8_t { kSend, kRecv, kRead };
  fi_context2 ctx;
  Kind kind = kSend;
  int index = 0;         // kSend, kRecv: which buffer
  int peer = -1;         // kSend, kRead: the job rank at the other end
  Read* read = nullptr;  // kRead: the read this chunk is part of
};

// A rendezvous read (start_read): one fi_read per max_msg_size chunk, all in flight at once; done,
// and reported to the pml, when the last completes.
struct Read {
  uint64_t cookie = 0;
  int peer = -1;
  uint8_t* dst = nullptr;
  size_t len = 0;
  size_t chunk = 0;
  uint64_t remote = 0;  // the first byte, as the provider addresses it
  uint64_t rkey = 0;
  fid_mr* local = nullptr;  // FI_MR_LOCAL: dst's registration, closed when done
  void* desc = nullptr;
  std::vector<Op> ops;  // by chunk; never resized once posting starts
  size_t posted = 0;    // chunks handed to the provider, in order
  size_t completed = 0;
};

std::string fi_text(const char* call, int ret) {
  return std::string(call) + ": " + g_ofi.fi_strerror(-ret);
}

class OfiTransport final : public net::NetworkTransport {
 public:
  explicit OfiTransport(const boot::JobInfo& job)
      : rank_(job.rank), order_("ofi", job), liveness_("ofi", job) {}
  ~OfiTransport() override { close_all(); }

  const char* name() const override { return "ofi"; }
  size_t max_payload() const override { return max_payload_; }
  bool sending() const override { return free_send_.size() < static_cast<size_t>(kSendBuffers); }

  Status open(const boot::JobInfo& job, std::vector<uint8_t>* address, std::string* error);
  Status connect(int peer, const net::AddressCard& card, std::string* error) override;
  Status connect_dynamic(int index, uint64_t job, int rank, const net::AddressCard& card,
                         std::string* error) override;
  void flush() override;

  bool send(int peer, const FragHeader& h, const void* payload, size_t len) override {
    const size_t total = kWireHeader + len;
    if (total <= inject_size_) {
      // Headers alone (control fragments) and the tiniest messages: the provider copies them
      // now, no buffer is held and no completion comes back.
      uint8_t wire[kWireHeader + 64];
      fill(wire, peer, h, payload, len);
      ssize_t ret = fi_inject(ep_, wire, total, addr_[peer]);
      if (ret == -FI_EAGAIN) return false;
      if (ret != 0) fail_post(peer, "fi_inject", static_cast<int>(ret));
      order_.sent(peer);
      return true;
    }
    if (free_send_.empty()) return false;
    const int i = free_send_.back();
    uint8_t* buf = send_buf(i);
    fill(buf, peer, h, payload, len);
    Op& op = send_ops_[i];
    op.peer = peer;
    ssize_t ret = fi_send(ep_, buf, total, send_desc_, addr_[peer], &op.ctx);
    if (ret == -FI_EAGAIN) return false;
    if (ret != 0) fail_post(peer, "fi_send", static_cast<int>(ret));
    free_send_.pop_back();
    order_.sent(peer);
    return true;
  }

  // The NIC reads and writes HBM through its registered view (device::dma_view).
  bool device_reach(int) const override { return rma_; }

  size_t expose(int peer, uint64_t id, const void* buf, size_t len, void* key) override {
    if (!rma_ || len == 0) return 0;
    fid_mr* mr = nullptr;
    int ret = register_memory(buf, len, FI_REMOTE_READ, &mr);
    if (ret != 0) {
      // Not fatal: the message takes the pipelined protocol instead.
      log::warn("ofi: cannot register %zu B for rank %d to read (%s): pipelining it", len, peer,
                g_ofi.fi_strerror(-ret));
      return 0;
    }
    RemoteKey rk{fi_mr_key(mr), reinterpret_cast<uint64_t>(buf)};
    if (rk.rkey == FI_KEY_NOTAVAIL) {  // raw keys (FI_MR_RAW) are not worth it here
      fi_close(&mr->fid);
      return 0;
    }
    exposed_[id] = mr;
    std::memcpy(key, &rk, sizeof rk);
    return sizeof rk;
  }

  void unexpose(uint64_t id) override {
    auto it = exposed_.find(id);
    if (it == exposed_.end()) return;
    fi_close(&it->second->fid);
    exposed_.erase(it);
  }

  // The read goes on while this rank polls; so does the peer's serving of it, which under tcp
  // (an emulated RMA read) is its progress: waiting here would hold both up.
  ReadStart start_read(int peer, uint64_t addr, void* dst, size_t len, const void* key,
                       size_t key_len, uint64_t cookie) override {
    if (!rma_ || key_len != sizeof(RemoteKey)) return ReadStart::kUnsupported;
    if (len == 0) return ReadStart::kDone;
    RemoteKey rk;
    std::memcpy(&rk, key, sizeof rk);
    auto rd = std::make_unique<Read>();
    if (mr_mode_ & FI_MR_LOCAL) {
      if (register_memory(dst, len, FI_READ, &rd->local) != 0) return ReadStart::kUnsupported;
      rd->desc = fi_mr_desc(rd->local);
    }
    rd->cookie = cookie;
    rd->peer = peer;
    rd->dst = static_cast<uint8_t*>(dst);
    rd->len = len;
    rd->remote = (mr_mode_ & FI_MR_VIRT_ADDR) ? addr : addr - rk.base;
    rd->rkey = rk.rkey;
    // (max_msg_size may be SIZE_MAX: len + chunk - 1 must not wrap.)
    rd->chunk = std::min(std::max<size_t>(max_msg_size_, 1), len);
    rd->ops.resize(len / rd->chunk + (len % rd->chunk != 0));
    for (Op& op : rd->ops) {
      op.kind = Op::kRead;
      op.peer = peer;
      op.read = rd.get();
    }
    unposted_.push_back(rd.get());
    reads_.push_back(std::move(rd));
    post_reads();
    return ReadStart::kStarted;
  }

  int poll() override {
    reap();
    if (!unposted_.empty()) post_reads();
    // A read whose peer died may never complete: this rank keeps polling for it, and looks.
    if (!reads_.empty()) liveness_.check_due("reading a rendezvous message");
    int retaken = read_done_.drain([](uint64_t cookie) {
      read_done(cookie);
      return 1;
    });
    if (retry_strangers_) {
      // Fragments of another job's processes that came before connect_dynamic() added them.
      retry_strangers_ = false;
      std::vector<std::vector<uint8_t>> waiting;
      waiting.swap(strangers_);
      for (const std::vector<uint8_t>& frag : waiting) retaken += take(frag.data(), frag.size());
    }
    return retaken + arrived_.drain([&](const Arrival& a) {
      const int delivered = take(recv_buf(a.index), a.len);
      post_recv(a.index);
      return delivered;
    });
  }

  bool pending() const override {
    return !arrived_.empty() || retry_strangers_ || !read_done_.empty() || !unposted_.empty();
  }

  int wait_fd() override { return wait_fd_; }

  bool arm() override {
    liveness_.check_due("waiting for messages");
    if (pending()) return false;
    return wait_fd_ < 0 || trywait();
  }

  void sleep(int64_t us, int also) override {
    if (pending()) return;
    if (wait_fd_ < 0 || trywait()) net::sleep_on(wait_fd_, also, us, &bell_);
    liveness_.check_due("waiting for messages");
  }

  // The completion queue's descriptor covers the provider's sockets, so a peer's read of this
  // rank's memory, which tcp serves in this rank's progress, ends the sleep as an arrival does.
  bool has_doorbell() override { return wait_fd_ >= 0 && bell_.fd() >= 0; }
  void wake_self() override { bell_.ring(); }

 private:
  struct Arrival {
    int index;
    size_t len;
  };

  uint8_t* send_buf(int i) { return send_slab_.data() + static_cast<size_t>(i) * kBufferBytes; }
  uint8_t* recv_buf(int i) { return recv_slab_.data() + static_cast<size_t>(i) * kBufferBytes; }

  void fill(uint8_t* wire, int peer, const FragHeader& h, const void* payload, size_t len) {
    const net::Stamp stamp = order_.stamp(peer);
    std::memcpy(wire, &stamp, sizeof stamp);
    std::memcpy(wire + sizeof stamp, &h, sizeof h);
    if (len > 0) std::memcpy(wire + kWireHeader, payload, len);
  }

  void post_recv(int i) {
    Op& op = recv_ops_[i];
    for (;;) {
      ssize_t ret = fi_recv(ep_, recv_buf(i), kBufferBytes, recv_desc_, FI_ADDR_UNSPEC, &op.ctx);
      if (ret == 0) return;
      if (ret != -FI_EAGAIN) fail_post(-1, "fi_recv", static_cast<int>(ret));
      reap();  // manual progress: the provider frees room only when its queue is read
    }
  }

  // Delivers one arrived fragment (or holds it back until its turn); returns how many were
  // delivered.
  int take(const uint8_t* wire, size_t len) {
    if (len < kWireHeader) {
      boot::abort_job(1, "ofi: rank " + std::to_string(rank_) + " received a fragment of " +
                             std::to_string(len) + " B, shorter than a header");
    }
    net::Stamp stamp;
    std::memcpy(&stamp, wire, sizeof stamp);
    if (!order_.resolve(&stamp)) {
      // A process of another job whose connection this one has not finished: kept until it has.
      strangers_.emplace_back(wire, wire + len);
      return 0;
    }
    if (!order_.in_turn(stamp)) {
      order_.hold(stamp, std::vector<uint8_t>(wire, wire + len));  // the buffer is re-posted
      return 0;
    }
    hand_over(stamp.from, wire, len);
    return 1 + order_.delivered(stamp.from, [&](const std::vector<uint8_t>& frag) {
      hand_over(stamp.from, frag.data(), frag.size());
    });
  }

  // Delivers a fragment as it came off the wire.
  static void hand_over(int peer, const uint8_t* wire, size_t len) {
    FragHeader h;
    std::memcpy(&h, wire + sizeof(net::Stamp), sizeof h);
    deliver(peer, h, wire + kWireHeader, len - kWireHeader);
  }

  // Reads the completion queue: send buffers come back, reads are marked done, receives queue up
  // in arrived_ (in completion order) for poll() to deliver. Returns the completions seen.
  int reap() {
    fi_cq_msg_entry entries[kCqBatch];
    int seen = 0;
    for (;;) {
      ssize_t n = fi_cq_read(cq_, entries, kCqBatch);
      if (n == -FI_EAGAIN) return seen;
      if (n == -FI_EAVAIL) fail_completion();
      if (n < 0) {
        boot::abort_job(1, "ofi: rank " + std::to_string(rank_) + ": " +
                               fi_text("fi_cq_read", static_cast<int>(n)) + " (provider " +
                               provider_ + ")");
      }
      for (ssize_t k = 0; k < n; ++k) {
        Op* op = static_cast<Op*>(entries[k].op_context);
        switch (op->kind) {
          case Op::kSend:
            free_send_.push_back(op->index);
            break;
          case Op::kRecv:
            arrived_.push(Arrival{op->index, entries[k].len});
            break;
          case Op::kRead:
            if (++op->read->completed == op->read->ops.size()) finish_read(op->read);
            break;
        }
      }
      seen += static_cast<int>(n);
      if (n < kCqBatch) return seen;
    }
  }

  // Posts the chunks not posted yet, reads in the order they started; stops at the first the
  // provider has no room for (FI_EAGAIN), which poll() retries.
  void post_reads() {
    while (!unposted_.empty()) {
      Read* rd = unposted_.front();
      for (; rd->posted < rd->ops.size(); ++rd->posted) {
        const size_t off = rd->posted * rd->chunk;
        ssize_t ret =
            fi_read(ep_, rd->dst + off, std::min(rd->chunk, rd->len - off), rd->desc,
                    addr_[rd->peer], rd->remote + off, rd->rkey, &rd->ops[rd->posted].ctx);
        if (ret == -FI_EAGAIN) return;
        if (ret != 0) fail_post(rd->peer, "fi_read", static_cast<int>(ret));
      }
      unposted_.pop_front();
    }
  }

  // Every chunk of rd is in: the pml hears of it at the next poll() (this may run inside a
  // delivery, which must not be entered again).
  void finish_read(Read* rd) {
    if (rd->local != nullptr) fi_close(&rd->local->fid);
    read_done_.push(rd->cookie);
    auto it = std::find_if(reads_.begin(), reads_.end(),
                           [rd](const std::unique_ptr<Read>& r) { return r.get() == rd; });
    reads_.erase(it);
  }

  [[noreturn]] void fail_completion() {
    fi_cq_err_entry err;
    std::memset(&err, 0, sizeof err);
    fi_cq_readerr(cq_, &err, 0);
    // A peer that died is the likely cause: name it if it is on this host.
    liveness_.check("communicating");
    const Op* op = static_cast<const Op*>(err.op_context);
    const char* what = op == nullptr           ? "operation"
                       : op->kind == Op::kSend ? "send"
                       : op->kind == Op::kRecv ? "receive"
                                               : "RMA read";
    std::string who = op != nullptr && op->peer >= 0 ? " to rank " + std::to_string(op->peer) : "";
    if (op != nullptr && op->kind == Op::kRead) who = " from rank " + std::to_string(op->peer);
    char text[256] = "";
    const char* prov = fi_cq_strerror(cq_, err.prov_errno, err.err_data, text, sizeof text);
    boot::abort_job(1, "ofi: rank " + std::to_string(rank_) + ": " + what + who +
                           " failed: " + g_ofi.fi_strerror(err.err) + " (provider " + provider_ +
                           ": " + (prov != nullptr ? prov : "no details") + ")");
  }

  [[noreturn]] void fail_post(int peer, const char* call, int ret) {
    liveness_.check("communicating");
    std::string who = peer >= 0 ? " for rank " + std::to_string(peer) : "";
    boot::abort_job(1, "ofi: rank " + std::to_string(rank_) + ": " + call + who +
                           " failed: " + g_ofi.fi_strerror(-ret) + " (provider " + provider_ + ")");
  }

  // Registers [buf, buf + len) for `access`, bound to the endpoint where the provider asks for it
  // (FI_MR_ENDPOINT). Keys are ours to choose unless the provider picks them (FI_MR_PROV_KEY), and
  // ours are random: an endpoint reached over tcp takes anyone's connection, and a process outside
  // the job must not guess the key of a buffer exposed for a rendezvous (tcp numbers from 0). A key
  // in use already (-FI_ENOKEY) is drawn again. On failure nothing stays registered.
  uint64_t random_key() const {
    uint64_t key = 0;
    if (getrandom(&key, sizeof key, 0) != static_cast<ssize_t>(sizeof key)) {
      key =
          static_cast<uint64_t>(progress::now_seconds() * 1e9) ^ (uint64_t{0x9e3779b9} * getpid());
    }
    return key_bits_ >= 64 ? key : key & ((uint64_t{1} << key_bits_) - 1);
  }

  int register_memory(const void* buf, size_t len, uint64_t access, fid_mr** mr) {
    int ret = -FI_ENOKEY;
    for (int tries = 0; tries < 4 && ret == -FI_ENOKEY; ++tries) {
      ret = fi_mr_reg(domain_, buf, len, access, 0, random_key(), 0, mr, nullptr);
    }
    if (ret == 0 && (mr_mode_ & FI_MR_ENDPOINT)) {
      ret = fi_mr_bind(*mr, &ep_->fid, 0);
      if (ret == 0) ret = fi_mr_enable(*mr);
    }
    if (ret != 0 && *mr != nullptr) {
      fi_close(&(*mr)->fid);
      *mr = nullptr;
    }
    return ret;
  }

  // Readies the completion queue's descriptor for a sleep; false when completions are already
  // there to read.
  bool trywait() {
    fid* fids[1] = {&cq_->fid};
    return fi_trywait(fabric_, fids, 1) == FI_SUCCESS;
  }

  int reap_closing();
  void close_all();

  int rank_;
  std::string provider_;
  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_ep* ep_ = nullptr;
  fid_mr* send_mr_ = nullptr;
  fid_mr* recv_mr_ = nullptr;
  void* send_desc_ = nullptr;
  void* recv_desc_ = nullptr;
  int wait_fd_ = -1;
  net::Bell bell_;
  uint64_t mr_mode_ = 0;
  bool rma_ = false;
  bool ordered_ = false;
  size_t inject_size_ = 0;
  size_t max_payload_ = kMaxPayload;
  size_t max_msg_size_ = 0;
  int key_bits_ = 64;  // of a key we choose (the provider's mr_key_size)
  std::vector<uint8_t> send_slab_;
  std::vector<uint8_t> recv_slab_;
  std::vector<Op> send_ops_;
  std::vector<Op> recv_ops_;
  std::vector<int> free_send_;
  net::Inbox<Arrival> arrived_;                 // receive buffers in completion order
  std::vector<fi_addr_t> addr_;                 // by job rank
  net::PeerOrder<std::vector<uint8_t>> order_;  // early arrivals held as copies
  Liveness liveness_;
  std::unordered_map<uint64_t, fid_mr*> exposed_;
  std::vector<std::unique_ptr<Read>> reads_;     // started, not complete
  std::deque<Read*> unposted_;                   // of reads_, with chunks still to post, in order
  net::Inbox<uint64_t> read_done_;               // cookies of complete reads, for poll()
  std::vector<std::vector<uint8_t>> strangers_;  // arrivals from processes not added yet
  bool retry_strangers_ = false;                 // a process was added: look at them again
};

// Which provider: TORUSMPI_OFI_PROVIDER, else FI_PROVIDER's (libfabric filters by it itself),
// else efa where there is one, else tcp.
std::vector<std::string> provider_choices(std::string* described) {
  const std::string& mine = params::ofi_provider();
  if (!mine.empty()) {
    *described = "'" + mine + "'";
    return {mine};
  }
  const char* env = std::getenv("FI_PROVIDER");
  if (env != nullptr && env[0] != '\0') {
    *described = "'" + std::string(env) + "' (FI_PROVIDER)";
    return {""};
  }
  *described = "'efa' or 'tcp'";
  return {"efa", "tcp"};
}

// The info to open: with RMA and ordered sends if offered, then without each. On one node, the
// loopback interface's, so nothing leaves the host.
int get_info(const std::string& prov, bool one_node, fi_info** out) {
  int last = -FI_ENODATA;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const bool rma = attempt % 2 == 0;
    const bool sas = attempt < 2;
    fi_info* hints = g_ofi.fi_dupinfo(nullptr);
    if (hints == nullptr) return -FI_ENOMEM;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | (rma ? FI_RMA | FI_READ | FI_REMOTE_READ : 0);
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->av_type = FI_AV_TABLE;
    if (sas) {
      hints->tx_attr->msg_order = FI_ORDER_SAS;
      hints->rx_attr->msg_order = FI_ORDER_SAS;
    }
    if (!prov.empty()) hints->fabric_attr->prov_name = strdup(prov.c_str());
    fi_info* list = nullptr;
    int ret;
    {
      net::KeepCrashHandlers keep;  // the first call opens libfabric's providers
      ret = g_ofi.fi_getinfo(kApiVersion, nullptr, nullptr, 0, hints, &list);
    }
    g_ofi.fi_freeinfo(hints);
    if (ret != 0) {
      last = ret;
      continue;
    }
    fi_info* pick = list;
    if (one_node) {
      for (fi_info* i = list; i != nullptr; i = i->next) {
        const auto* sin = static_cast<const sockaddr_in*>(i->src_addr);
        bool lo =
            (i->domain_attr->name != nullptr && std::strcmp(i->domain_attr->name, "lo") == 0) ||
            (i->addr_format == FI_SOCKADDR_IN && sin != nullptr &&
             sin->sin_addr.s_addr == htonl(INADDR_LOOPBACK));
        if (lo) {
          pick = i;
          break;
        }
      }
    }
    *out = g_ofi.fi_dupinfo(pick);
    g_ofi.fi_freeinfo(list);
    return *out != nullptr ? 0 : -FI_ENOMEM;
  }
  return last;
}

Status OfiTransport::open(const boot::JobInfo& job, std::vector<uint8_t>* address,
                          std::string* error) {
  setenv(kRxmEagerLimit, std::to_string(kBufferBytes).c_str(), 0);  // see kRxmEagerLimit
  setenv(kRxmMsgRxSize, kRxmMsgRxSizeValue, 0);                     // see kRxmMsgRxSize
  setenv(kRxmTcpWaitObj, kRxmTcpWaitObjValue, 0);                   // see kRxmTcpWaitObj
  std::string described;
  int ret = -FI_ENODATA;
  for (const std::string& prov : provider_choices(&described)) {
    ret = get_info(prov, job.num_nodes == 1, &info_);
    if (ret == 0) break;
  }
  if (ret != 0) {
    *error = "ofi: no libfabric provider " + described + " offers reliable datagram endpoints (" +
             fi_text("fi_getinfo", ret) + ")";
    return Status::kErrUnsupported;
  }
  provider_ = info_->fabric_attr->prov_name != nullptr ? info_->fabric_attr->prov_name : "?";
  mr_mode_ = info_->domain_attr->mr_mode;
  key_bits_ = static_cast<int>(std::min<size_t>(info_->domain_attr->mr_key_size, 8) * 8);
  rma_ = (info_->caps & FI_RMA) != 0;
  ordered_ =
      (info_->tx_attr->msg_order & FI_ORDER_SAS) && (info_->rx_attr->msg_order & FI_ORDER_SAS);
  inject_size_ = std::min<size_t>(info_->tx_attr->inject_size, kWireHeader + 64);
  max_msg_size_ = info_->ep_attr->max_msg_size;
  if (info_->domain_attr->data_progress != FI_PROGRESS_AUTO) {
    const char* limit = std::getenv(kRxmEagerLimit);
    const size_t wire = limit != nullptr ? std::strtoull(limit, nullptr, 0) : 0;
    if (wire < kWireHeader + 1024) {
      *error = std::string("ofi: ") + kRxmEagerLimit + "=" + (limit != nullptr ? limit : "") +
               ": too small for fragments of 1 KiB and their " + std::to_string(kWireHeader) +
               "-byte header";
      return Status::kErrArg;
    }
    max_payload_ = std::min(kMaxPayload, wire - kWireHeader);
  }
  if (max_msg_size_ < kBufferBytes) {
    *error = "ofi: provider " + provider_ + " carries messages of at most " +
             std::to_string(max_msg_size_) + " B, less than a fragment (" +
             std::to_string(kBufferBytes) + " B)";
    return Status::kErrUnsupported;
  }
  const std::string where = " (provider " + provider_ + ")";
  auto failed = [&](const char* call, int r) {
    *error = "ofi: " + fi_text(call, r) + where;
    return Status::kErrUnsupported;
  };
  if ((ret = g_ofi.fi_fabric(info_->fabric_attr, &fabric_, nullptr)) != 0)
    return failed("fi_fabric", ret);
  if ((ret = fi_domain(fabric_, info_, &domain_, nullptr)) != 0) return failed("fi_domain", ret);
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  av_attr.count = static_cast<size_t>(job.size);
  if ((ret = fi_av_open(domain_, &av_attr, &av_, nullptr)) != 0) return failed("fi_av_open", ret);
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_MSG;
  cq_attr.size = 4 * (kSendBuffers + kRecvBuffers) + 256;
  cq_attr.wait_obj = FI_WAIT_FD;  // so a rank with nothing to do can sleep on it
  ret = fi_cq_open(domain_, &cq_attr, &cq_, nullptr);
  if (ret != 0) {
    cq_attr.wait_obj = FI_WAIT_NONE;
    if ((ret = fi_cq_open(domain_, &cq_attr, &cq_, nullptr)) != 0) return failed("fi_cq_open", ret);
  } else if (fi_control(&cq_->fid, FI_GETWAIT, &wait_fd_) != 0) {
    wait_fd_ = -1;
  }
  if ((ret = fi_endpoint(domain_, info_, &ep_, nullptr)) != 0) return failed("fi_endpoint", ret);
  if ((ret = fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV)) != 0)
    return failed("fi_ep_bind(cq)", ret);
  if ((ret = fi_ep_bind(ep_, &av_->fid, 0)) != 0) return failed("fi_ep_bind(av)", ret);
  if ((ret = fi_enable(ep_)) != 0) return failed("fi_enable", ret);

  send_slab_.resize(kBufferBytes * kSendBuffers);
  recv_slab_.resize(kBufferBytes * kRecvBuffers);
  // Registered even when FI_MR_LOCAL does not ask for it: cheap, once, and some providers go
  // faster with a descriptor.
  auto reg = [&](std::vector<uint8_t>& slab, uint64_t access, fid_mr** mr, void** desc) {
    int r = register_memory(slab.data(), slab.size(), access, mr);
    if (r == 0) *desc = fi_mr_desc(*mr);
    return r;
  };
  if ((ret = reg(send_slab_, FI_SEND, &send_mr_, &send_desc_)) != 0)
    return failed("fi_mr_reg", ret);
  if ((ret = reg(recv_slab_, FI_RECV, &recv_mr_, &recv_desc_)) != 0)
    return failed("fi_mr_reg", ret);
  send_ops_.resize(kSendBuffers);
  for (int i = 0; i < kSendBuffers; ++i) {
    send_ops_[i].kind = Op::kSend;
    send_ops_[i].index = i;
    free_send_.push_back(kSendBuffers - 1 - i);
  }
  recv_ops_.resize(kRecvBuffers);
  for (int i = 0; i < kRecvBuffers; ++i) {
    recv_ops_[i].kind = Op::kRecv;
    recv_ops_[i].index = i;
    post_recv(i);
  }

  address->resize(256);
  size_t address_len = address->size();
  ret = fi_getname(&ep_->fid, address->data(), &address_len);
  if (ret == -FI_ETOOSMALL) {
    address->resize(address_len);
    ret = fi_getname(&ep_->fid, address->data(), &address_len);
  }
  if (ret != 0) return failed("fi_getname", ret);
  address->resize(address_len);
  addr_.assign(job.size, FI_ADDR_UNSPEC);
  TORUSMPI_DEBUG(
      kPml, "ofi: provider %s, domain %s, rma %d, sas %d, mr_mode 0x%llx, fd %d, fragments %zu B",
      provider_.c_str(), info_->domain_attr->name, rma_, ordered_,
      static_cast<unsigned long long>(mr_mode_), wait_fd_, max_payload_);
  return Status::kOk;
}

Status OfiTransport::connect(int peer, const net::AddressCard& card, std::string* error) {
  int ret = fi_av_insert(av_, card.address.data(), 1, &addr_[peer], 0, nullptr);
  if (ret != 1) {
    *error = "ofi: cannot resolve rank " + std::to_string(peer) + "'s address (" +
             fi_text("fi_av_insert", ret < 0 ? ret : -FI_EINVAL) + ", provider " + provider_ + ")";
    return Status::kErrBoot;
  }
  liveness_.watch(peer, card.local_pid);
  return Status::kOk;
}

Status OfiTransport::connect_dynamic(int index, uint64_t job, int rank,
                                     const net::AddressCard& card, std::string* error) {
  if (addr_.size() <= static_cast<size_t>(index)) addr_.resize(index + 1, FI_ADDR_UNSPEC);
  int ret = fi_av_insert(av_, card.address.data(), 1, &addr_[index], 0, nullptr);
  if (ret != 1) {
    *error = "ofi: cannot resolve the address of rank " + std::to_string(rank) +
             " of another job (" + fi_text("fi_av_insert", ret < 0 ? ret : -FI_EINVAL) +
             ", provider " + provider_ + ")";
    return Status::kErrBoot;
  }
  order_.add(index, job, rank);
  retry_strangers_ = !strangers_.empty();
  return Status::kOk;
}

void OfiTransport::flush() {
  if (ep_ == nullptr) return;
  net::flush([&] { return !sending(); }, [&] { return reap_closing(); });
}

// Like reap(), for detach(): only the send buffers matter now, and an error is a peer closing too,
// not the job's.
int OfiTransport::reap_closing() {
  fi_cq_msg_entry entries[kCqBatch];
  ssize_t n = fi_cq_read(cq_, entries, kCqBatch);
  if (n == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    fi_cq_readerr(cq_, &err, 0);
    const Op* op = static_cast<const Op*>(err.op_context);
    if (op != nullptr && op->kind == Op::kSend) free_send_.push_back(op->index);
    return 1;
  }
  for (ssize_t k = 0; k < n; ++k) {
    const Op* op = static_cast<const Op*>(entries[k].op_context);
    if (op->kind == Op::kSend) free_send_.push_back(op->index);
  }
  return static_cast<int>(n);
}

// Endpoint first (it holds references to the rest), then what it was bound to.
void OfiTransport::close_all() {
  if (ep_ != nullptr) fi_close(&ep_->fid);
  ep_ = nullptr;
  // Reads pml::finalize gave up on (a peer gone): their buffers are no longer the provider's.
  for (auto& rd : reads_) {
    if (rd->local != nullptr) fi_close(&rd->local->fid);
  }
  reads_.clear();
  unposted_.clear();
  for (auto& e : exposed_) fi_close(&e.second->fid);
  exposed_.clear();
  if (send_mr_ != nullptr) fi_close(&send_mr_->fid);
  if (recv_mr_ != nullptr) fi_close(&recv_mr_->fid);
  send_mr_ = recv_mr_ = nullptr;
  if (av_ != nullptr) fi_close(&av_->fid);
  av_ = nullptr;
  if (cq_ != nullptr) fi_close(&cq_->fid);
  cq_ = nullptr;
  if (domain_ != nullptr) fi_close(&domain_->fid);
  domain_ = nullptr;
  if (fabric_ != nullptr) fi_close(&fabric_->fid);
  fabric_ = nullptr;
  if (info_ != nullptr) g_ofi.fi_freeinfo(info_);
  info_ = nullptr;
}

}  // namespace

Status open(const boot::JobInfo& job, std::unique_ptr<net::NetworkTransport>* transport,
            std::vector<uint8_t>* address, std::string* error) {
  TORUSMPI_CHECK(g_ofi.load("ofi", "libfabric.so.1", TORUSMPI_OFI_LIBDIR, error));
  auto t = std::make_unique<OfiTransport>(job);
  TORUSMPI_CHECK(t->open(job, address, error));
  *transport = std::move(t);
  return Status::kOk;
}

}  // namespace torusmpi::pml::ofi
