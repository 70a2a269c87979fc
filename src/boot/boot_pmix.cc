// PMIx implementation of the bootstrap, with the singleton rule.
#include <pmix.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include "boot/boot.h"
#include "core/log.h"
#include "core/params.h"

extern char** environ;

namespace torusmpi::boot {
namespace {

JobInfo g_job;
bool g_initialized = false;
pmix_proc_t g_me;
std::map<std::string, std::vector<uint8_t>> g_singleton_kv;  // the modex of a one-rank job
constexpr char kCardKey[] = "torusmpi.card";

size_t g_handler = 0;
bool g_handler_registered = false;

// The processes Open MPI starts ranks from: mpirun (also named mpiexec, orterun) on its node,
// orted elsewhere, and PRRTE's prterun/prted.
constexpr const char* kLauncherNames[] = {"mpirun",  "mpiexec", "orterun", "orted",
                                          "prterun", "prted",   "prte"};

constexpr const char* kLauncherPrefixes[] = {"PMIX_NAMESPACE",   "PMIX_RANK", "PMIX_SERVER_URI",
                                             "OMPI_COMM_WORLD_", "PMI_RANK",  "PMI_SIZE",
                                             "PMI_FD",           "PMI_PORT"};

// Reads an integer-valued key of `proc`; the value may come in any unsigned/signed width.
bool get_int(const pmix_proc_t& proc, const char* key, int* out) {
  pmix_value_t* val = nullptr;
  if (PMIx_Get(&proc, key, nullptr, 0, &val) != PMIX_SUCCESS || val == nullptr) return false;
  bool ok = true;
  switch (val->type) {
    case PMIX_UINT32:
      *out = static_cast<int>(val->data.uint32);
      break;
    case PMIX_UINT16:
      *out = val->data.uint16;
      break;
    case PMIX_INT32:
      *out = val->data.int32;
      break;
    case PMIX_INT:
      *out = val->data.integer;
      break;
    case PMIX_UINT:
      *out = static_cast<int>(val->data.uint);
      break;
    case PMIX_PROC_RANK:
      *out = static_cast<int>(val->data.rank);
      break;
    default:
      ok = false;
  }
  PMIX_VALUE_RELEASE(val);
  return ok;
}

bool get_string(const pmix_proc_t& proc, const char* key, std::string* out) {
  pmix_value_t* val = nullptr;
  if (PMIx_Get(&proc, key, nullptr, 0, &val) != PMIX_SUCCESS || val == nullptr) return false;
  bool ok = val->type == PMIX_STRING && val->data.string != nullptr;
  if (ok) *out = val->data.string;
  PMIX_VALUE_RELEASE(val);
  return ok;
}

std::vector<int> parse_rank_list(const std::string& text) {
  std::vector<int> ranks;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    if (comma > pos) ranks.push_back(std::atoi(text.substr(pos, comma - pos).c_str()));
    pos = comma + 1;
  }
  return ranks;
}

std::string local_hostname() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

void init_singleton() {
  g_job = JobInfo();
  g_job.singleton = true;
  g_job.nspace = "singleton." + std::to_string(getpid());
  g_job.local_peers = {0};
  g_job.hostname = local_hostname();
}

[[noreturn]] void launcher_lost() {
  // The launcher carried this rank's stderr: the line reaches a file or terminal, if any.
  log::error(
      "the launcher's PMIx server is gone (mpirun, or the daemon of node %s, has ended): "
      "rank %d (pid %d) exits",
      g_job.hostname.c_str(), g_job.rank, static_cast<int>(getpid()));
  _exit(kExitLauncherLost);
}

// Abnormal ends of a process only: a normal one (PMIX_PROC_TERMINATED) may come from a rank that
// has passed the closing barrier while this one has not yet left it.
constexpr pmix_status_t kPeerLoss[] = {PMIX_ERR_PROC_ABORTED, PMIX_ERR_PROC_ABORTED_BY_SIG,
                                       PMIX_ERR_PROC_TERM_WO_SYNC, PMIX_ERR_PROC_KILLED_BY_CMD,
                                       PMIX_ERR_EXIT_NONZERO_TERM};

bool is_peer_loss(pmix_status_t status) {
  for (pmix_status_t s : kPeerLoss) {
    if (s == status) return true;
  }
  return false;
}

// Runs on PMIx's thread, which must not be blocked by PMIx calls of its own: ending the job goes
// through a thread of its own.
void on_event(size_t, pmix_status_t status, const pmix_proc_t* source, pmix_info_t*, size_t,
              pmix_info_t*, size_t, pmix_event_notification_cbfunc_fn_t done, void* done_data) {
  const bool ours = source != nullptr && PMIX_CHECK_NSPACE(source->nspace, g_me.nspace);
  const int from = ours && source->rank < static_cast<pmix_rank_t>(g_job.size)
                       ? static_cast<int>(source->rank)
                       : -1;
  TORUSMPI_DEBUG(kBoot, "PMIx event %s from %s rank %d", PMIx_Error_string(status),
                 source != nullptr ? source->nspace : "?", from);
  if (status == PMIX_ERR_LOST_CONNECTION || status == PMIX_ERR_UNREACH) launcher_lost();
  if (is_peer_loss(status) && from >= 0 && from != g_job.rank) {
    std::string msg = "rank " + std::to_string(from) +
                      " ended abnormally, as the launcher reports (" + PMIx_Error_string(status) +
                      "): rank " + std::to_string(g_job.rank) + " ends the job";
    std::thread([msg] { abort_job(1, msg); }).detach();
  }
  if (done != nullptr) done(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, done_data);
}

void register_events() {
  std::vector<pmix_status_t> codes = {PMIX_ERR_LOST_CONNECTION, PMIX_ERR_UNREACH};
  codes.insert(codes.end(), std::begin(kPeerLoss), std::end(kPeerLoss));
  // Blocking without a callback: the return value is the handler's id, or an error.
  pmix_status_t rc = PMIx_Register_event_handler(codes.data(), codes.size(), nullptr, 0, on_event,
                                                 nullptr, nullptr);
  g_handler_registered = rc >= 0;
  if (g_handler_registered) g_handler = static_cast<size_t>(rc);
  TORUSMPI_DEBUG(kBoot, "PMIx event handler: %s",
                 g_handler_registered ? "registered" : PMIx_Error_string(rc));
}

// A rank stopped (SIGSTOP, a debugger's stop) cannot run its event handler: the kernel kills it
// when the launcher process that started it ends. Only under Open MPI's own launcher processes,
// which outlive their ranks: a wrapper the user put between them may legitimately end first.
void die_with_launcher() {
  const pid_t parent = getppid();
  std::ifstream comm("/proc/" + std::to_string(parent) + "/comm");
  std::string name;
  if (!std::getline(comm, name)) return;
  bool launcher = false;
  for (const char* n : kLauncherNames) launcher = launcher || name == n;
  if (!launcher) return;
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return;
  // The launcher may have gone before the request was made.
  if (getppid() != parent) launcher_lost();
}

Status init_pmix(std::string* error) {
  g_job = JobInfo();
  g_job.singleton = false;
  g_job.nspace = g_me.nspace;
  g_job.rank = static_cast<int>(g_me.rank);
  pmix_proc_t wild;
  PMIX_PROC_CONSTRUCT(&wild);
  PMIX_LOAD_PROCID(&wild, g_me.nspace, PMIX_RANK_WILDCARD);
  if (!get_int(wild, PMIX_JOB_SIZE, &g_job.size)) {
    *error = "PMIx server gave no " PMIX_JOB_SIZE;
    return Status::kErrBoot;
  }
  if (!get_int(g_me, PMIX_LOCAL_RANK, &g_job.local_rank)) g_job.local_rank = g_job.rank;
  if (!get_int(wild, PMIX_LOCAL_SIZE, &g_job.local_size)) g_job.local_size = g_job.size;
  if (!get_int(g_me, PMIX_NODE_RANK, &g_job.node_rank)) g_job.node_rank = g_job.local_rank;
  if (!get_int(wild, PMIX_NUM_NODES, &g_job.num_nodes)) g_job.num_nodes = 1;
  if (!get_int(g_me, PMIX_APPNUM, &g_job.appnum)) g_job.appnum = 0;
  if (!get_int(wild, PMIX_UNIV_SIZE, &g_job.universe_size)) g_job.universe_size = g_job.size;
  // Open MPI reports slots, which an oversubscribed job exceeds; the universe holds the job.
  if (g_job.universe_size < g_job.size) g_job.universe_size = g_job.size;
  std::string peers;
  if (get_string(wild, PMIX_LOCAL_PEERS, &peers)) g_job.local_peers = parse_rank_list(peers);
  if (g_job.local_peers.empty()) {
    for (int r = 0; r < g_job.size; ++r) g_job.local_peers.push_back(r);
  }
  if (!get_string(g_me, PMIX_HOSTNAME, &g_job.hostname)) g_job.hostname = local_hostname();
  return Status::kOk;
}

}  // namespace

