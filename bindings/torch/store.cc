// The store's server and client (store.h). Keys hold bytes; add() keeps a decimal number, as
// torch's TCPStore does, so get() after add() reads the same text on either store.
#include "store.h"

#include <sched.h>

#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "backend.h"

namespace torusmpi::pt {
namespace {

constexpr int kRequestTag = 1;
constexpr int kReplyTag = 2;

enum class Verb : uint8_t {
  kSet,
  kGet,
  kAdd,
  kCompareSet,
  kDelete,
  kCheck,
  kNumKeys,
  kWait,
  kStop
};
enum class Outcome : uint8_t { kOk, kTimedOut };

// A message: one byte of verb or outcome, a timeout in ms (0: none), then counted byte strings.
struct Message {
  uint8_t head = 0;
  int64_t timeout_ms = 0;
  std::vector<std::string> parts;

  std::vector<char> encode() const {
    std::vector<char> out(1 + 8 + 4);
    out[0] = static_cast<char>(head);
    std::memcpy(&out[1], &timeout_ms, 8);
    const uint32_t n = static_cast<uint32_t>(parts.size());
    std::memcpy(&out[9], &n, 4);
    for (const std::string& p : parts) {
      const uint32_t len = static_cast<uint32_t>(p.size());
      const size_t at = out.size();
      out.resize(at + 4 + len);
      std::memcpy(&out[at], &len, 4);
      std::memcpy(&out[at + 4], p.data(), len);
    }
    return out;
  }

  static Message decode(const std::vector<char>& in) {
    Message m;
    TORCH_CHECK(in.size() >= 13, "torusmpi store: a message of ", in.size(), " bytes");
    m.head = static_cast<uint8_t>(in[0]);
    std::memcpy(&m.timeout_ms, &in[1], 8);
    uint32_t n;
    std::memcpy(&n, &in[9], 4);
    size_t at = 13;
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t len;
      TORCH_CHECK(at + 4 <= in.size(), "torusmpi store: a truncated message");
      std::memcpy(&len, &in[at], 4);
      TORCH_CHECK(at + 4 + len <= in.size(), "torusmpi store: a truncated message");
      m.parts.emplace_back(&in[at + 4], len);
      at += 4 + len;
    }
    return m;
  }
};

void send_message(const Message& m, int dest, int tag, MPI_Comm comm) {
  const std::vector<char> bytes = m.encode();
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, dest, tag, comm);
}

// Receives the message that mprobe matched.
Message receive_matched(MPI_Message* match, const MPI_Status& probed, int* source) {
  int bytes = 0;
  MPI_Get_count(&probed, MPI_BYTE, &bytes);
  std::vector<char> in(bytes);
  MPI_Status status;
  MPI_Mrecv(in.data(), bytes, MPI_BYTE, match, &status);
  if (source) *source = status.MPI_SOURCE;
  return Message::decode(in);
}

std::string as_text(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }
std::vector<uint8_t> as_bytes(const std::string& s) { return {s.begin(), s.end()}; }

// World rank 0's keeper of the keys. A get or wait whose keys are missing waits here, so the
// asking rank sleeps in its receive instead of polling.
class Server {
 public:
  explicit Server(MPI_Comm comm) : comm_(comm), thread_([this] { run(); }) {}
  void join() { thread_.join(); }

 private:
  struct Waiter {
    int rank;
    Verb verb;
    std::vector<std::string> keys;
    std::chrono::steady_clock::time_point deadline;  // max(): none
  };

  void run() {
    int idle = 0;
    while (!stopping_) {
      int flag = 0;
      MPI_Message match;
      MPI_Status probed;
      MPI_Improbe(MPI_ANY_SOURCE, kRequestTag, comm_, &flag, &match, &probed);
      if (flag) {
        int source = -1;
        Message request = receive_matched(&match, probed, &source);
        serve(source, request);
        idle = 0;
        continue;
      }
      expire();
      // Idle for most of a job (torch asks at group creation): back off to a poll every 10 ms,
      // so rank 0's own work keeps its core.
      ++idle;
      if (idle < 100) {
        sched_yield();
      } else {
        const int us = idle < 2000 ? 50 : idle < 3000 ? 1000 : 10000;
        std::this_thread::sleep_for(std::chrono::microseconds(us));
      }
    }
  }

  void reply(int rank, std::vector<std::string> parts, Outcome outcome = Outcome::kOk) {
    Message m;
    m.head = static_cast<uint8_t>(outcome);
    m.parts = std::move(parts);
    send_message(m, rank, kReplyTag, comm_);
  }

  bool has_all(const std::vector<std::string>& keys) const {
    for (const std::string& k : keys) {
      if (!data_.count(k)) return false;
    }
    return true;
  }

  // Answers a get or wait whose keys are all there; false when it must wait.
  bool answer(int rank, Verb verb, const std::vector<std::string>& keys) {
    if (!has_all(keys)) return false;
    if (verb == Verb::kGet) {
      reply(rank, {data_.at(keys[0])});
    } else {
      reply(rank, {});
    }
    return true;
  }

