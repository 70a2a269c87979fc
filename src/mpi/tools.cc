// The MPI tools interface (MPI_T). Control variables are torusmpi's run-time parameters: those
// read once at MPI_Init are read-only, those read at each use (collective selection) writable.
// One category, "torusmpi", holds them all. There are no performance variables yet. MPI_T reports
// errors by return code only, never through an error handler, and works before MPI_Init and
// after MPI_Finalize.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "coll/select/select.h"
#include "core/params.h"
#include "core/progress.h"
#include "mpi/ompi_abi.h"

// A control-variable handle: which parameter it reads.
struct ompi_mpit_cvar_handle_t {
  size_t index;
};

// A performance-variable session; it can hold no handles while there are no performance variables.
struct mca_base_pvar_session_t {
  int unused;
};

namespace {

namespace params = torusmpi::params;

constexpr char kCategory[] = "torusmpi";
constexpr char kCategoryDesc[] = "torusmpi's run-time parameters (TORUSMPI_* variables)";
constexpr int kStringCapacity = 256;  // chars a string control variable reads into

std::mutex g_mutex;
int g_refcount = 0;

bool active() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_refcount > 0;
}

// MPI_T's string convention: *len is the buffer size on input (0: just ask) and the length written
// or needed, terminator included, on output.
void copy_string(const std::string& text, char* out, int* len) {
  if (len == nullptr) return;
  int needed = static_cast<int>(text.size()) + 1;
  if (*len <= 0 || out == nullptr) {
    *len = needed;
    return;
  }
  int n = std::min(*len - 1, static_cast<int>(text.size()));
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
  *len = n + 1;
}

int cvar_count() { return static_cast<int>(params::all().size()); }

MPI_Datatype cvar_datatype(params::Type t) {
  switch (t) {
    case params::Type::Bool:
      return MPI_INT;
    case params::Type::Int:
    case params::Type::Size:
      return MPI_COUNT;
    case params::Type::String:
      return MPI_CHAR;
  }
  return MPI_DATATYPE_NULL;
}

template <class T>
void set_if(T* out, T value) {
  if (out != nullptr) *out = value;
}

#define TORUSMPI_T_ACTIVE() \
  if (!active()) return MPI_T_ERR_NOT_INITIALIZED

}  // namespace

int PMPI_T_init_thread(int required, int* provided) {
  if (provided == nullptr) return MPI_T_ERR_INVALID;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_refcount++ == 0) {
    std::vector<std::string> errors, warnings;  // MPI_Init reports these
    params::load(&errors, &warnings);
  }
  *provided = std::min(std::max(required, static_cast<int>(MPI_THREAD_SINGLE)),
                       static_cast<int>(MPI_THREAD_MULTIPLE));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_init_thread);

int PMPI_T_finalize(void) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_refcount == 0) return MPI_T_ERR_NOT_INITIALIZED;
  --g_refcount;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_finalize);

int PMPI_T_cvar_get_num(int* num_cvar) {
  torusmpi::progress::Lock lock;
  TORUSMPI_T_ACTIVE();
  if (num_cvar == nullptr) return MPI_T_ERR_INVALID;
  *num_cvar = cvar_count();
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_cvar_get_num);

int PMPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity,
                         MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                         int* bind, int* scope) {
  torusmpi::progress::Lock lock;
  TORUSMPI_T_ACTIVE();
  if (cvar_index < 0 || cvar_index >= cvar_count()) return MPI_T_ERR_INVALID_INDEX;
  const params::Info& p = params::all()[cvar_index];
  copy_string(p.env, name, name_len);
  copy_string(p.doc, desc, desc_len);
  set_if(verbosity, static_cast<int>(MPI_T_VERBOSITY_USER_BASIC));
  set_if(datatype, cvar_datatype(p.type));
  set_if(enumtype, MPI_T_ENUM_NULL);
  set_if(bind, static_cast<int>(MPI_T_BIND_NO_OBJECT));
  // Parameters read at each use may be written, the same value on every rank (collective
  // selection must agree across a communicator); the others are read once, at MPI_Init.
  set_if(scope, static_cast<int>(p.when == params::When::Call ? MPI_T_SCOPE_ALL_EQ
                                                              : MPI_T_SCOPE_READONLY));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_cvar_get_info);