std::string launcher_variables() {
  std::string found;
  for (char** e = environ; e && *e; ++e) {
    for (const char* prefix : kLauncherPrefixes) {
      if (std::strncmp(*e, prefix, std::strlen(prefix)) == 0) {
        found += (found.empty() ? "" : ", ") + std::string(*e, std::strcspn(*e, "="));
        break;
      }
    }
  }
  return found;
}

Status init(JobInfo* job, std::string* error) {
  if (g_initialized) {
    *job = g_job;
    return Status::kOk;
  }
  PMIX_PROC_CONSTRUCT(&g_me);
  pmix_status_t rc = PMIx_Init(&g_me, nullptr, 0);
  if (rc == PMIX_SUCCESS) {
    Status s = init_pmix(error);
    if (s != Status::kOk) {
      PMIx_Finalize(nullptr, 0);
      return s;
    }
    register_events();
    die_with_launcher();
  } else {
    std::string vars = launcher_variables();
    if (!vars.empty()) {
      *error = std::string("launched with ") + vars + " set, but PMIx_Init failed (" +
               PMIx_Error_string(rc) + "): the launcher's PMIx server cannot be reached";
      if (std::getenv("PMI_RANK") != nullptr && std::getenv("PMIX_RANK") == nullptr) {
        *error +=
            "; this looks like a PMI-1/PMI-2 launcher (MPICH's mpiexec?), and torusmpi "
            "needs a PMIx launcher such as Open MPI's mpirun";
      }
      return Status::kErrBoot;
    }
    init_singleton();
  }
  g_initialized = true;
  log::set_rank(g_job.rank);
  TORUSMPI_DEBUG(kBoot, "%s job %s: rank %d of %d, local %d of %d, %d node(s), host %s",
                 g_job.singleton ? "singleton" : "PMIx", g_job.nspace.c_str(), g_job.rank,
                 g_job.size, g_job.local_rank, g_job.local_size, g_job.num_nodes,
                 g_job.hostname.c_str());
  *job = g_job;
  return Status::kOk;
}