  void wake() {
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      it = answer(it->rank, it->verb, it->keys) ? waiters_.erase(it) : it + 1;
    }
  }

  void expire() {
    const auto now = std::chrono::steady_clock::now();
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (now < it->deadline) {
        ++it;
        continue;
      }
      std::string missing;
      for (const std::string& k : it->keys) {
        if (!data_.count(k)) missing += (missing.empty() ? "" : ", ") + k;
      }
      reply(it->rank, {missing}, Outcome::kTimedOut);
      it = waiters_.erase(it);
    }
  }

  void serve(int rank, const Message& m) {
    const auto& p = m.parts;
    switch (static_cast<Verb>(m.head)) {
      case Verb::kSet:
        data_[p.at(0)] = p.at(1);
        reply(rank, {});
        wake();
        break;
      case Verb::kAdd: {
        auto it = data_.find(p.at(0));
        const int64_t sum = (it == data_.end() ? 0 : std::stoll(it->second)) + std::stoll(p.at(1));
        data_[p.at(0)] = std::to_string(sum);
        reply(rank, {data_[p.at(0)]});
        wake();
        break;
      }
      case Verb::kCompareSet: {
        // As TCPStore: a missing key is set when nothing was expected; the answer is the value.
        auto it = data_.find(p.at(0));
        if (it == data_.end()) {
          if (p.at(1).empty()) data_[p.at(0)] = p.at(2);
          reply(rank, {p.at(1).empty() ? p.at(2) : p.at(1)});
        } else {
          if (it->second == p.at(1)) it->second = p.at(2);
          reply(rank, {it->second});
        }
        wake();
        break;
      }
      case Verb::kDelete:
        reply(rank, {data_.erase(p.at(0)) ? "1" : "0"});
        break;
      case Verb::kCheck:
        reply(rank, {has_all(p) ? "1" : "0"});
        break;
      case Verb::kNumKeys:
        reply(rank, {std::to_string(data_.size())});
        break;
      case Verb::kGet:
      case Verb::kWait: {
        const Verb verb = static_cast<Verb>(m.head);
        if (answer(rank, verb, p)) break;
        auto deadline = std::chrono::steady_clock::time_point::max();
        if (m.timeout_ms > 0) {
          deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(m.timeout_ms);
        }
        waiters_.push_back(Waiter{rank, verb, p, deadline});
        break;
      }
      case Verb::kStop:
        stopping_ = true;
        reply(rank, {});
        break;
    }
  }

  MPI_Comm comm_;
  std::map<std::string, std::string> data_;
  std::vector<Waiter> waiters_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

class MpiStore : public c10d::Store {
 public:
  MpiStore() {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_rank(comm_, &rank_);
    if (rank_ == 0) server_ = std::make_unique<Server>(comm_);
  }

  void shutdown() {
    // Every rank is past its last use of the store before the server stops.
    MPI_Barrier(comm_);
    if (server_) {
      call(Verb::kStop, {}, 0, "stop");
      server_->join();
      server_.reset();
    }
    MPI_Comm_free(&comm_);
  }

  void set(const std::string& key, const std::vector<uint8_t>& value) override {
    call(Verb::kSet, {key, as_text(value)}, 0, key);
  }
  std::vector<uint8_t> compareSet(const std::string& key, const std::vector<uint8_t>& expected,
                                  const std::vector<uint8_t>& desired) override {
    return as_bytes(call(Verb::kCompareSet, {key, as_text(expected), as_text(desired)}, 0, key)[0]);
  }
  std::vector<uint8_t> get(const std::string& key) override {
    return as_bytes(call(Verb::kGet, {key}, timeout_.count(), key)[0]);
  }
  int64_t add(const std::string& key, int64_t value) override {
    return std::stoll(call(Verb::kAdd, {key, std::to_string(value)}, 0, key)[0]);
  }
  bool deleteKey(const std::string& key) override {
    return call(Verb::kDelete, {key}, 0, key)[0] == "1";
  }
  bool check(const std::vector<std::string>& keys) override {
    return call(Verb::kCheck, keys, 0, "check")[0] == "1";
  }
  int64_t getNumKeys() override { return std::stoll(call(Verb::kNumKeys, {}, 0, "count")[0]); }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    call(Verb::kWait, keys, timeout.count(), "wait");
  }

 private:
  // One request and its answer; a thread at a time, so answers come back in order.
  std::vector<std::string> call(Verb verb, std::vector<std::string> parts, int64_t timeout_ms,
                                const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    Message request;
    request.head = static_cast<uint8_t>(verb);
    request.timeout_ms = timeout_ms;
    request.parts = std::move(parts);
    send_message(request, 0, kRequestTag, comm_);
    MPI_Message match;
    MPI_Status probed;
    MPI_Mprobe(0, kReplyTag, comm_, &match, &probed);
    Message answer = receive_matched(&match, probed, nullptr);
    TORCH_CHECK(static_cast<Outcome>(answer.head) == Outcome::kOk, "torusmpi store: ", what,
                ": timed out after ", timeout_ms, " ms waiting for key(s) ",
                answer.parts.empty() ? std::string() : answer.parts[0]);
    return answer.parts;
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = -1;
  std::mutex mu_;
  std::unique_ptr<Server> server_;
};

std::mutex store_mu;
c10::intrusive_ptr<MpiStore> the_store;

}  // namespace

c10::intrusive_ptr<c10d::Store> world_store() {
  std::lock_guard<std::mutex> lock(store_mu);
  if (!the_store) {
    ensure_mpi();
    the_store = c10::make_intrusive<MpiStore>();
  }
  return the_store;
}

void shutdown_store() {
  std::lock_guard<std::mutex> lock(store_mu);
  if (!the_store) return;
  the_store->shutdown();
  the_store.reset();
}

}  // namespace torusmpi::pt
