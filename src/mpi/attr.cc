// Attributes: keyvals and the values attached to communicators, datatypes and windows, with the
// copy and delete callbacks MPI runs when an object is duplicated, an attribute replaced or
// deleted, and an object freed; and the predefined attributes of communicators (MPI_TAG_UB, ...).
//
// Attributes live here, in a table keyed by (kind, handle), not in the objects: the predefined
// objects must keep Open MPI's layout, and datatypes and windows have no room for them.
#include "mpi/attr.h"

#include <climits>
#include <map>
#include <utility>
#include <vector>

#include "mpi/errors.h"
#include "mpi/runtime.h"

namespace torusmpi::mpi {
namespace {

// Predefined keyvals are Open MPI's enum (MPI_TAG_UB = 0 ... IMPI_HOST_COLOR = 15). User keyvals
// are numbered from here up and never reused, so a freed keyval passed again is reported instead
// of being taken for a newer one.
constexpr int kFirstUserKeyval = 64;

// Values of the predefined attributes. MPI hands out pointers to them, so they must outlive
// every caller: they live as long as the process.
struct PredefinedAttrs {
  int tag_ub = INT_MAX;
  int host = MPI_PROC_NULL;  // no host process
  int io = MPI_ANY_SOURCE;   // every rank can do I/O
  int wtime_is_global = 0;   // MPI_Wtime clocks of different nodes are not synchronized
  int universe_size = 1;
  int appnum = 0;
  int lastusedcode = MPI_ERR_LASTCODE;
};

PredefinedAttrs g_predefined;

// The callbacks of a keyval, with the signature of its object kind (the member that `kind`
// names); a null pointer acts as MPI_*_NULL_COPY_FN / MPI_*_NULL_DELETE_FN.
union CopyFn {
  MPI_Comm_copy_attr_function* comm;
  MPI_Type_copy_attr_function* type;
  MPI_Win_copy_attr_function* win;
};
union DeleteFn {
  MPI_Comm_delete_attr_function* comm;
  MPI_Type_delete_attr_function* type;
  MPI_Win_delete_attr_function* win;
};

struct Keyval {
  AttrKind kind;
  CopyFn copy;
  DeleteFn del;
  void* extra_state;
  int uses = 0;        // attributes set with it, on any object
  bool freed = false;  // freed by the user: MPI keeps it until its last attribute is deleted
};

struct Attr {
  int keyval;
  void* value;
};

using ObjectKey = std::pair<AttrKind, void*>;

std::map<int, Keyval> g_keyvals;
int g_next_keyval = kFirstUserKeyval;
// Each object's attributes in the order they were first set; objects without any are absent.
std::map<ObjectKey, std::vector<Attr>> g_objects;

const char* kind_noun(AttrKind kind) {
  switch (kind) {
    case AttrKind::kComm:
      return "communicator";
    case AttrKind::kType:
      return "datatype";
    case AttrKind::kWin:
      return "window";
  }
  return "object";
}

bool is_predefined_keyval(int keyval) { return keyval >= 0 && keyval < kFirstUserKeyval; }

int call_copy(const Keyval& k, int keyval, void* handle, void* in, void** out, int* flag) {
  *flag = 0;
  switch (k.kind) {
    case AttrKind::kComm:
      return k.copy.comm == nullptr
                 ? MPI_SUCCESS
                 : k.copy.comm(static_cast<MPI_Comm>(handle), keyval, k.extra_state, in, out, flag);
    case AttrKind::kType:
      return k.copy.type == nullptr ? MPI_SUCCESS
                                    : k.copy.type(static_cast<MPI_Datatype>(handle), keyval,
                                                  k.extra_state, in, out, flag);
    case AttrKind::kWin:
      return k.copy.win == nullptr
                 ? MPI_SUCCESS
                 : k.copy.win(static_cast<MPI_Win>(handle), keyval, k.extra_state, in, out, flag);
  }
  return MPI_SUCCESS;
}

int call_delete(const Keyval& k, int keyval, void* handle, void* value) {
  switch (k.kind) {
    case AttrKind::kComm:
      return k.del.comm == nullptr
                 ? MPI_SUCCESS
                 : k.del.comm(static_cast<MPI_Comm>(handle), keyval, value, k.extra_state);
    case AttrKind::kType:
      return k.del.type == nullptr
                 ? MPI_SUCCESS
                 : k.del.type(static_cast<MPI_Datatype>(handle), keyval, value, k.extra_state);
    case AttrKind::kWin:
      return k.del.win == nullptr
                 ? MPI_SUCCESS
                 : k.del.win(static_cast<MPI_Win>(handle), keyval, value, k.extra_state);
  }
  return MPI_SUCCESS;
}

// Callbacks are application code that may set, delete or free anything: nothing found before a
// callback runs is trusted after it; these lookups are repeated instead.
Attr* find_attr(AttrKind kind, void* handle, int keyval) {
  auto it = g_objects.find({kind, handle});
  if (it == g_objects.end()) return nullptr;
  for (Attr& a : it->second) {
    if (a.keyval == keyval) return &a;
  }
  return nullptr;
}

// The keyval of an attribute: there as long as the attribute is, even when the user freed it; the
// null checks guard against callbacks that took both away meanwhile.
Keyval* keyval_of(int keyval) {
  auto it = g_keyvals.find(keyval);
  return it != g_keyvals.end() ? &it->second : nullptr;
}

// A keyval loses a user: the last one of a freed keyval takes it away.
void release_keyval(int keyval) {
  auto it = g_keyvals.find(keyval);
  if (it != g_keyvals.end() && --it->second.uses == 0 && it->second.freed) g_keyvals.erase(it);
}

void add_attr(Keyval* k, AttrKind kind, void* handle, int keyval, void* value) {
  g_objects[{kind, handle}].push_back({keyval, value});
  ++k->uses;
}

void remove_attr(AttrKind kind, void* handle, int keyval) {
  auto it = g_objects.find({kind, handle});
  if (it == g_objects.end()) return;
  std::vector<Attr>& attrs = it->second;
  for (size_t i = 0; i < attrs.size(); ++i) {
    if (attrs[i].keyval != keyval) continue;
    attrs.erase(attrs.begin() + static_cast<std::ptrdiff_t>(i));
    if (attrs.empty()) g_objects.erase(it);
    release_keyval(keyval);
    return;
  }
}

// What an attribute call acts on: the object and where its errors are raised.
struct Target {
  AttrKind kind;
  void* handle;
  MPI_Comm raise_on;  // the communicator itself, or nullptr (MPI_COMM_WORLD's handler)
};

// The user keyval `keyval` (argument `arg` of `fn`), valid for target's kind, or an error raised.
int find_keyval(const char* fn, const Target& t, const char* arg, int keyval, Keyval** out) {
  if (is_predefined_keyval(keyval)) {
    return raise_error(t.raise_on, MPI_ERR_KEYVAL, fn,
                       "%s %d is a predefined keyval: its attributes are read-only", arg, keyval);
  }
  auto it = g_keyvals.find(keyval);
  if (it == g_keyvals.end() || it->second.freed) {
    return raise_error(t.raise_on, MPI_ERR_KEYVAL, fn, "%s %d is not a valid keyval%s", arg, keyval,
                       it == g_keyvals.end() ? "" : " (it was freed)");
  }
  if (it->second.kind != t.kind) {
    return raise_error(t.raise_on, MPI_ERR_KEYVAL, fn, "%s %d is a %s keyval, not a %s keyval", arg,
                       keyval, kind_noun(it->second.kind), kind_noun(t.kind));
  }
  *out = &it->second;
  return MPI_SUCCESS;
}

int create_keyval(const char* fn, AttrKind kind, CopyFn copy, DeleteFn del, int* keyval,
                  void* extra_state) {
  if (int err = require_active(fn)) return err;
  if (keyval == nullptr) return raise_error(nullptr, MPI_ERR_ARG, fn, "keyval argument is NULL");
  if (g_next_keyval == INT_MAX) {
    return raise_error(nullptr, MPI_ERR_OTHER, fn, "no keyval left: %d were created", INT_MAX);
  }
  int k = g_next_keyval++;
  g_keyvals.emplace(k, Keyval{kind, copy, del, extra_state});
  *keyval = k;
  return MPI_SUCCESS;
}

int free_keyval(const char* fn, AttrKind kind, const char* arg, int* keyval) {
  if (int err = require_active(fn)) return err;
  if (keyval == nullptr) return raise_error(nullptr, MPI_ERR_ARG, fn, "%s argument is NULL", arg);
  if (is_predefined_keyval(*keyval)) {
    return raise_error(nullptr, MPI_ERR_KEYVAL, fn,
                       "*%s is %d, a predefined keyval, which cannot be freed", arg, *keyval);
  }
  Keyval* k = nullptr;
  if (int err = find_keyval(fn, {kind, nullptr, nullptr}, arg, *keyval, &k)) return err;
  k->freed = true;
  if (k->uses == 0) g_keyvals.erase(*keyval);
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int set_attr(const char* fn, const Target& t, const char* arg, int keyval, void* value) {
  Keyval* k = nullptr;
  if (int err = find_keyval(fn, t, arg, keyval, &k)) return err;
  Attr* a = find_attr(t.kind, t.handle, keyval);
  if (a == nullptr) {
    add_attr(k, t.kind, t.handle, keyval, value);
    return MPI_SUCCESS;
  }
  // MPI: the value replaced goes through the delete callback first; when that fails, the old
  // value stays.
  if (int rc = call_delete(*k, keyval, t.handle, a->value)) {
    return raise_error(t.raise_on, rc, fn,
                       "the delete callback of %s %d failed (error %d) on the value replaced", arg,
                       keyval, rc);
  }
  if ((a = find_attr(t.kind, t.handle, keyval)) != nullptr) {
    a->value = value;
  } else if ((k = keyval_of(keyval)) != nullptr) {
    add_attr(k, t.kind, t.handle, keyval, value);
  }
  return MPI_SUCCESS;
}

int get_attr(const char* fn, const Target& t, const char* arg, int keyval, void* attribute_val,
             int* flag) {
  if (attribute_val == nullptr)
    return raise_error(t.raise_on, MPI_ERR_ARG, fn, "attribute_val argument is NULL");
  if (flag == nullptr) return raise_error(t.raise_on, MPI_ERR_ARG, fn, "flag argument is NULL");
  if (is_predefined_keyval(keyval)) {
    return raise_error(t.raise_on, MPI_ERR_KEYVAL, fn,
                       "%s %d is a predefined keyval, which no %s has", arg, keyval,
                       kind_noun(t.kind));
  }
  Keyval* k = nullptr;
  if (int err = find_keyval(fn, t, arg, keyval, &k)) return err;
  const Attr* a = find_attr(t.kind, t.handle, keyval);
  *flag = a != nullptr;
  if (a != nullptr) *static_cast<void**>(attribute_val) = a->value;
  return MPI_SUCCESS;
}

int delete_attr(const char* fn, const Target& t, const char* arg, int keyval) {
  Keyval* k = nullptr;
  if (int err = find_keyval(fn, t, arg, keyval, &k)) return err;
  const Attr* a = find_attr(t.kind, t.handle, keyval);
  // MPI defines no error for an attribute that is not set: there is nothing to delete.
  if (a == nullptr) return MPI_SUCCESS;
  // The attribute stays when its delete callback fails (MPI: the call is then erroneous).
  if (int rc = call_delete(*k, keyval, t.handle, a->value)) {
    return raise_error(t.raise_on, rc, fn, "the delete callback of %s %d failed (error %d)", arg,
                       keyval, rc);
  }
  remove_attr(t.kind, t.handle, keyval);
  return MPI_SUCCESS;
}

// Communicator attribute calls: the predefined attributes answer for every communicator.
int comm_get_attr(const char* fn, MPI_Comm comm, const char* arg, int keyval, void* attribute_val,
                  int* flag) {
  if (int err = require_active(fn)) return err;
  if (comm_impl(comm) == nullptr) {
    return raise_error(nullptr, MPI_ERR_COMM, fn, "comm argument is %s",
                       comm == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not a valid communicator");
  }
  Target t{AttrKind::kComm, comm, comm};
  if (!is_predefined_keyval(keyval)) return get_attr(fn, t, arg, keyval, attribute_val, flag);
  if (attribute_val == nullptr)
    return raise_error(comm, MPI_ERR_ARG, fn, "attribute_val argument is NULL");
  if (flag == nullptr) return raise_error(comm, MPI_ERR_ARG, fn, "flag argument is NULL");
  g_predefined.universe_size = runtime().job.universe_size;
  g_predefined.appnum = runtime().job.appnum;
  int* value = nullptr;
  switch (keyval) {
    case MPI_TAG_UB:
      value = &g_predefined.tag_ub;
      break;
    case MPI_HOST:
      value = &g_predefined.host;
      break;
    case MPI_IO:
      value = &g_predefined.io;
      break;
    case MPI_WTIME_IS_GLOBAL:
      value = &g_predefined.wtime_is_global;
      break;
    case MPI_UNIVERSE_SIZE:
      value = &g_predefined.universe_size;
      break;
    case MPI_APPNUM:
      value = &g_predefined.appnum;
      break;
    case MPI_LASTUSEDCODE:
      value = &g_predefined.lastusedcode;
      break;
    case IMPI_CLIENT_SIZE:
    case IMPI_CLIENT_COLOR:
    case IMPI_HOST_SIZE:
    case IMPI_HOST_COLOR:
      // Open MPI's keyvals for IMPI jobs, which torusmpi never is: the attributes are not set.
      *flag = 0;
      return MPI_SUCCESS;
    default:
      return raise_error(comm, MPI_ERR_KEYVAL, fn,
                         "%s %d is not a communicator keyval (a window's, or none)", arg, keyval);
  }
  // MPI: for a predefined attribute, attribute_val receives a pointer to the int.
  *static_cast<int**>(attribute_val) = value;
  *flag = 1;
  return MPI_SUCCESS;
}

// Resolves a communicator for the attribute calls that change attributes, or raises MPI_ERR_COMM.
#define TORUSMPI_COMM_TARGET(var, comm, fn)                                                     \
  if (int err = require_active(fn)) return err;                                                 \
  if (comm_impl(comm) == nullptr) {                                                             \
    return raise_error(nullptr, MPI_ERR_COMM, fn, "comm argument is %s",                        \
                       (comm) == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not a valid communicator"); \
  }                                                                                             \
  const Target var { AttrKind::kComm, comm, comm }

bool datatype_valid(MPI_Datatype type) {
  return type != nullptr && type->magic == kMagicDatatype && type != MPI_DATATYPE_NULL;
}

#define TORUSMPI_TYPE_TARGET(var, type, fn)                                          \
  if (int err = require_active(fn)) return err;                                      \
  if (!datatype_valid(type)) {                                                       \
    return raise_error(                                                              \
        nullptr, MPI_ERR_TYPE, fn, "datatype argument is %s",                        \
        (type) == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype"); \
  }                                                                                  \
  const Target var { AttrKind::kType, type, nullptr }

// A window is live when its handle points to an implementation; torusmpi makes none yet, so every
// window call gets MPI_ERR_WIN.
bool win_valid(MPI_Win win) {
  return win != nullptr && win->magic == kMagicWin && win->impl != nullptr;
}

#define TORUSMPI_WIN_TARGET(var, win, fn)                                                         \
  if (int err = require_active(fn)) return err;                                                   \
  if (!win_valid(win)) {                                                                          \
    return raise_error(                                                                           \
        nullptr, MPI_ERR_WIN, fn, "win argument is %s",                                           \
        (win) == MPI_WIN_NULL ? "MPI_WIN_NULL" : "not a valid window (torusmpi has no windows)"); \
  }                                                                                               \
  const Target var { AttrKind::kWin, win, nullptr }

}  // namespace

int attr_copy_all(AttrKind kind, void* old_handle, void* new_handle) {
  auto it = g_objects.find({kind, old_handle});
  if (it == g_objects.end()) return MPI_SUCCESS;
  const std::vector<Attr> order = it->second;
  for (const Attr& was : order) {
    const Attr* a = find_attr(kind, old_handle, was.keyval);
    if (a == nullptr) continue;  // an earlier callback deleted it
    Keyval* k = keyval_of(a->keyval);
    if (k == nullptr) continue;
    void* out = nullptr;
    int flag = 0;
    int rc = call_copy(*k, a->keyval, old_handle, a->value, &out, &flag);
    if (rc != MPI_SUCCESS) {
      attr_delete_all(kind, new_handle);
      return rc;
    }
    if (flag == 0 || (k = keyval_of(was.keyval)) == nullptr) continue;
    if (Attr* dup = find_attr(kind, new_handle, was.keyval)) {
      dup->value = out;
    } else {
      add_attr(k, kind, new_handle, was.keyval, out);
    }
  }
  return MPI_SUCCESS;
}

int attr_delete_all(AttrKind kind, void* handle) {
  int first_error = MPI_SUCCESS;
  for (;;) {
    auto it = g_objects.find({kind, handle});
    if (it == g_objects.end()) break;
    // Taken off before its callback runs: a callback that looks sees it gone.
    Attr a = it->second.back();
    it->second.pop_back();
    if (it->second.empty()) g_objects.erase(it);
    const Keyval* k = keyval_of(a.keyval);
    int rc = k != nullptr ? call_delete(*k, a.keyval, handle, a.value) : MPI_SUCCESS;
    release_keyval(a.keyval);
    if (rc != MPI_SUCCESS && first_error == MPI_SUCCESS) first_error = rc;
  }
  return first_error;
}

void attr_set_last_used_code(int code) { g_predefined.lastusedcode = code; }

}  // namespace torusmpi::mpi

using torusmpi::mpi::AttrKind;
using torusmpi::mpi::comm_impl;
using torusmpi::mpi::CopyFn;
using torusmpi::mpi::datatype_valid;
using torusmpi::mpi::DeleteFn;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;
using torusmpi::mpi::Target;
using torusmpi::mpi::win_valid;

// --- Communicators.

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function* comm_delete_attr_fn, int* comm_keyval,
                            void* extra_state) {
  CopyFn copy;
  copy.comm = comm_copy_attr_fn;
  DeleteFn del;
  del.comm = comm_delete_attr_fn;
  return torusmpi::mpi::create_keyval("MPI_Comm_create_keyval", AttrKind::kComm, copy, del,
                                      comm_keyval, extra_state);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_create_keyval);

int PMPI_Comm_free_keyval(int* comm_keyval) {
  return torusmpi::mpi::free_keyval("MPI_Comm_free_keyval", AttrKind::kComm, "comm_keyval",
                                    comm_keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_free_keyval);

int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  constexpr const char* kFn = "MPI_Comm_set_attr";
  TORUSMPI_COMM_TARGET(t, comm, kFn);
  return torusmpi::mpi::set_attr(kFn, t, "comm_keyval", comm_keyval, attribute_val);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_set_attr);

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  return torusmpi::mpi::comm_get_attr("MPI_Comm_get_attr", comm, "comm_keyval", comm_keyval,
                                      attribute_val, flag);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_get_attr);

int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  constexpr const char* kFn = "MPI_Comm_delete_attr";
  TORUSMPI_COMM_TARGET(t, comm, kFn);
  return torusmpi::mpi::delete_attr(kFn, t, "comm_keyval", comm_keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_delete_attr);

// --- Datatypes.

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn,
                            MPI_Type_delete_attr_function* type_delete_attr_fn, int* type_keyval,
                            void* extra_state) {
  CopyFn copy;
  copy.type = type_copy_attr_fn;
  DeleteFn del;
  del.type = type_delete_attr_fn;
  return torusmpi::mpi::create_keyval("MPI_Type_create_keyval", AttrKind::kType, copy, del,
                                      type_keyval, extra_state);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_create_keyval);

int PMPI_Type_free_keyval(int* type_keyval) {
  return torusmpi::mpi::free_keyval("MPI_Type_free_keyval", AttrKind::kType, "type_keyval",
                                    type_keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_free_keyval);

int PMPI_Type_set_attr(MPI_Datatype type, int type_keyval, void* attribute_val) {
  constexpr const char* kFn = "MPI_Type_set_attr";
  TORUSMPI_TYPE_TARGET(t, type, kFn);
  return torusmpi::mpi::set_attr(kFn, t, "type_keyval", type_keyval, attribute_val);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_set_attr);

int PMPI_Type_get_attr(MPI_Datatype type, int type_keyval, void* attribute_val, int* flag) {
  constexpr const char* kFn = "MPI_Type_get_attr";
  TORUSMPI_TYPE_TARGET(t, type, kFn);
  return torusmpi::mpi::get_attr(kFn, t, "type_keyval", type_keyval, attribute_val, flag);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_attr);

int PMPI_Type_delete_attr(MPI_Datatype type, int type_keyval) {
  constexpr const char* kFn = "MPI_Type_delete_attr";
  TORUSMPI_TYPE_TARGET(t, type, kFn);
  return torusmpi::mpi::delete_attr(kFn, t, "type_keyval", type_keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_delete_attr);

// --- Windows.

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                           MPI_Win_delete_attr_function* win_delete_attr_fn, int* win_keyval,
                           void* extra_state) {
  CopyFn copy;
  copy.win = win_copy_attr_fn;
  DeleteFn del;
  del.win = win_delete_attr_fn;
  return torusmpi::mpi::create_keyval("MPI_Win_create_keyval", AttrKind::kWin, copy, del,
                                      win_keyval, extra_state);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_create_keyval);

int PMPI_Win_free_keyval(int* win_keyval) {
  return torusmpi::mpi::free_keyval("MPI_Win_free_keyval", AttrKind::kWin, "win_keyval",
                                    win_keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_free_keyval);

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  constexpr const char* kFn = "MPI_Win_set_attr";
  TORUSMPI_WIN_TARGET(t, win, kFn);
  return torusmpi::mpi::set_attr(kFn, t, "win_keyval", win_keyval, attribute_val);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_set_attr);

// The predefined window attributes (MPI_WIN_BASE, ...) belong with the windows, when they come.
int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  constexpr const char* kFn = "MPI_Win_get_attr";
  TORUSMPI_WIN_TARGET(t, win, kFn);
  return torusmpi::mpi::get_attr(kFn, t, "win_keyval", win_keyval, attribute_val, flag);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_get_attr);

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  constexpr const char* kFn = "MPI_Win_delete_attr";
  TORUSMPI_WIN_TARGET(t, win, kFn);
  return torusmpi::mpi::delete_attr(kFn, t, "win_keyval", win_keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_delete_attr);

// --- The MPI-1 forms, deprecated but still exported by Open MPI 4.1: communicator attributes.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                       void* extra_state) {
  CopyFn copy;
  copy.comm = copy_fn;
  DeleteFn del;
  del.comm = delete_fn;
  return torusmpi::mpi::create_keyval("MPI_Keyval_create", AttrKind::kComm, copy, del, keyval,
                                      extra_state);
}
TORUSMPI_WEAK_ALIAS(MPI_Keyval_create);

int PMPI_Keyval_free(int* keyval) {
  return torusmpi::mpi::free_keyval("MPI_Keyval_free", AttrKind::kComm, "keyval", keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Keyval_free);

int PMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  constexpr const char* kFn = "MPI_Attr_put";
  TORUSMPI_COMM_TARGET(t, comm, kFn);
  return torusmpi::mpi::set_attr(kFn, t, "keyval", keyval, attribute_val);
}
TORUSMPI_WEAK_ALIAS(MPI_Attr_put);

int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return torusmpi::mpi::comm_get_attr("MPI_Attr_get", comm, "keyval", keyval, attribute_val, flag);
}
TORUSMPI_WEAK_ALIAS(MPI_Attr_get);

int PMPI_Attr_delete(MPI_Comm comm, int keyval) {
  constexpr const char* kFn = "MPI_Attr_delete";
  TORUSMPI_COMM_TARGET(t, comm, kFn);
  return torusmpi::mpi::delete_attr(kFn, t, "keyval", keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Attr_delete);

#pragma GCC diagnostic pop