bool initialized() { return g_initialized; }
const JobInfo& job() { return g_job; }

bool rank_nodes(std::vector<int>* node_of) {
  if (!g_initialized || g_job.singleton) return false;
  // Job data from the launcher, the same on every rank: every rank comes to the same map.
  std::vector<int> of(g_job.size);
  std::map<std::string, int> index;
  for (int r = 0; r < g_job.size; ++r) {
    pmix_proc_t proc;
    PMIX_PROC_CONSTRUCT(&proc);
    PMIX_LOAD_PROCID(&proc, g_me.nspace, static_cast<pmix_rank_t>(r));
    std::string host;
    if (!get_string(proc, PMIX_HOSTNAME, &host)) return false;
    of[r] = index.emplace(host, static_cast<int>(index.size())).first->second;
  }
  *node_of = std::move(of);
  return true;
}

Status fence(int timeout_s) {
  if (!g_initialized) return Status::kErrInternal;
  if (g_job.singleton) return Status::kOk;
  pmix_info_t info;
  PMIX_INFO_CONSTRUCT(&info);
  if (timeout_s > 0) PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout_s, PMIX_INT);
  pmix_status_t rc = PMIx_Fence(nullptr, 0, timeout_s > 0 ? &info : nullptr, timeout_s > 0);
  PMIX_INFO_DESTRUCT(&info);
  if (rc == PMIX_ERR_TIMEOUT) return Status::kErrTimeout;
  return rc == PMIX_SUCCESS ? Status::kOk : Status::kErrPeerGone;
}

