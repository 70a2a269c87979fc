// Start and end of MPI: MPI_Init(_thread), MPI_Finalize, MPI_Abort and the queries about them.
#include <pthread.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "boot/boot.h"
#include "coll/sched/exec.h"
#include "coll/select/select.h"
#include "coll/stats.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "device/device.h"
#include "mpi/attr.h"
#include "mpi/datatype.h"
#include "mpi/device_stage.h"
#include "mpi/dynamic.h"
#include "mpi/errors.h"
#include "mpi/group.h"
#include "mpi/hang.h"
#include "mpi/runtime.h"
#include "pml/ina/client.h"
#include "pml/net.h"
#include "pml/pml.h"
#include "pml/shm/shm.h"
#include "topo/host.h"
#include "topo/machine.h"

namespace torusmpi::mpi {

Runtime g_runtime;  // runtime.h

namespace {

// Which thread level torusmpi gives: all of them. At MPI_THREAD_MULTIPLE every entry point takes
// the library's lock and every wait lets it go as it pauses (progress.h); below it the lock is
// never taken.
constexpr int kMaxThreadLevel = MPI_THREAD_MULTIPLE;

int init(const char* fn, int required, int* provided) {
  Runtime& rt = runtime();
  if (rt.phase == Phase::kActive) {
    return raise_error(MPI_COMM_WORLD, MPI_ERR_OTHER, fn, "MPI is already initialized");
  }
  if (rt.phase == Phase::kFinalized) return require_active(fn);  // says why, then aborts
  ompi_mpi_state = ompi::kStateInitStarted;
  std::vector<std::string> errors, warnings;
  params::load(&errors, &warnings);
  std::string unknown;
  log::set_mask(log::parse_mask(params::debug(), &unknown));

  // The host's topology first: reading it sets an environment variable for a moment (host.cc),
  // which no thread of PMIx may read meanwhile.
  topo::host_info();
  // The shared-memory segment is published in the same exchange as the cards.
  std::string boot_error;
  if (boot::init(&rt.job, &boot_error) != Status::kOk) {
    boot::abort_job(MPI_ERR_OTHER, std::string(fn) + ": " + boot_error);
  }
  // The emulated machine before the shared-memory transport attaches (it charges links by chip).
  // Every rank reads the same TORUSMPI_INSTANCE, so every rank stops alike. A host job across
  // nodes is a host instance per node, each rank where the launcher put it.
  std::vector<int> nodes;
  if (rt.job.num_nodes > 1) boot::rank_nodes(&nodes);
  if (topo::load(rt.job.size, nodes, &boot_error) != Status::kOk) {
    boot::abort_job(MPI_ERR_ARG, std::string(fn) + ": " + boot_error);
  }
  if (topo::machine().emulated() && topo::machine().instances == 1 && rt.job.num_nodes > 1) {
    boot::abort_job(MPI_ERR_ARG, std::string(fn) + ": TORUSMPI_INSTANCE=" + topo::machine().name +
                                     " emulates its chips on one host, but this job spans " +
                                     std::to_string(rt.job.num_nodes) +
                                     " nodes: run it on one node, or use TORUSMPI_INSTANCE=host");
  }
  // Bound before the segment is touched, so its pages land on this rank's NUMA node.
  topo::bind_process(params::bind(), rt.job.rank, rt.job.local_peers);
  // Device memory once the machine is known (the rank's chip), before the transports: the
  // shared-memory one publishes this rank's HBM for its local peers to map.
  if (device::init(rt.job.rank, &boot_error) != Status::kOk) {
    boot::abort_job(MPI_ERR_NO_MEM, std::string(fn) + ": " + boot_error);
  }
  // The switch is asked before the exchange of the cards, and each rank's answer published, so
  // that every rank knows whether it answered them all (client.h: the job uses it or not, as one).
  constexpr char kSwitchAnsweredKey[] = "torusmpi.switch.answered";
  const bool switch_named = !params::switch_address().empty();
  if (switch_named) {
    const uint8_t answered = pml::ina::init(std::hash<std::string>{}(rt.job.nspace)) ? 1 : 0;
    boot::put(kSwitchAnsweredKey, &answered, sizeof answered);
  }
  // Both transports publish their endpoints before the one exchange of the cards.
  const std::vector<int> remote = pml::net::remote_peers(rt.job);
  if (pml::shm::prepare(rt.job, &boot_error) != Status::kOk ||
      pml::net::prepare(rt.job, remote, &boot_error) != Status::kOk ||
      boot::exchange_cards(library_version(), &rt.local_peers, &boot_error) != Status::kOk) {
    boot::abort_job(MPI_ERR_OTHER, std::string(fn) + ": " + boot_error);
  }
  // Ranks that outnumber the hardware threads they may run on must give their core away when
  // they wait: the node's count, or the CPUs the cards say each rank may use (two ranks bound to
  // one core spun their waits away: osu_latency 8 B 32 us, Open MPI 0.8). Known before the
  // transports attach, which size their copies by it.
  const int threads = topo::host_info().node_pus;
  const bool crowded = boot::crowded(rt.local_peers);
  progress::set_oversubscribed(rt.job.local_size > threads, crowded);
  TORUSMPI_DEBUG(kProgress, "%d local rank(s) on %d hardware thread(s)%s%s", rt.job.local_size,
                 threads, crowded ? ", bound to fewer CPUs than they are" : "",
                 progress::oversubscribed() ? ": oversubscribed, waits yield at once" : "");
  if (pml::shm::attach(rt.job, rt.local_peers, &boot_error) != Status::kOk ||
      pml::net::attach(rt.job, remote, &boot_error) != Status::kOk) {
    boot::abort_job(MPI_ERR_OTHER, std::string(fn) + ": " + boot_error);
  }
  // Parameter problems are reported once per job, by rank 0, now that ranks are known.
  if (rt.job.rank == 0) {
    for (const std::string& e : errors) log::warn("%s", e.c_str());
    for (const std::string& w : warnings) log::warn("%s", w.c_str());
    if (!unknown.empty()) {
      std::string known;
      for (unsigned s = 0; s < static_cast<unsigned>(log::Subsystem::kCount); ++s) {
        known += std::string(log::subsystem_name(static_cast<log::Subsystem>(s))) + ", ";
      }
      log::warn("TORUSMPI_DEBUG names unknown subsystem(s) %s; known: %sall", unknown.c_str(),
                known.c_str());
    }
  }
  for (const params::Info& p : params::all()) {
    TORUSMPI_DEBUG(kParams, "%s (%s, default \"%s\")", p.env, params::type_name(p.type),
                   p.default_text);
  }

  rt.world.context = pml::kWorldContext;
  rt.world.rank = rt.job.rank;
  rt.world.size = rt.job.size;
  rt.world.errhandler = MPI_ERRORS_ARE_FATAL;
  rt.world.name = "MPI_COMM_WORLD";
  rt.self.context = pml::kSelfContext;
  rt.self.rank = 0;
  rt.self.size = 1;
  rt.self.world_ranks = {rt.job.rank};
  rt.self.errhandler = MPI_ERRORS_ARE_FATAL;
  rt.self.name = "MPI_COMM_SELF";
  rt.world.handle = MPI_COMM_WORLD;
  rt.self.handle = MPI_COMM_SELF;
  contexts_init();
  Status s = pml::init(rt.job.rank, rt.job.size);
  if (s != Status::kOk) {
    boot::abort_job(MPI_ERR_OTHER,
                    std::string(fn) + ": point-to-point start failed: " + status_string(s));
  }
  if (switch_named) {
    std::string deaf;
    int deaf_count = 0;
    for (int r = 0; r < rt.job.size; ++r) {
      std::vector<uint8_t> v;
      if (boot::get(r, kSwitchAnsweredKey, &v) == Status::kOk && v.size() == 1 && v[0] == 1)
        continue;
      if (deaf_count < 8) deaf += (deaf.empty() ? "" : ", ") + std::to_string(r);
      ++deaf_count;
    }
    if (deaf_count == rt.job.size) deaf.clear();
    if (deaf_count > 8) deaf += ", ...";
    pml::ina::agree(deaf_count == 0, deaf, rt.job.rank == 0);
  }
  // Collective selection: a bad rule file or a forced token that names nothing is an error the
  // user asked for by name, so the job stops here rather than run with other choices.
  std::string select_error;
  if (coll::selection_load(&select_error) != Status::kOk) {
    boot::abort_job(MPI_ERR_ARG, std::string(fn) + ": " + select_error);
  }
  coll::exec_init();
  hang_init(rt);
  progress::set_threaded(required >= MPI_THREAD_MULTIPLE);
  if (params::async_progress()) progress::start_async();
  // Written through the handles, so they land in the executable's copies of the objects.
  MPI_COMM_WORLD->impl = &rt.world;
  MPI_COMM_SELF->impl = &rt.self;
  comm_sync_handle(&rt.world);
  comm_sync_handle(&rt.self);
  predefined_datatypes_init();

  rt.thread_level = required < kMaxThreadLevel ? required : kMaxThreadLevel;
  if (rt.thread_level < MPI_THREAD_SINGLE) rt.thread_level = MPI_THREAD_SINGLE;
  if (provided != nullptr) *provided = rt.thread_level;
  rt.main_thread = pthread_self();
  rt.phase = Phase::kActive;
  ompi_mpi_state = ompi::kStateInitCompleted;
  dynamic_init(fn);  // a spawned job connects to its parents
  TORUSMPI_DEBUG(kMpi, "%s done: rank %d of %d, thread level %d", fn, rt.world.rank, rt.world.size,
                 rt.thread_level);
  return MPI_SUCCESS;
}

// TORUSMPI_STATS=1, after this rank's last message: its link bytes go into the node's totals, and
// the fence (through the launcher, over no emulated link) makes them complete before rank 0 prints
// them, then its own collective calls. On stderr, so an application's stdout stays its own.
//
// With several instances or nodes, each rank's network bytes go through the launcher's exchange
// too, and rank 0 prints them summed per chip: torusmpi-stats nic <instance>.<chip> bytes=N, the
// bytes that chip's NIC received (every chip of every instance, zeros included). A host job on
// several nodes is an instance per node (topo::load), so each node's NIC has its line, <node>.0,
// nodes numbered in the order of their lowest rank.
namespace {
// A count rank r put under key for print_stats (0 when it put none).
uint64_t published_count(int r, const char* key) {
  std::vector<uint8_t> v;
  uint64_t n = 0;
  if (boot::get(r, key, &v) == Status::kOk && v.size() == sizeof n)
    std::memcpy(&n, v.data(), sizeof n);
  return n;
}
}  // namespace

void print_stats(const boot::JobInfo& job) {
  constexpr char kNicKey[] = "torusmpi.nic";
  constexpr char kStagedKey[] = "torusmpi.staged";
  constexpr char kSwitchKey[] = "torusmpi.switch";
  pml::shm::publish_link_stats();
  const topo::Machine& m = topo::machine();
  const bool network = m.instances > 1 || job.num_nodes > 1;
  // What came from the switch came through the chip's NIC too.
  uint64_t mine = pml::network_bytes_received() + pml::ina::counters().bytes_in;
  if (network) boot::put(kNicKey, &mine, sizeof mine);
  const pml::ina::Counters& sw = pml::ina::counters();
  const uint64_t switch_counts[] = {sw.blocks,   sw.bytes_in,  sw.bytes_out, sw.retransmits,
                                    sw.timeouts, sw.fallbacks, sw.rescued};
  const bool switched = !params::switch_address().empty();
  if (switched) boot::put(kSwitchKey, switch_counts, sizeof switch_counts);
  const uint64_t staged = device::counters().staged;
  boot::put(kStagedKey, &staged, sizeof staged);
  boot::exchange();
  if (job.rank != 0) return;
  pml::shm::print_link_stats(stderr);
  // Every device byte that passed through the library's host memory, the whole job's.
  uint64_t staged_all = 0;
  for (int r = 0; r < job.size; ++r) staged_all += published_count(r, kStagedKey);
  std::fprintf(stderr, "torusmpi-stats staging bytes=%llu\n",
               static_cast<unsigned long long>(staged_all));
  if (network) {
    const int chips = m.emulated() ? m.chips() : 1;
    std::vector<uint64_t> nic(static_cast<size_t>(chips) * m.instances, 0);
    for (int r = 0; r < job.size; ++r) {
      topo::Place at = topo::place(m, r);
      nic[static_cast<size_t>(at.instance) * chips + (m.emulated() ? at.chip : 0)] +=
          published_count(r, kNicKey);
    }
    for (size_t i = 0; i < nic.size(); ++i) {
      std::fprintf(stderr, "torusmpi-stats nic %zu.%zu bytes=%llu\n", i / chips, i % chips,
                   static_cast<unsigned long long>(nic[i]));
    }
  }
  if (switched) {
    // The job's blocks through the switch, summed over its ranks.
    constexpr int kCounts = sizeof switch_counts / sizeof switch_counts[0];
    uint64_t sum[kCounts] = {};
    for (int r = 0; r < job.size; ++r) {
      std::vector<uint8_t> v;
      if (boot::get(r, kSwitchKey, &v) != Status::kOk || v.size() != sizeof sum) continue;
      uint64_t got[kCounts];
      std::memcpy(got, v.data(), sizeof got);
      for (int i = 0; i < kCounts; ++i) sum[i] += got[i];
    }
    std::fprintf(stderr,
                 "torusmpi-stats switch blocks=%llu bytes_in=%llu bytes_out=%llu retransmits=%llu "
                 "timeouts=%llu fallbacks=%llu rescued=%llu\n",
                 static_cast<unsigned long long>(sum[0]), static_cast<unsigned long long>(sum[1]),
                 static_cast<unsigned long long>(sum[2]), static_cast<unsigned long long>(sum[3]),
                 static_cast<unsigned long long>(sum[4]), static_cast<unsigned long long>(sum[5]),
                 static_cast<unsigned long long>(sum[6]));
  }
  coll::stats_print(stderr);
  std::fflush(stderr);
}

}  // namespace
}  // namespace torusmpi::mpi

