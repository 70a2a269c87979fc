// Info objects: MPI_Info_create, set, get, get_valuelen, get_nkeys, get_nthkey, delete, dup and
// free, and MPI_INFO_ENV, which tells how this process was started.
#include "mpi/info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "core/progress.h"
#include "mpi/errors.h"
#include "mpi/fortran.h"
#include "mpi/runtime.h"

namespace torusmpi::mpi {

const std::string* Info::find(std::string_view key) const {
  for (const auto& [k, v] : entries_) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Info::set(std::string_view key, std::string_view value) {
  for (auto& [k, v] : entries_) {
    if (k == key) {
      v.assign(value);
      return;
    }
  }
  entries_.emplace_back(std::string(key), std::string(value));
}

bool Info::erase(std::string_view key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == key) {
      entries_.erase(it);
      return true;
    }
  }
  return false;
}

namespace {

// Longest key and value, without the terminator MPI_MAX_INFO_KEY / MPI_MAX_INFO_VAL count.
constexpr size_t kMaxKey = MPI_MAX_INFO_KEY - 1;
constexpr size_t kMaxValue = MPI_MAX_INFO_VAL - 1;

Info g_env;

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
  }
  return "unknown";
}

// The keys MPI 3.1 gives MPI_INFO_ENV (those of its section 10.3.1) that torusmpi knows: not
// "soft" nor "file", which only mpiexec's own arguments could give. Filled at the first use, so
// "wdir" is the directory then; "thread_level" is the level MPI_Init(_thread) provided. Values are
// cut to MPI_MAX_INFO_VAL - 1 characters so that buffers of MPI's size hold them.
void fill_env(Info* env) {
  auto set = [env](const char* key, const std::string& value) {
    env->set(key, std::string_view(value).substr(0, kMaxValue));
  };
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t at = 0; at < cmdline.size();) {
    size_t end = cmdline.find('\0', at);
    if (end == std::string::npos) end = cmdline.size();
    args.push_back(cmdline.substr(at, end - at));
    at = end + 1;
  }
  if (!args.empty()) set("command", args[0]);
  std::string argv;
  for (size_t a = 1; a < args.size(); ++a) argv += (a > 1 ? " " : "") + args[a];
  if (!argv.empty()) set("argv", argv);
  const Runtime& rt = runtime();
  set("maxprocs", std::to_string(rt.job.size));
  std::string host = rt.job.hostname;
  char name[256] = "";
  if (host.empty() && gethostname(name, sizeof(name) - 1) == 0) host = name;
  if (!host.empty()) set("host", host);
  struct utsname u;
  if (uname(&u) == 0) set("arch", u.machine);
  if (char* cwd = getcwd(nullptr, 0)) {
    set("wdir", cwd);
    std::free(cwd);
  }
  set("thread_level", thread_level_name(rt.thread_level));
}

}  // namespace

Info* info_impl(MPI_Info info) {
  if (info == nullptr || info->magic != kMagicInfo || info == MPI_INFO_NULL) return nullptr;
  // Written through the handle, so it lands in the executable's copy of the object.
  if (info == MPI_INFO_ENV && info->impl == nullptr) {
    fill_env(&g_env);
    info->impl = &g_env;
  }
  return static_cast<Info*>(info->impl);
}

MPI_Info info_new(const Info* from) {
  return new ompi_info_t{kMagicInfo, from != nullptr ? new Info(*from) : new Info};
}

void info_free(MPI_Info info) {
  if (info_impl(info) == nullptr || info == MPI_INFO_ENV) return;
  delete static_cast<Info*>(info->impl);
  info->magic = kMagicFreed;
  fortran_forget(HandleKind::kInfo, info);
  delete info;
}

bool info_value(MPI_Info info, std::string_view key, std::string* value) {
  const Info* i = info_impl(info);
  const std::string* v = i != nullptr ? i->find(key) : nullptr;
  if (v == nullptr) return false;
  *value = *v;
  return true;
}

namespace {

// The Info behind `info`, or MPI_ERR_INFO raised.
int resolve(const char* fn, MPI_Info info, Info** out) {
  *out = info_impl(info);
  if (*out != nullptr) return MPI_SUCCESS;
  return raise_error(nullptr, MPI_ERR_INFO, fn, "info argument is %s",
                     info == MPI_INFO_NULL ? "MPI_INFO_NULL" : "not a valid info object");
}

// Why a key or value argument is not one (nullptr when it is): NULL, empty, or longer than
// `max` characters.
const char* bad_string(const char* s, size_t max) {
  if (s == nullptr) return "is NULL";
  if (s[0] == '\0') return "is empty";
  if (strnlen(s, max + 1) > max) return "is too long";
  return nullptr;
}

int check_key(const char* fn, const char* key) {
  const char* why = bad_string(key, kMaxKey);
  if (why == nullptr) return MPI_SUCCESS;
  return raise_error(nullptr, MPI_ERR_INFO_KEY, fn,
                     "key argument %s (1 to MPI_MAX_INFO_KEY - 1 = %zu characters)", why, kMaxKey);
}

}  // namespace
}  // namespace torusmpi::mpi