Status finalize() {
  if (!g_initialized) return Status::kOk;
  Status s = Status::kOk;
  if (!g_job.singleton) {
    s = fence(static_cast<int>(params::timeout_s()));
    // A launcher that ends first, after the closing barrier, is no longer a loss.
    if (g_handler_registered) PMIx_Deregister_event_handler(g_handler, nullptr, nullptr);
    g_handler_registered = false;
    PMIx_Finalize(nullptr, 0);
  }
  g_singleton_kv.clear();
  g_initialized = false;
  return s;
}

Status put(const std::string& key, const void* data, size_t len) {
  if (!g_initialized) return Status::kErrInternal;
  if (g_job.singleton) {
    const uint8_t* bytes = static_cast<const uint8_t*>(data);
    g_singleton_kv[key].assign(bytes, bytes + len);
    return Status::kOk;
  }
  pmix_value_t val;
  PMIX_VALUE_CONSTRUCT(&val);
  val.type = PMIX_BYTE_OBJECT;
  val.data.bo.bytes = static_cast<char*>(const_cast<void*>(data));
  val.data.bo.size = len;
  pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &val);
  return rc == PMIX_SUCCESS ? Status::kOk : Status::kErrBoot;
}

Status exchange() {
  if (!g_initialized) return Status::kErrInternal;
  if (g_job.singleton) return Status::kOk;
  if (PMIx_Commit() != PMIX_SUCCESS) return Status::kErrBoot;
  pmix_info_t info[2];
  PMIX_INFO_CONSTRUCT(&info[0]);
  PMIX_INFO_CONSTRUCT(&info[1]);
  bool collect = true;
  PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  // A rank that never arrives (stuck before MPI_Init) must not hang the others silently.
  int timeout = static_cast<int>(params::boot_timeout_s());
  size_t ninfo = timeout > 0 ? 2 : 1;
  if (timeout > 0) PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
  pmix_status_t rc = PMIx_Fence(nullptr, 0, info, ninfo);
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  if (rc == PMIX_ERR_TIMEOUT) return Status::kErrTimeout;
  return rc == PMIX_SUCCESS ? Status::kOk : Status::kErrPeerGone;
}

Status exchange_cards(const std::string& version, std::vector<PeerCard>* local,
                      std::string* error) {
  // Card layout: pid as 4 bytes, the version text, a NUL, then the affinity mask's words.
  std::vector<uint8_t> card(sizeof(int32_t));
  int32_t pid = static_cast<int32_t>(getpid());
  std::memcpy(card.data(), &pid, sizeof(pid));
  card.insert(card.end(), version.begin(), version.end());
  card.push_back('\0');
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(&mask);
    card.insert(card.end(), bytes, bytes + sizeof mask);
  }
  TORUSMPI_CHECK(put(kCardKey, card.data(), card.size()));
  Status s = exchange();
  if (s != Status::kOk) {
    *error = s == Status::kErrTimeout
                 ? "not every rank reached MPI_Init within TORUSMPI_BOOT_TIMEOUT=" +
                       std::to_string(params::boot_timeout_s()) + " s"
                 : std::string("the start-up exchange between ranks failed: ") + status_string(s);
    return s;
  }
  local->clear();
  for (int peer : g_job.local_peers) {
    std::vector<uint8_t> value;
    if (get(peer, kCardKey, &value) != Status::kOk || value.size() < sizeof(int32_t)) {
      *error = "rank " + std::to_string(peer) +
               " published no torusmpi card (is it running "
               "another MPI library?)";
      return Status::kErrBoot;
    }
    PeerCard c;
    std::memcpy(&pid, value.data(), sizeof(pid));
    c.pid = pid;
    const auto text = value.begin() + sizeof(int32_t);
    const auto nul = std::find(text, value.end(), '\0');
    c.version.assign(text, nul);
    if (nul != value.end()) {
      const size_t words = static_cast<size_t>(value.end() - nul - 1) / sizeof(uint64_t);
      c.cpus.resize(words);
      if (words > 0) std::memcpy(c.cpus.data(), &*(nul + 1), words * sizeof(uint64_t));
    }
    if (c.version != version) {
      *error = "rank " + std::to_string(peer) + " runs " + c.version + ", this rank runs " +
               version + ": every rank must run the same torusmpi";
      return Status::kErrBoot;
    }
    local->push_back(c);
  }
  return Status::kOk;
}

