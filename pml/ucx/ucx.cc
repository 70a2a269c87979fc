// The UCX network transport: one UCP worker per rank, one endpoint per remote peer. A fragment
// travels as one active message whose AM header is the FragHeader and a net::Stamp (the sender's
// rank and its place in the order: pml/net_peers.h) and whose data is the payload; the rendezvous
// single copy is a ucp_get_nbx from memory the sender mapped with ucp_mem_map (its packed rkey is
// the pml's remote key).
//
// Arrivals and completed reads are never handed to the pml from inside UCX's callbacks: the
// callback queues them (keeping UCX's buffer when it may, copying otherwise) and poll() hands the
// queues over after progress returns. So the pml is never entered recursively (a send that
// progresses the worker may run callbacks mid-delivery), and UCX callbacks stay free of calls
// back into UCX beyond freeing their request.
#include <ucp/api/ucp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "config.h"
#include "core/log.h"
#include "pml/liveness.h"
#include "pml/net.h"
#include "pml/net_peers.h"
#include "pml/transport.h"

namespace torusmpi::pml::ucx {
namespace {

// The UCX calls this transport makes, from libucp (opened at run time: see pml/net.h).
#define TORUSMPI_UCX_CALLS(X)       \
  X(ucp_am_data_release)            \
  X(ucp_am_send_nbx)                \
  X(ucp_cleanup)                    \
  X(ucp_config_modify)              \
  X(ucp_config_read)                \
  X(ucp_config_release)             \
  X(ucp_ep_close_nbx)               \
  X(ucp_ep_create)                  \
  X(ucp_ep_rkey_unpack)             \
  X(ucp_get_nbx)                    \
  X(ucp_init_version)               \
  X(ucp_mem_map)                    \
  X(ucp_mem_unmap)                  \
  X(ucp_request_check_status)       \
  X(ucp_request_free)               \
  X(ucp_rkey_buffer_release)        \
  X(ucp_rkey_destroy)               \
  X(ucp_rkey_pack)                  \
  X(ucp_worker_arm)                 \
  X(ucp_worker_create)              \
  X(ucp_worker_destroy)             \
  X(ucp_worker_get_address)         \
  X(ucp_worker_get_efd)             \
  X(ucp_worker_progress)            \
  X(ucp_worker_release_address)     \
  X(ucp_worker_set_am_recv_handler) \
  X(ucs_status_string)

TORUSMPI_NET_CALLS(Calls, TORUSMPI_UCX_CALLS);
Calls g_ucx;

constexpr unsigned kAmId = 0x7a;
// Fragments are sent with UCP_AM_SEND_FLAG_EAGER whatever their size, so UCX never switches one
// to its rendezvous protocol; the stamps restore the order in any case. 64 KiB
// is the shared-memory transport's chunk too, so pipelined messages cut alike on both.
constexpr size_t kMaxPayload = size_t{64} << 10;
// Payload copies still owned by UCX (sends that did not complete at once): past this much,
// send() says "not now" and the pml keeps its backlog, instead of this growing without bound.
constexpr size_t kMaxInFlightBytes = size_t{32} << 20;

// The AM header on the wire.
struct WireHeader {
  FragHeader h;
  net::Stamp stamp;
};

// An arrival waiting for poll().
struct Arrival {
  WireHeader w;
  void* data = nullptr;
  size_t len = 0;
  bool ucx_owned = false;  // data is UCX's (ucp_am_data_release), else ours (free)
};

// A send that did not complete at once: header and payload copied, freed at completion.
struct SendCopy {
  class UcxTransport* t;
  WireHeader w;
  size_t len;
  // payload follows
  uint8_t* payload() { return reinterpret_cast<uint8_t*>(this + 1); }
};

// A rendezvous read in flight (start_read).
struct Read {
  class UcxTransport* t;
  uint64_t cookie;
  int peer;
  ucp_rkey_h rkey;
};

struct PeerArg {
  class UcxTransport* t = nullptr;
  int rank = -1;
};

std::string status_text(ucs_status_t s) { return g_ucx.ucs_status_string(s); }

class UcxTransport final : public net::NetworkTransport {
 public:
  UcxTransport(const boot::JobInfo& job, ucp_context_h context, ucp_worker_h worker, int efd)
      : job_(job),
        context_(context),
        worker_(worker),
        efd_(efd),
        order_("ucx", job),
        liveness_("ucx", job) {
    const size_t n = static_cast<size_t>(job.size);
    eps_.assign(n, nullptr);
    args_.resize(n);
    for (size_t r = 0; r < n; ++r) args_[r] = PeerArg{this, static_cast<int>(r)};
  }