using torusmpi::mpi::Phase;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;
using torusmpi::mpi::runtime;

int PMPI_Init(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  return torusmpi::mpi::init("MPI_Init", MPI_THREAD_SINGLE, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Init);

int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  (void)argc;
  (void)argv;
  constexpr const char* kFn = "MPI_Init_thread";
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE) {
    // Not fatal-worthy on its own: MPI lets an implementation pick the level it offers.
    torusmpi::log::warn("%s: required thread level %d is not one of MPI_THREAD_SINGLE..MULTIPLE",
                        kFn, required);
  }
  return torusmpi::mpi::init(kFn, required, provided);
}
TORUSMPI_WEAK_ALIAS(MPI_Init_thread);

int PMPI_Initialized(int* flag) {
  if (flag == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, "MPI_Initialized", "flag argument is NULL");
  *flag = runtime().phase != Phase::kBeforeInit;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Initialized);

int PMPI_Finalized(int* flag) {
  if (flag == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, "MPI_Finalized", "flag argument is NULL");
  *flag = runtime().phase == Phase::kFinalized;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Finalized);

int PMPI_Finalize(void) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Finalize";
  if (int err = require_active(kFn)) return err;
  torusmpi::mpi::Runtime& rt = runtime();
  ompi_mpi_state = torusmpi::mpi::ompi::kStateFinalizeStarted;
  // MPI: MPI_COMM_SELF's attributes are deleted first, while MPI still works, then the world's.
  torusmpi::mpi::attr_delete_all(torusmpi::mpi::AttrKind::kComm, MPI_COMM_SELF);
  ompi_mpi_state = torusmpi::mpi::ompi::kStateFinalizePastCommSelfDestruct;
  torusmpi::mpi::attr_delete_all(torusmpi::mpi::AttrKind::kComm, MPI_COMM_WORLD);
  torusmpi::mpi::streams_finalize();
  torusmpi::progress::stop_async();
  torusmpi::flight::Scope record(kFn, 0, "", 0, -1, torusmpi::flight::kNoPeer);
  // A rank that a dying switch left without a result asks the others for it (rescue.h): they
  // answer until every rank is here.
  if (torusmpi::pml::ina::in_use()) {
    torusmpi::coll::Args a;
    a.coll = torusmpi::coll::Coll::kBarrier;
    torusmpi::coll::RunArgs r;
    std::string why;
    if (rt.world.team.run(a, r, &why) != torusmpi::Status::kOk)
      torusmpi::log::warn("MPI_Finalize: the barrier before the switch's results go failed: %s",
                          why.c_str());
  }
  // Communicators the application did not free, and freed ones kept for runs then in flight.
  torusmpi::mpi::comms_finalize();
  torusmpi::coll::exec_finalize();
  torusmpi::pml::ina::finalize();
  torusmpi::pml::finalize();
  if (torusmpi::params::stats()) torusmpi::mpi::print_stats(rt.job);
  torusmpi::Status s = torusmpi::boot::finalize();
  if (s == torusmpi::Status::kErrTimeout) {
    torusmpi::mpi::hang_abort(
        "waited TORUSMPI_TIMEOUT=" + std::to_string(torusmpi::params::timeout_s()) +
        " s in MPI_Finalize's closing barrier");
  }
  record.finish(torusmpi::flight::State::kDone);
  torusmpi::mpi::hang_finalize();
  // Every rank is past its last message: the segment can go.
  torusmpi::pml::net::detach();
  torusmpi::pml::shm::detach();
  torusmpi::device::finalize();
  torusmpi::progress::set_threaded(false);  // the lock is let go at the end, as it was taken
  if (s != torusmpi::Status::kOk) {
    return raise_error(MPI_COMM_WORLD, torusmpi::mpi::error_class_of(s), kFn,
                       "the closing barrier over the job failed: %s", torusmpi::status_string(s));
  }
  rt.phase = Phase::kFinalized;
  ompi_mpi_state = torusmpi::mpi::ompi::kStateFinalizeCompleted;
  MPI_COMM_WORLD->impl = nullptr;
  MPI_COMM_SELF->impl = nullptr;
  TORUSMPI_DEBUG(kMpi, "MPI_Finalize done");
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Finalize);

int PMPI_Abort(MPI_Comm comm, int errorcode) {
  // MPI_Abort works whatever comm is: it is the way out of every mess.
  torusmpi::mpi::Comm* c = torusmpi::mpi::comm_impl(comm);
  std::string where = c != nullptr ? c->name : std::string("an invalid communicator");
  torusmpi::boot::abort_job(errorcode, "MPI_Abort called on " + where + " by rank " +
                                           std::to_string(runtime().job.rank) + " with errorcode " +
                                           std::to_string(errorcode) +
                                           ": ending every rank of the job");
}
TORUSMPI_WEAK_ALIAS(MPI_Abort);

int PMPI_Query_thread(int* provided) {
  constexpr const char* kFn = "MPI_Query_thread";
  if (int err = require_active(kFn)) return err;
  if (provided == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "provided argument is NULL");
  *provided = runtime().thread_level;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Query_thread);

int PMPI_Is_thread_main(int* flag) {
  constexpr const char* kFn = "MPI_Is_thread_main";
  if (int err = require_active(kFn)) return err;
  if (flag == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "flag argument is NULL");
  *flag = pthread_equal(pthread_self(), runtime().main_thread) != 0;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Is_thread_main);