bool crowded(const std::vector<PeerCard>& local) {
  auto shared = [](const PeerCard& a, const PeerCard& b) {
    for (size_t w = 0; w < std::min(a.cpus.size(), b.cpus.size()); ++w) {
      if ((a.cpus[w] & b.cpus[w]) != 0) return true;
    }
    return false;
  };
  for (const PeerCard& c : local) {
    int cpus = 0;
    for (uint64_t w : c.cpus) cpus += __builtin_popcountll(w);
    if (cpus == 0) continue;  // not known
    int ranks = 0;
    for (const PeerCard& o : local) ranks += shared(c, o);
    if (ranks > cpus) return true;
  }
  return false;
}

Status get(int rank, const std::string& key, std::vector<uint8_t>* value) {
  if (!g_initialized || rank < 0 || rank >= g_job.size) return Status::kErrArg;
  if (g_job.singleton) {
    auto it = g_singleton_kv.find(key);
    if (it == g_singleton_kv.end()) return Status::kErrArg;
    *value = it->second;
    return Status::kOk;
  }
  pmix_proc_t peer;
  PMIX_PROC_CONSTRUCT(&peer);
  PMIX_LOAD_PROCID(&peer, g_me.nspace, static_cast<pmix_rank_t>(rank));
  pmix_value_t* val = nullptr;
  if (PMIx_Get(&peer, key.c_str(), nullptr, 0, &val) != PMIX_SUCCESS || val == nullptr) {
    return Status::kErrArg;
  }
  Status s = Status::kErrArg;
  if (val->type == PMIX_BYTE_OBJECT) {
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(val->data.bo.bytes);
    value->assign(bytes, bytes + val->data.bo.size);
    s = Status::kOk;
  }
  PMIX_VALUE_RELEASE(val);
  return s;
}

void abort_job(int code, const std::string& msg) {
  if (!msg.empty()) log::error("%s", msg.c_str());
  if (g_initialized && !g_job.singleton) {
    // The launcher kills every rank of the namespace and exits with `code`.
    PMIx_Abort(code, msg.c_str(), nullptr, 0);
  }
  _exit(code);
}

namespace {

// What a spawned process inherits from its parent besides what the launcher gives every process:
// whatever makes it run torusmpi (the loader's variables) and torusmpi as the parent does.
constexpr const char* kInheritedPrefixes[] = {
    "LD_PRELOAD=", "LD_LIBRARY_PATH=", "PATH=",      "TORUSMPI_", "FI_",
    "UCX_",        "OMPI_MCA_",        "PYTHONPATH="};

// ... but not how the parent job is laid out: a spawned job of another size has its own
// (TORUSMPI_INSTANCES=2 cannot hold a job of one process). Set to its default rather than left
// out, since mpirun passes its -x variables to spawned jobs too; an app's env may set it.
constexpr const char* kNotInherited[] = {"TORUSMPI_INSTANCES="};
constexpr const char* kSpawnDefaults[] = {"TORUSMPI_INSTANCES=1"};

// A NULL-terminated array of strdup'ed strings, as PMIx frees them (PMIX_APP_FREE).
char** argv_dup(const std::vector<std::string>& v) {
  auto** out = static_cast<char**>(calloc(v.size() + 1, sizeof(char*)));
  for (size_t i = 0; i < v.size(); ++i) out[i] = strdup(v[i].c_str());
  return out;
}

Status needs_launcher(const char* what, std::string* error) {
  if (g_initialized && !g_job.singleton) return Status::kOk;
  *error = std::string(what) + " needs a launcher's PMIx server (Open MPI's mpirun), and this " +
           "process was started without one";
  return Status::kErrUnsupported;
}

}  // namespace