  ~UcxTransport() override { close_all(); }

  const char* name() const override { return "ucx"; }
  size_t max_payload() const override { return kMaxPayload; }
  bool sending() const override { return in_flight_bytes_ > 0; }

  Status connect(int peer, const net::AddressCard& card, std::string* error) override {
    ucp_ep_params_t p;
    std::memset(&p, 0, sizeof p);
    p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                   UCP_EP_PARAM_FIELD_ERR_HANDLER;
    p.address = reinterpret_cast<const ucp_address_t*>(card.address.data());
    // PEER mode: a peer that dies or closes its side fails this endpoint (err_handler) instead
    // of leaving its operations waiting forever.
    p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    p.err_handler.cb = &UcxTransport::on_ep_error;
    p.err_handler.arg = &args_[peer];
    ucs_status_t s = g_ucx.ucp_ep_create(worker_, &p, &eps_[peer]);
    if (s != UCS_OK) {
      *error =
          "ucx: cannot create an endpoint to rank " + std::to_string(peer) + ": " + status_text(s);
      return Status::kErrBoot;
    }
    liveness_.watch(peer, card.local_pid);
    return Status::kOk;
  }

  bool send(int peer, const FragHeader& h, const void* payload, size_t len) override {
    if (in_flight_bytes_ > kMaxInFlightBytes) {
      g_ucx.ucp_worker_progress(worker_);
      if (in_flight_bytes_ > kMaxInFlightBytes) return false;
    }
    WireHeader w;
    w.h = h;
    w.stamp = order_.stamp(peer);
    // First without copying: the operation completes before returning or is refused outright,
    // so the pml's buffer is never left in UCX's hands.
    ucp_request_param_t p;
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
    p.flags = UCP_AM_SEND_FLAG_EAGER;
    ucs_status_ptr_t r = g_ucx.ucp_am_send_nbx(eps_[peer], kAmId, &w, sizeof w, payload, len, &p);
    if (r == nullptr) {
      order_.sent(peer);
      return true;
    }
    if (UCS_PTR_IS_PTR(r)) {
      // Not expected with FORCE_IMM_CMPL, but if UCX took the request it holds our pointers.
      finish(r, peer, "sending a fragment to");
      order_.sent(peer);
      return true;
    }
    if (UCS_PTR_STATUS(r) != UCS_ERR_NO_RESOURCE)
      fail(peer, "sending a fragment to", UCS_PTR_STATUS(r));
    // Not now (a large fragment, or the socket is busy): UCX keeps a copy that we own.
    auto* c = static_cast<SendCopy*>(std::malloc(sizeof(SendCopy) + len));
    if (c == nullptr) return false;
    c->t = this;
    c->w = w;
    c->len = len;
    if (len > 0) std::memcpy(c->payload(), payload, len);
    p.op_attr_mask =
        UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.flags = UCP_AM_SEND_FLAG_EAGER;
    p.cb.send = &UcxTransport::on_send_done;
    p.user_data = c;
    r = g_ucx.ucp_am_send_nbx(eps_[peer], kAmId, &c->w, sizeof c->w, c->payload(), len, &p);
    if (UCS_PTR_IS_ERR(r)) fail(peer, "sending a fragment to", UCS_PTR_STATUS(r));
    if (r == nullptr) {
      std::free(c);
    } else {
      in_flight_bytes_ += len;
    }
    order_.sent(peer);
    return true;
  }