int PMPI_T_cvar_get_index(const char* name, int* cvar_index) {
  torusmpi::progress::Lock lock;
  TORUSMPI_T_ACTIVE();
  if (name == nullptr || cvar_index == nullptr) return MPI_T_ERR_INVALID;
  for (int i = 0; i < cvar_count(); ++i) {
    if (std::strcmp(params::all()[i].env, name) == 0) {
      *cvar_index = i;
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}
TORUSMPI_WEAK_ALIAS(MPI_T_cvar_get_index);

int PMPI_T_cvar_handle_alloc(int cvar_index, void* obj_handle, MPI_T_cvar_handle* handle,
                             int* count) {
  torusmpi::progress::Lock lock;
  (void)obj_handle;  // every parameter binds to no object
  TORUSMPI_T_ACTIVE();
  if (cvar_index < 0 || cvar_index >= cvar_count()) return MPI_T_ERR_INVALID_INDEX;
  if (handle == nullptr || count == nullptr) return MPI_T_ERR_INVALID;
  *handle = new ompi_mpit_cvar_handle_t{static_cast<size_t>(cvar_index)};
  *count = params::all()[cvar_index].type == params::Type::String ? kStringCapacity : 1;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_cvar_handle_alloc);

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
  torusmpi::progress::Lock lock;
  TORUSMPI_T_ACTIVE();
  if (handle == nullptr || *handle == MPI_T_CVAR_HANDLE_NULL) return MPI_T_ERR_INVALID_HANDLE;
  delete *handle;
  *handle = MPI_T_CVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_cvar_handle_free);

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
  torusmpi::progress::Lock lock;
  TORUSMPI_T_ACTIVE();
  if (handle == MPI_T_CVAR_HANDLE_NULL) return MPI_T_ERR_INVALID_HANDLE;
  if (buf == nullptr) return MPI_T_ERR_INVALID;
  params::Value v = params::value(handle->index);
  switch (params::all()[handle->index].type) {
    case params::Type::Bool: {
      int b = static_cast<int>(v.number);
      std::memcpy(buf, &b, sizeof(b));
      break;
    }
    case params::Type::Int:
    case params::Type::Size: {
      MPI_Count n = v.number;
      std::memcpy(buf, &n, sizeof(n));
      break;
    }
    case params::Type::String: {
      int len = kStringCapacity;
      copy_string(v.text, static_cast<char*>(buf), &len);
      break;
    }
  }
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_cvar_read);

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void* buf) {
  torusmpi::progress::Lock lock;
  TORUSMPI_T_ACTIVE();
  if (handle == MPI_T_CVAR_HANDLE_NULL) return MPI_T_ERR_INVALID_HANDLE;
  if (buf == nullptr) return MPI_T_ERR_INVALID;
  const params::Info& p = params::all()[handle->index];
  if (p.when != params::When::Call) return MPI_T_ERR_CVAR_SET_NEVER;  // read once, at MPI_Init
  std::string text;
  switch (p.type) {
    case params::Type::Bool: {
      int b;
      std::memcpy(&b, buf, sizeof b);
      text = b != 0 ? "1" : "0";
      break;
    }
    case params::Type::Int:
    case params::Type::Size: {
      MPI_Count n;
      std::memcpy(&n, buf, sizeof n);
      text = std::to_string(n);
      break;
    }
    case params::Type::String:
      text.assign(static_cast<const char*>(buf),
                  strnlen(static_cast<const char*>(buf), kStringCapacity));
      break;
  }
  std::string old = params::value(handle->index).text, error;
  if (params::set(handle->index, text, &error) != torusmpi::Status::kOk) return MPI_T_ERR_INVALID;
  // A token or range that names no algorithm is refused, and the old value stays.
  if (torusmpi::coll::selection_check(&error) != torusmpi::Status::kOk) {
    params::set(handle->index, old, &error);
    return MPI_T_ERR_INVALID;
  }
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_cvar_write);

int PMPI_T_category_get_num(int* num_cat) {
  torusmpi::progress::Lock lock;
  TORUSMPI_T_ACTIVE();
  if (num_cat == nullptr) return MPI_T_ERR_INVALID;
  *num_cat = 1;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_category_get_num);

int PMPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc, int* desc_len,
                             int* num_cvars, int* num_pvars, int* num_categories) {
  torusmpi::progress::Lock lock;
  TORUSMPI_T_ACTIVE();
  if (cat_index != 0) return MPI_T_ERR_INVALID_INDEX;
  copy_string(kCategory, name, name_len);
  copy_string(kCategoryDesc, desc, desc_len);
  set_if(num_cvars, cvar_count());
  set_if(num_pvars, 0);
  set_if(num_categories, 0);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_category_get_info);

int PMPI_T_category_get_index(const char* name, int* category_index) {
  torusmpi::progress::Lock lock;
  TORUSMPI_T_ACTIVE();
  if (name == nullptr || category_index == nullptr) return MPI_T_ERR_INVALID;
  if (std::strcmp(name, kCategory) != 0) return MPI_T_ERR_INVALID_NAME;
  *category_index = 0;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_category_get_index);

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  torusmpi::progress::Lock lock;
  TORUSMPI_T_ACTIVE();
  if (cat_index != 0) return MPI_T_ERR_INVALID_INDEX;
  if (len > 0 && indices == nullptr) return MPI_T_ERR_INVALID;
  for (int i = 0; i < std::min(len, cvar_count()); ++i) indices[i] = i;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_category_get_cvars);

// The category holds no performance variables and no subcategories.
int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  torusmpi::progress::Lock lock;
  (void)len;
  (void)indices;
  TORUSMPI_T_ACTIVE();
  return cat_index == 0 ? MPI_SUCCESS : MPI_T_ERR_INVALID_INDEX;
}
TORUSMPI_WEAK_ALIAS(MPI_T_category_get_pvars);