Status spawn(const std::vector<SpawnApp>& apps, std::string* nspace, std::string* error) {
  TORUSMPI_CHECK(needs_launcher("spawning processes", error));
  std::vector<std::string> inherited;
  for (char** e = environ; e && *e; ++e) {
    bool excluded = false;
    for (const char* prefix : kNotInherited) {
      excluded = excluded || std::strncmp(*e, prefix, std::strlen(prefix)) == 0;
    }
    if (excluded) continue;
    for (const char* prefix : kInheritedPrefixes) {
      if (std::strncmp(*e, prefix, std::strlen(prefix)) == 0) {
        inherited.push_back(*e);
        break;
      }
    }
  }
  pmix_app_t* papps = nullptr;
  PMIX_APP_CREATE(papps, apps.size());
  for (size_t i = 0; i < apps.size(); ++i) {
    const SpawnApp& a = apps[i];
    pmix_app_t& p = papps[i];
    p.cmd = strdup(a.command.c_str());
    std::vector<std::string> argv{a.command};
    argv.insert(argv.end(), a.args.begin(), a.args.end());
    p.argv = argv_dup(argv);
    std::vector<std::string> env = inherited;
    env.insert(env.end(), std::begin(kSpawnDefaults), std::end(kSpawnDefaults));
    env.insert(env.end(), a.env.begin(), a.env.end());
    p.env = argv_dup(env);
    p.maxprocs = a.procs;
    if (!a.wdir.empty()) p.cwd = strdup(a.wdir.c_str());
    if (!a.host.empty()) {
      PMIX_INFO_CREATE(p.info, 1);
      p.ninfo = 1;
      PMIX_INFO_LOAD(&p.info[0], PMIX_HOST, a.host.c_str(), PMIX_STRING);
    }
  }
  pmix_nspace_t child;
  std::memset(child, 0, sizeof child);
  pmix_status_t rc = PMIx_Spawn(nullptr, 0, papps, apps.size(), child);
  PMIX_APP_FREE(papps, apps.size());
  if (rc != PMIX_SUCCESS) {
    // Open MPI 4.1's mpirun answers with its own codes, which PMIx may have no name for.
    *error = std::string("the launcher could not start the job (PMIx_Spawn: ") +
             PMIx_Error_string(rc) + ", status " + std::to_string(rc) + ")";
    return Status::kErrBoot;
  }
  *nspace = child;
  TORUSMPI_DEBUG(kBoot, "spawned job %s", child);
  return Status::kOk;
}

namespace {

bool terminated(const pmix_proc_info_t& p) {
  TORUSMPI_DEBUG(kBoot, "  %s rank %u: state %d, pid %d", p.proc.nspace, p.proc.rank,
                 static_cast<int>(p.state), static_cast<int>(p.pid));
  if (p.state >= PMIX_PROC_STATE_TERMINATED) return true;
  // Open MPI 4.1's mpirun leaves the state undefined; a process of this host is looked at
  // directly (its launcher reaps it at once, so a gone pid is an ended process).
  return p.pid > 0 && p.hostname != nullptr && g_job.hostname == p.hostname &&
         kill(p.pid, 0) != 0 && errno == ESRCH;
}

// Whether a process table (PMIX_QUERY_PROC_TABLE's answer: process infos, which Open MPI 4.1's
// mpirun wraps in an array of infos) lists a process that has ended.
bool any_terminated(const pmix_value_t& v) {
  if (v.type == PMIX_PROC_INFO && v.data.pinfo != nullptr) return terminated(*v.data.pinfo);
  if (v.type != PMIX_DATA_ARRAY || v.data.darray == nullptr) return false;
  const pmix_data_array_t& a = *v.data.darray;
  bool found = false;
  for (size_t k = 0; k < a.size; ++k) {
    if (a.type == PMIX_PROC_INFO) {
      found = terminated(static_cast<const pmix_proc_info_t*>(a.array)[k]) || found;
    } else if (a.type == PMIX_INFO) {
      found = any_terminated(static_cast<const pmix_info_t*>(a.array)[k].value) || found;
    }
  }
  return found;
}

}  // namespace