  // The get goes on while this rank polls (the peer's progress serves it under tcp); its
  // callback queues it for poll(), which tells the pml.
  ReadStart start_read(int peer, uint64_t addr, void* dst, size_t len, const void* key,
                       size_t key_len, uint64_t cookie) override {
    if (key_len == 0) return ReadStart::kUnsupported;  // nothing exposed: the pml pipelines
    if (len == 0) return ReadStart::kDone;
    auto* rd = new Read{this, cookie, peer, nullptr};
    ucs_status_t s = g_ucx.ucp_ep_rkey_unpack(eps_[peer], key, &rd->rkey);
    if (s != UCS_OK) fail(peer, "unpacking the remote key of", s);
    ucp_request_param_t p;
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = &UcxTransport::on_read_done;
    p.user_data = rd;
    ucs_status_ptr_t r = g_ucx.ucp_get_nbx(eps_[peer], dst, len, addr, rd->rkey, &p);
    if (UCS_PTR_IS_ERR(r)) fail(peer, "reading a rendezvous message from", UCS_PTR_STATUS(r));
    if (r == nullptr) {  // complete at once: no callback comes
      g_ucx.ucp_rkey_destroy(rd->rkey);
      delete rd;
      return ReadStart::kDone;
    }
    ++reads_;
    return ReadStart::kStarted;
  }

  // The NIC reads and writes HBM through its registered view (device::dma_view).
  bool device_reach(int) const override { return rma_; }

  size_t expose(int peer, uint64_t id, const void* buf, size_t len, void* key) override {
    (void)peer;
    if (!rma_ || len == 0) return 0;
    ucp_mem_map_params_t mp;
    std::memset(&mp, 0, sizeof mp);
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address = const_cast<void*>(buf);
    mp.length = len;
    ucp_mem_h memh;
    ucs_status_t s = g_ucx.ucp_mem_map(context_, &mp, &memh);
    if (s != UCS_OK) {
      no_rma(("ucp_mem_map: " + status_text(s)).c_str());
      return 0;
    }
    void* packed = nullptr;
    size_t size = 0;
    s = g_ucx.ucp_rkey_pack(context_, memh, &packed, &size);
    if (s != UCS_OK || size > kMaxKey) {
      if (s == UCS_OK) g_ucx.ucp_rkey_buffer_release(packed);
      g_ucx.ucp_mem_unmap(context_, memh);
      no_rma(s != UCS_OK ? ("ucp_rkey_pack: " + status_text(s)).c_str()
                         : ("a packed remote key of " + std::to_string(size) +
                            " B does not fit Transport::kMaxKey")
                               .c_str());
      return 0;
    }
    std::memcpy(key, packed, size);
    g_ucx.ucp_rkey_buffer_release(packed);
    mapped_[id] = memh;
    if (!key_logged_) {
      key_logged_ = true;
      TORUSMPI_DEBUG(kPml, "ucx: remote keys of %zu B", size);
    }
    return size;
  }

  void unexpose(uint64_t id) override {
    auto it = mapped_.find(id);
    if (it == mapped_.end()) return;
    g_ucx.ucp_mem_unmap(context_, it->second);
    mapped_.erase(it);
  }

  int poll() override {
    // Until UCX has nothing more to do (bounded: a flood must not keep the pml from sending).
    for (int i = 0; i < 32 && g_ucx.ucp_worker_progress(worker_) != 0; ++i) {
    }
    // A read whose peer died may never complete: this rank keeps polling for it, and looks.
    if (reads_ > 0) liveness_.check_due("reading a rendezvous message");
    return read_done_.drain([&](Read* rd) {
      --reads_;
      g_ucx.ucp_rkey_destroy(rd->rkey);
      const uint64_t cookie = rd->cookie;
      delete rd;
      read_done(cookie);
      return 1;
    }) + ready_.drain([&](const Arrival& a) {
      deliver(a.w.stamp.from, a.w.h, a.data, a.len);
      release(a);
      return 1;
    });
  }

  bool pending() const override { return !ready_.empty() || !read_done_.empty(); }

  int wait_fd() override { return efd_; }