int PMPI_T_category_get_categories(int cat_index, int len, int indices[]) {
  torusmpi::progress::Lock lock;
  (void)len;
  (void)indices;
  TORUSMPI_T_ACTIVE();
  return cat_index == 0 ? MPI_SUCCESS : MPI_T_ERR_INVALID_INDEX;
}
TORUSMPI_WEAK_ALIAS(MPI_T_category_get_categories);

int PMPI_T_category_changed(int* stamp) {
  torusmpi::progress::Lock lock;
  TORUSMPI_T_ACTIVE();
  if (stamp == nullptr) return MPI_T_ERR_INVALID;
  *stamp = 0;  // the set of variables never changes while a process runs
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_category_changed);

int PMPI_T_pvar_get_num(int* num_pvar) {
  torusmpi::progress::Lock lock;
  TORUSMPI_T_ACTIVE();
  if (num_pvar == nullptr) return MPI_T_ERR_INVALID;
  *num_pvar = 0;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_pvar_get_num);

int PMPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  torusmpi::progress::Lock lock;
  TORUSMPI_T_ACTIVE();
  if (session == nullptr) return MPI_T_ERR_INVALID;
  *session = new mca_base_pvar_session_t{0};
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_pvar_session_create);

int PMPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  torusmpi::progress::Lock lock;
  TORUSMPI_T_ACTIVE();
  if (session == nullptr || *session == MPI_T_PVAR_SESSION_NULL) {
    return MPI_T_ERR_INVALID_SESSION;
  }
  delete *session;
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_T_pvar_session_free);

// With no performance variables and no enumerations, every index, name and handle is invalid.
int PMPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                         MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                         int* bind, int* readonly, int* continuous, int* atomic) {
  torusmpi::progress::Lock lock;
  (void)pvar_index, (void)name, (void)name_len, (void)verbosity, (void)var_class;
  (void)datatype, (void)enumtype, (void)desc, (void)desc_len, (void)bind, (void)readonly;
  (void)continuous, (void)atomic;
  TORUSMPI_T_ACTIVE();
  return MPI_T_ERR_INVALID_INDEX;
}
TORUSMPI_WEAK_ALIAS(MPI_T_pvar_get_info);

int PMPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  torusmpi::progress::Lock lock;
  (void)name, (void)var_class, (void)pvar_index;
  TORUSMPI_T_ACTIVE();
  return MPI_T_ERR_INVALID_NAME;
}
TORUSMPI_WEAK_ALIAS(MPI_T_pvar_get_index);

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void* obj_handle,
                             MPI_T_pvar_handle* handle, int* count) {
  torusmpi::progress::Lock lock;
  (void)session, (void)pvar_index, (void)obj_handle, (void)handle, (void)count;
  TORUSMPI_T_ACTIVE();
  return MPI_T_ERR_INVALID_INDEX;
}
TORUSMPI_WEAK_ALIAS(MPI_T_pvar_handle_alloc);

#define TORUSMPI_T_NO_PVAR_HANDLE(fn, ...)             \
  int P##fn(MPI_T_pvar_session session, __VA_ARGS__) { \
    (void)session;                                     \
    TORUSMPI_T_ACTIVE();                               \
    return MPI_T_ERR_INVALID_HANDLE;                   \
  }                                                    \
  TORUSMPI_WEAK_ALIAS(fn)

TORUSMPI_T_NO_PVAR_HANDLE(MPI_T_pvar_handle_free, MPI_T_pvar_handle*);
TORUSMPI_T_NO_PVAR_HANDLE(MPI_T_pvar_start, MPI_T_pvar_handle);
TORUSMPI_T_NO_PVAR_HANDLE(MPI_T_pvar_stop, MPI_T_pvar_handle);
TORUSMPI_T_NO_PVAR_HANDLE(MPI_T_pvar_read, MPI_T_pvar_handle, void*);
TORUSMPI_T_NO_PVAR_HANDLE(MPI_T_pvar_write, MPI_T_pvar_handle, const void*);
TORUSMPI_T_NO_PVAR_HANDLE(MPI_T_pvar_reset, MPI_T_pvar_handle);
TORUSMPI_T_NO_PVAR_HANDLE(MPI_T_pvar_readreset, MPI_T_pvar_handle, void*);

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int* num, char* name, int* name_len) {
  torusmpi::progress::Lock lock;
  (void)enumtype, (void)num, (void)name, (void)name_len;
  TORUSMPI_T_ACTIVE();
  return MPI_T_ERR_INVALID_HANDLE;
}
TORUSMPI_WEAK_ALIAS(MPI_T_enum_get_info);

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int* value, char* name, int* name_len) {
  torusmpi::progress::Lock lock;
  (void)enumtype, (void)index, (void)value, (void)name, (void)name_len;
  TORUSMPI_T_ACTIVE();
  return MPI_T_ERR_INVALID_HANDLE;
}
TORUSMPI_WEAK_ALIAS(MPI_T_enum_get_item);