bool spawned_job_ended(const std::string& nspace) {
  // The launcher's table of the job's processes and their states. (Open MPI 4.1's mpirun cannot
  // deliver PMIX_NOTIFY_COMPLETION's event to a PMIx 4 client: asked, it logs BAD-PARAM.)
  pmix_query_t* query = nullptr;
  PMIX_QUERY_CREATE(query, 1);
  query[0].keys = argv_dup({PMIX_QUERY_PROC_TABLE});
  PMIX_QUERY_QUALIFIERS_CREATE(&query[0], 1);
  PMIX_INFO_LOAD(&query[0].qualifiers[0], PMIX_NSPACE, nspace.c_str(), PMIX_STRING);
  pmix_info_t* results = nullptr;
  size_t nresults = 0;
  pmix_status_t rc = PMIx_Query_info(query, 1, &results, &nresults);
  PMIX_QUERY_FREE(query, 1);
  // A job the launcher no longer knows has ended; one it cannot tell about is taken as running.
  bool ended = rc == PMIX_ERR_NOT_FOUND;
  for (size_t i = 0; rc == PMIX_SUCCESS && i < nresults; ++i) {
    ended = any_terminated(results[i].value) || ended;
  }
  if (results != nullptr) PMIX_INFO_FREE(results, nresults);
  TORUSMPI_DEBUG(kBoot, "process table of %s: %s, %zu result(s), %s", nspace.c_str(),
                 PMIx_Error_string(rc), nresults, ended ? "ended" : "running");
  return ended;
}

Status publish_name(const std::string& service, const std::string& port, std::string* error) {
  TORUSMPI_CHECK(needs_launcher("publishing a name", error));
  pmix_info_t info;
  PMIX_INFO_CONSTRUCT(&info);
  PMIX_INFO_LOAD(&info, service.c_str(), port.c_str(), PMIX_STRING);
  pmix_status_t rc = PMIx_Publish(&info, 1);
  PMIX_INFO_DESTRUCT(&info);
  if (rc != PMIX_SUCCESS) {
    *error = std::string("PMIx_Publish: ") + PMIx_Error_string(rc);
    return rc == PMIX_EXISTS ? Status::kErrArg : Status::kErrBoot;
  }
  return Status::kOk;
}

Status lookup_name(const std::string& service, std::string* port, std::string* error) {
  TORUSMPI_CHECK(needs_launcher("looking up a name", error));
  pmix_pdata_t data;
  PMIX_PDATA_CONSTRUCT(&data);
  PMIX_LOAD_KEY(data.key, service.c_str());
  pmix_status_t rc = PMIx_Lookup(&data, 1, nullptr, 0);
  Status s = Status::kOk;
  if (rc != PMIX_SUCCESS) {
    *error = std::string("PMIx_Lookup: ") + PMIx_Error_string(rc);
    s = Status::kErrArg;
  } else if (data.value.type != PMIX_STRING || data.value.data.string == nullptr) {
    *error = "the name service holds no port name under it";
    s = Status::kErrArg;
  } else {
    *port = data.value.data.string;
  }
  PMIX_PDATA_DESTRUCT(&data);
  return s;
}

Status unpublish_name(const std::string& service, std::string* error) {
  TORUSMPI_CHECK(needs_launcher("unpublishing a name", error));
  char* keys[2] = {const_cast<char*>(service.c_str()), nullptr};
  pmix_status_t rc = PMIx_Unpublish(keys, nullptr, 0);
  if (rc != PMIX_SUCCESS) {
    *error = std::string("PMIx_Unpublish: ") + PMIx_Error_string(rc);
    return Status::kErrArg;
  }
  return Status::kOk;
}

}  // namespace torusmpi::boot