  bool arm() override {
    if (pending()) return false;
    ucs_status_t s = g_ucx.ucp_worker_arm(worker_);
    if (s == UCS_ERR_BUSY) return false;
    if (s != UCS_OK) fail(-1, "arming its wake-up descriptor for", s);
    return true;
  }

  void sleep(int64_t us, int also) override {
    net::sleep_on(efd_, also, us, &bell_);  // armed by arm()
    liveness_.check_due("waiting for messages");
  }

  // Armed, the worker's descriptor covers its transports' sockets: a peer's get of this rank's
  // memory, which tcp serves in this rank's progress, ends the sleep as an arrival does.
  bool has_doorbell() override { return bell_.fd() >= 0; }
  void wake_self() override { bell_.ring(); }

  // Before endpoints close: errors they raise from now on are peers leaving, not failures.
  void close_all() {
    if (worker_ == nullptr) return;
    closing_ = true;
    std::vector<ucs_status_ptr_t> closing;
    for (ucp_ep_h& ep : eps_) {
      if (ep == nullptr) continue;
      ucp_request_param_t p;
      p.op_attr_mask = 0;  // flush what is queued, then close
      ucs_status_ptr_t r = g_ucx.ucp_ep_close_nbx(ep, &p);
      if (UCS_PTR_IS_PTR(r)) closing.push_back(r);
      ep = nullptr;
    }
    net::flush(
        [&] {
          return std::none_of(closing.begin(), closing.end(), [](ucs_status_ptr_t r) {
            return g_ucx.ucp_request_check_status(r) == UCS_INPROGRESS;
          });
        },
        [&] { return static_cast<int>(g_ucx.ucp_worker_progress(worker_)); });
    // An unfinished close goes on without us.
    for (ucs_status_ptr_t r : closing) g_ucx.ucp_request_free(r);
    for (auto& m : mapped_) g_ucx.ucp_mem_unmap(context_, m.second);
    mapped_.clear();
    ready_.drop([&](const Arrival& a) { release(a); });
    read_done_.drop([&](Read* rd) { delete rd; });
    order_.drop_held([&](const Arrival& a) { release(a); });
    g_ucx.ucp_worker_destroy(worker_);
    worker_ = nullptr;
    g_ucx.ucp_cleanup(context_);
    context_ = nullptr;
  }

  static ucs_status_t on_am(void* arg, const void* header, size_t header_length, void* data,
                            size_t length, const ucp_am_recv_param_t* param) {
    auto* t = static_cast<UcxTransport*>(arg);
    if (header_length != sizeof(WireHeader)) {
      boot::abort_job(
          1, "ucx: rank " + std::to_string(t->job_.rank) + " received a message with a header of " +
                 std::to_string(header_length) + " B: not torusmpi's (or another version)");
    }
    Arrival a;
    std::memcpy(&a.w, header, sizeof a.w);
    a.len = length;
    ucs_status_t keep = UCS_OK;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
      // Every fragment is sent eager; a rendezvous one is from something else.
      boot::abort_job(1, "ucx: rank " + std::to_string(t->job_.rank) +
                             " received a rendezvous active message from rank " +
                             std::to_string(a.w.stamp.from) + "; torusmpi sends only eager ones");
    }
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) {
      a.data = data;  // UCX's buffer, kept until delivered
      a.ucx_owned = true;
      keep = UCS_INPROGRESS;
    } else if (length > 0) {
      a.data = std::malloc(length);
      if (a.data == nullptr) {
        boot::abort_job(1, "ucx: rank " + std::to_string(t->job_.rank) +
                               " is out of memory for a " + std::to_string(length) +
                               " B fragment from rank " + std::to_string(a.w.stamp.from));
      }
      std::memcpy(a.data, data, length);
    }
    t->arrived(a);
    return keep;
  }

 private:
  // Puts an arrival in delivery order: next in its sender's sequence, or held until it is.
  void arrived(const Arrival& a) {
    if (!order_.in_turn(a.w.stamp)) {
      order_.hold(a.w.stamp, a);
      return;
    }
    ready_.push(a);
    order_.delivered(a.w.stamp.from, [&](const Arrival& next) { ready_.push(next); });
  }