using torusmpi::mpi::check_key;
using torusmpi::mpi::Info;
using torusmpi::mpi::kMaxValue;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;
using torusmpi::mpi::resolve;

int PMPI_Info_create(MPI_Info* info) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Info_create";
  if (int err = require_active(kFn)) return err;
  if (info == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "info argument is NULL");
  *info = torusmpi::mpi::info_new(nullptr);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Info_create);

int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Info_set";
  if (int err = require_active(kFn)) return err;
  Info* i = nullptr;
  if (int err = resolve(kFn, info, &i)) return err;
  if (int err = check_key(kFn, key)) return err;
  // Open MPI refuses empty values too.
  if (const char* why = torusmpi::mpi::bad_string(value, kMaxValue)) {
    return raise_error(nullptr, MPI_ERR_INFO_VALUE, kFn,
                       "value argument %s (1 to MPI_MAX_INFO_VAL - 1 = %zu characters)", why,
                       kMaxValue);
  }
  i->set(key, value);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Info_set);

int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Info_get";
  if (int err = require_active(kFn)) return err;
  Info* i = nullptr;
  if (int err = resolve(kFn, info, &i)) return err;
  if (int err = check_key(kFn, key)) return err;
  if (valuelen < 0)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "valuelen argument is negative (%d)", valuelen);
  if (value == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "value argument is NULL");
  if (flag == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "flag argument is NULL");
  const std::string* v = i->find(key);
  *flag = v != nullptr;
  // MPI: at most valuelen characters, and the terminator after them.
  if (v != nullptr) torusmpi::mpi::copy_out(*v, value, valuelen + 1);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Info_get);

int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Info_get_valuelen";
  if (int err = require_active(kFn)) return err;
  Info* i = nullptr;
  if (int err = resolve(kFn, info, &i)) return err;
  if (int err = check_key(kFn, key)) return err;
  if (valuelen == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "valuelen argument is NULL");
  if (flag == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "flag argument is NULL");
  const std::string* v = i->find(key);
  *flag = v != nullptr;
  if (v != nullptr) *valuelen = static_cast<int>(v->size());
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Info_get_valuelen);

int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Info_get_nkeys";
  if (int err = require_active(kFn)) return err;
  Info* i = nullptr;
  if (int err = resolve(kFn, info, &i)) return err;
  if (nkeys == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "nkeys argument is NULL");
  *nkeys = i->size();
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Info_get_nkeys);

int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Info_get_nthkey";
  if (int err = require_active(kFn)) return err;
  Info* i = nullptr;
  if (int err = resolve(kFn, info, &i)) return err;
  if (n < 0 || n >= i->size()) {
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "n argument is %d, but the info has %d key(s)", n,
                       i->size());
  }
  if (key == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "key argument is NULL");
  torusmpi::mpi::copy_out(i->key(n), key, MPI_MAX_INFO_KEY);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Info_get_nthkey);

int PMPI_Info_delete(MPI_Info info, const char* key) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Info_delete";
  if (int err = require_active(kFn)) return err;
  Info* i = nullptr;
  if (int err = resolve(kFn, info, &i)) return err;
  if (int err = check_key(kFn, key)) return err;
  if (!i->erase(key)) {
    return raise_error(nullptr, MPI_ERR_INFO_NOKEY, kFn, "key \"%s\" is not set in this info", key);
  }
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Info_delete);

int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Info_dup";
  if (int err = require_active(kFn)) return err;
  Info* i = nullptr;
  if (int err = resolve(kFn, info, &i)) return err;
  if (newinfo == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "newinfo argument is NULL");
  *newinfo = torusmpi::mpi::info_new(i);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Info_dup);

int PMPI_Info_free(MPI_Info* info) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Info_free";
  if (int err = require_active(kFn)) return err;
  if (info == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "info argument is NULL");
  Info* i = nullptr;
  if (int err = resolve(kFn, *info, &i)) return err;
  if (*info == MPI_INFO_ENV) {
    return raise_error(nullptr, MPI_ERR_INFO, kFn,
                       "info argument is MPI_INFO_ENV, which is predefined and cannot be freed");
  }
  torusmpi::mpi::info_free(*info);
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Info_free);