  void release(const Arrival& a) {
    if (a.ucx_owned) {
      g_ucx.ucp_am_data_release(worker_, a.data);
    } else {
      std::free(a.data);
    }
  }

  // Waits for a request (nullptr: done already), progressing the worker; a failure ends the job.
  void finish(ucs_status_ptr_t r, int peer, const char* doing) {
    if (r == nullptr) return;
    if (UCS_PTR_IS_ERR(r)) fail(peer, doing, UCS_PTR_STATUS(r));
    ucs_status_t s;
    while ((s = g_ucx.ucp_request_check_status(r)) == UCS_INPROGRESS) {
      g_ucx.ucp_worker_progress(worker_);
      liveness_.check_due(doing);
    }
    g_ucx.ucp_request_free(r);
    if (s != UCS_OK) fail(peer, doing, s);
  }

  [[noreturn]] void fail(int peer, const char* doing, ucs_status_t s) {
    std::string whom = peer >= 0 ? "rank " + std::to_string(peer) : "its peers";
    boot::abort_job(1, "ucx: rank " + std::to_string(job_.rank) + " failed " + doing + " " + whom +
                           ": " + status_text(s) + ": ending the job");
  }

  void no_rma(const char* why) {
    rma_ = false;
    log::warn("ucx: rank %d sends rendezvous messages pipelined, without a single copy: %s",
              job_.rank, why);
  }

  static void on_send_done(void* request, ucs_status_t status, void* user_data) {
    auto* c = static_cast<SendCopy*>(user_data);
    UcxTransport* t = c->t;
    t->in_flight_bytes_ -= c->len;
    std::free(c);
    g_ucx.ucp_request_free(request);
    if (status != UCS_OK && !t->closing_) {
      // The endpoint's error handler names the peer; this is the same failure seen by a send.
      boot::abort_job(1, "ucx: rank " + std::to_string(t->job_.rank) +
                             " failed sending a fragment: " + status_text(status) +
                             ": ending the job");
    }
  }

  static void on_read_done(void* request, ucs_status_t status, void* user_data) {
    auto* rd = static_cast<Read*>(user_data);
    UcxTransport* t = rd->t;
    g_ucx.ucp_request_free(request);
    if (t->closing_) {  // pml::finalize gave up on it; the rkey goes with the endpoint
      delete rd;
      return;
    }
    if (status != UCS_OK) t->fail(rd->peer, "reading a rendezvous message from", status);
    t->read_done_.push(rd);
  }

  static void on_ep_error(void* arg, ucp_ep_h ep, ucs_status_t status) {
    (void)ep;
    auto* a = static_cast<PeerArg*>(arg);
    if (a->t->closing_) return;
    boot::abort_job(1,
                    "ucx: rank " + std::to_string(a->t->job_.rank) + " lost its endpoint to rank " +
                        std::to_string(a->rank) + " (" + status_text(status) +
                        "): that rank died or left without calling MPI_Finalize; ending the job");
  }

  const boot::JobInfo& job_;
  ucp_context_h context_;
  ucp_worker_h worker_;
  int efd_;
  net::Bell bell_;
  bool rma_ = true;
  bool key_logged_ = false;
  bool closing_ = false;
  size_t in_flight_bytes_ = 0;
  std::vector<ucp_ep_h> eps_;  // by job rank; nullptr for ranks shared memory serves
  std::vector<PeerArg> args_;  // error handler arguments: sized once, never moved
  net::PeerOrder<Arrival> order_;
  Liveness liveness_;
  net::Inbox<Arrival> ready_;                       // in order, for poll()
  net::Inbox<Read*> read_done_;                     // complete reads, for poll()
  int reads_ = 0;                                   // started, not delivered by poll()
  std::unordered_map<uint64_t, ucp_mem_h> mapped_;  // expose() id -> mapping
};

std::string ucx_error(const char* what, ucs_status_t s) {
  return std::string("ucx: ") + what + ": " + g_ucx.ucs_status_string(s);
}

}  // namespace

Status open(const boot::JobInfo& job, std::unique_ptr<net::NetworkTransport>* transport,
            std::vector<uint8_t>* address, std::string* error) {
  TORUSMPI_CHECK(g_ucx.load("ucx", "libucp.so.0", TORUSMPI_UCX_LIBDIR, error));
  ucp_config_t* config = nullptr;
  ucs_status_t s = g_ucx.ucp_config_read(nullptr, nullptr, &config);
  if (s != UCS_OK) {
    *error = ucx_error("ucp_config_read", s);
    return Status::kErrBoot;
  }
  // One node means the network peers are emulated instances on this host. Left to itself UCX
  // would join them through its shared-memory transports, which would make the instances'
  // "network" as fast as memory and skip the code real instances run: keep UCX to the network
  // (tcp, and self for loopback), unless the user chose transports.
  const bool emulated = job.num_nodes == 1;
  if (emulated && std::getenv("UCX_TLS") == nullptr) {
    s = g_ucx.ucp_config_modify(config, "TLS", "tcp,self");
    if (s != UCS_OK) {
      g_ucx.ucp_config_release(config);
      *error = ucx_error("restricting UCX_TLS to tcp,self", s);
      return Status::kErrBoot;
    }
  }
  ucp_params_t params;
  std::memset(&params, 0, sizeof params);
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
  ucp_context_h context = nullptr;
  {
    net::KeepCrashHandlers keep;  // ucp_init opens UCX's transport modules
    s = g_ucx.ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, &params, config, &context);
  }
  g_ucx.ucp_config_release(config);
  if (s != UCS_OK) {
    *error = ucx_error("ucp_init (no usable transport? see UCX_TLS and UCX_NET_DEVICES)", s);
    return Status::kErrBoot;
  }
  ucp_worker_params_t wp;
  std::memset(&wp, 0, sizeof wp);
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  // The pml serializes every call, but with TORUSMPI_ASYNC_PROGRESS its progress thread polls
  // too: one thread at a time, not always the same one, which is SERIALIZED rather than SINGLE.
  wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  ucp_worker_h worker = nullptr;
  s = g_ucx.ucp_worker_create(context, &wp, &worker);
  if (s != UCS_OK) {
    g_ucx.ucp_cleanup(context);
    *error = ucx_error("ucp_worker_create", s);
    return Status::kErrBoot;
  }
  int efd = -1;
  s = g_ucx.ucp_worker_get_efd(worker, &efd);
  if (s != UCS_OK) {
    g_ucx.ucp_worker_destroy(worker);
    g_ucx.ucp_cleanup(context);
    *error = ucx_error("ucp_worker_get_efd", s);
    return Status::kErrBoot;
  }
  auto t = std::make_unique<UcxTransport>(job, context, worker, efd);
  ucp_am_handler_param_t hp;
  std::memset(&hp, 0, sizeof hp);
  hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                  UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
  hp.id = kAmId;
  // Whole messages only, and data we may keep past the callback (delivered later by poll()).
  hp.flags = UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA;
  hp.cb = &UcxTransport::on_am;
  hp.arg = t.get();
  s = g_ucx.ucp_worker_set_am_recv_handler(worker, &hp);
  if (s != UCS_OK) {
    *error = ucx_error("ucp_worker_set_am_recv_handler", s);
    return Status::kErrBoot;  // t's destructor closes the worker
  }
  ucp_address_t* worker_address = nullptr;
  size_t len = 0;
  s = g_ucx.ucp_worker_get_address(worker, &worker_address, &len);
  if (s != UCS_OK) {
    *error = ucx_error("ucp_worker_get_address", s);
    return Status::kErrBoot;
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(worker_address);
  address->assign(bytes, bytes + len);
  g_ucx.ucp_worker_release_address(worker, worker_address);
  TORUSMPI_DEBUG(kPml, "ucx: worker address of %zu B%s", len,
                 emulated && std::getenv("UCX_TLS") == nullptr ? ", transports tcp,self" : "");
  *transport = std::move(t);
  return Status::kOk;
}

}  // namespace torusmpi::pml::ucx
