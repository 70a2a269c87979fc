// Attributes: keyvals and the values attached to communicators, datatypes and windows, with the
// copy and delete callbacks MPI runs when an object is duplicated, an attribute replaced or
// deleted, and an object freed; and the predefined attributes of communicators (MPI_TAG_UB, ...).
//
// Attributes live here, in a table keyed by (kind, handle), not in the objects: the predefined
// objects must keep Open MPI's layout, and datatypes and windows have no room for them.
//
// Three languages set and get attributes, with MPI's rules between them (MPI 3.1, 17.2.7; Open
// MPI's attribute.c tabulates the twelve cases): C stores a pointer, Fortran an INTEGER (MPI-1's
// MPI_ATTR_PUT) or an INTEGER(KIND=MPI_ADDRESS_KIND) by value. C reads a Fortran value through a
// pointer to it; Fortran reads a C pointer as an integer, truncated to INTEGER for MPI-1. A
// keyval made from Fortran (Open MPI's libmpi_mpifh calls ompi_attr_create_keyval_fint/_aint) has
// Fortran callbacks, called with handles' Fortran numbers and arguments by reference.
#include "mpi/attr.h"

#include <climits>
#include <cstdlib>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "core/progress.h"
#include "mpi/errors.h"
#include "mpi/fortran.h"
#include "mpi/runtime.h"
#include "mpi/win.h"

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

// The callbacks of a keyval, with the signature of its object kind and language (`kind` and
// `flags` say which member); a null pointer acts as MPI_*_NULL_COPY_FN / MPI_*_NULL_DELETE_FN.
// The C copy callbacks also get the new object, as Open MPI's do.
using FortranCopyFn = void(MPI_Fint* obj, MPI_Fint* keyval, MPI_Fint* extra, MPI_Fint* in,
                           MPI_Fint* out, MPI_Fint* flag, MPI_Fint* ierr);
using FortranDeleteFn = void(MPI_Fint* obj, MPI_Fint* keyval, MPI_Fint* value, MPI_Fint* extra,
                             MPI_Fint* ierr);
using AddressCopyFn = void(MPI_Fint* obj, MPI_Fint* keyval, MPI_Aint* extra, MPI_Aint* in,
                           MPI_Aint* out, MPI_Fint* flag, MPI_Fint* ierr);
using AddressDeleteFn = void(MPI_Fint* obj, MPI_Fint* keyval, MPI_Aint* value, MPI_Aint* extra,
                             MPI_Fint* ierr);
using CCopyFn = int(void* obj, int keyval, void* extra, void* in, void* out, int* flag,
                    void* new_obj);
using CDeleteFn = int(void* obj, int keyval, void* value, void* extra);

struct Keyval {
  AttrKind kind;
  int flags;       // ompi::kKeyvalF77 (Fortran callbacks), kKeyvalF77Int (MPI-1 INTEGERs)
  void (*copy)();  // cast to CCopyFn, AddressCopyFn or FortranCopyFn by flags
  void (*del)();
  // The extra state as the callbacks take it: C's pointer, or Fortran's integer by reference.
  void* extra_state;
  MPI_Fint extra_fint;
  MPI_Aint extra_aint;
  // Memory of Open MPI's C++ bindings, theirs to give and ours to free with the keyval.
  void* bindings_state;
  int uses = 0;        // attributes set with it, on any object
  bool freed = false;  // freed by the user: MPI keeps it until its last attribute is deleted

  bool fortran() const { return (flags & ompi::kKeyvalF77) != 0; }
  bool fortran_int() const { return (flags & ompi::kKeyvalF77Int) != 0; }
};

// How a value was set (Open MPI's cases): by C (a pointer), by torusmpi itself (an int: the
// predefined attributes), by Fortran as INTEGER or as INTEGER(KIND=MPI_ADDRESS_KIND).
enum class From : uint8_t { kC, kInt, kFint, kAint };

// Where a Fortran value lives while it is set: C reads it through a pointer.
union Cell {
  MPI_Fint fint;
  MPI_Aint aint;
};

// A value: for kC the pointer C set; otherwise the address of the integer (a Cell, or the
// predefined attribute's int).
struct Value {
  From from = From::kC;
  void* pointer = nullptr;
};

// What C reads: the pointer, or the address of the integer.
void* as_c(const Value& v) { return v.pointer; }

MPI_Aint as_aint(const Value& v) {
  switch (v.from) {
    case From::kC:
      return reinterpret_cast<MPI_Aint>(v.pointer);
    case From::kInt:
      return *static_cast<const int*>(v.pointer);
    case From::kFint:
      return static_cast<const Cell*>(v.pointer)->fint;  // sign-extended
    case From::kAint:
      return static_cast<const Cell*>(v.pointer)->aint;
  }
  return 0;
}

// Fortran INTEGER reads of wider values keep the low bits, as Open MPI's do.
MPI_Fint as_fint(const Value& v) {
  return v.from == From::kFint ? static_cast<const Cell*>(v.pointer)->fint
                               : static_cast<MPI_Fint>(as_aint(v));
}

struct Attr {
  int keyval;
  Value value;
  std::unique_ptr<Cell> cell;  // a Fortran value's storage (value.pointer points into it)
};

// A value to store: a Fortran integer gets a cell of its own.
Attr make_attr(int keyval, From from, void* pointer, MPI_Aint integer) {
  Attr a{keyval, {from, pointer}, nullptr};
  if (from == From::kFint || from == From::kAint) {
    a.cell = std::make_unique<Cell>();
    if (from == From::kFint) {
      a.cell->fint = static_cast<MPI_Fint>(integer);
    } else {
      a.cell->aint = integer;
    }
    a.value.pointer = a.cell.get();
  }
  return a;
}

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

HandleKind handle_kind(AttrKind kind) {
  return kind == AttrKind::kType  ? HandleKind::kDatatype
         : kind == AttrKind::kWin ? HandleKind::kWin
                                  : HandleKind::kComm;
}

bool is_predefined_keyval(int keyval) { return keyval >= 0 && keyval < kFirstUserKeyval; }

// Runs the copy callback of keyval k on `in` (an attribute of handle, new_handle being the
// duplicate), in the keyval's language; *out is the value to copy when *flag comes back nonzero.
int call_copy(const Keyval& k, int keyval, void* handle, void* new_handle, const Value& in,
              From* out_from, void** out_pointer, MPI_Aint* out_integer, int* flag) {
  *flag = 0;
  if (k.copy == nullptr) return MPI_SUCCESS;
  if (!k.fortran()) {
    *out_from = From::kC;
    void* extra = k.extra_state;
    return reinterpret_cast<CCopyFn*>(k.copy)(handle, keyval, extra, as_c(in), out_pointer, flag,
                                              new_handle);
  }
  MPI_Fint obj = fortran_number(handle_kind(k.kind), handle);
  MPI_Fint key = keyval;
  MPI_Fint fflag = kFortranFalse;
  MPI_Fint ierr = MPI_SUCCESS;
  if (k.fortran_int()) {
    MPI_Fint extra = k.extra_fint, fin = as_fint(in), fout = 0;
    reinterpret_cast<FortranCopyFn*>(k.copy)(&obj, &key, &extra, &fin, &fout, &fflag, &ierr);
    *out_from = From::kFint;
    *out_integer = fout;
  } else {
    MPI_Aint extra = k.extra_aint, ain = as_aint(in), aout = 0;
    reinterpret_cast<AddressCopyFn*>(k.copy)(&obj, &key, &extra, &ain, &aout, &fflag, &ierr);
    *out_from = From::kAint;
    *out_integer = aout;
  }
  *flag = fflag != kFortranFalse;
  return ierr;
}

int call_delete(const Keyval& k, int keyval, void* handle, const Value& v) {
  if (k.del == nullptr) return MPI_SUCCESS;
  if (!k.fortran()) {
    return reinterpret_cast<CDeleteFn*>(k.del)(handle, keyval, as_c(v), k.extra_state);
  }
  MPI_Fint obj = fortran_number(handle_kind(k.kind), handle);
  MPI_Fint key = keyval;
  MPI_Fint ierr = MPI_SUCCESS;
  if (k.fortran_int()) {
    MPI_Fint extra = k.extra_fint, value = as_fint(v);
    reinterpret_cast<FortranDeleteFn*>(k.del)(&obj, &key, &value, &extra, &ierr);
  } else {
    MPI_Aint extra = k.extra_aint, value = as_aint(v);
    reinterpret_cast<AddressDeleteFn*>(k.del)(&obj, &key, &value, &extra, &ierr);
  }
  return ierr;
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

void erase_keyval(std::map<int, Keyval>::iterator it) {
  std::free(it->second.bindings_state);
  g_keyvals.erase(it);
}

// A keyval loses a user: the last one of a freed keyval takes it away.
void release_keyval(int keyval) {
  auto it = g_keyvals.find(keyval);
  if (it != g_keyvals.end() && --it->second.uses == 0 && it->second.freed) erase_keyval(it);
}

void add_attr(Keyval* k, AttrKind kind, void* handle, Attr a) {
  g_objects[{kind, handle}].push_back(std::move(a));
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

int create_keyval(const char* fn, Keyval k, int* keyval) {
  if (int err = require_active(fn)) return err;
  if (keyval == nullptr) return raise_error(nullptr, MPI_ERR_ARG, fn, "keyval argument is NULL");
  if (g_next_keyval == INT_MAX) {
    return raise_error(nullptr, MPI_ERR_OTHER, fn, "no keyval left: %d were created", INT_MAX);
  }
  int n = g_next_keyval++;
  g_keyvals.emplace(n, k);
  *keyval = n;
  return MPI_SUCCESS;
}

// A keyval of C callbacks (the MPI_*_create_keyval calls).
Keyval c_keyval(AttrKind kind, void (*copy)(), void (*del)(), void* extra_state) {
  return Keyval{kind, 0, copy, del, extra_state, 0, 0, nullptr};
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
  if (k->uses == 0) erase_keyval(g_keyvals.find(*keyval));
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int set_attr(const char* fn, const Target& t, const char* arg, int keyval, From from, void* pointer,
             MPI_Aint integer) {
  Keyval* k = nullptr;
  if (int err = find_keyval(fn, t, arg, keyval, &k)) return err;
  Attr* a = find_attr(t.kind, t.handle, keyval);
  if (a == nullptr) {
    add_attr(k, t.kind, t.handle, make_attr(keyval, from, pointer, integer));
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
    *a = make_attr(keyval, from, pointer, integer);
  } else if ((k = keyval_of(keyval)) != nullptr) {
    add_attr(k, t.kind, t.handle, make_attr(keyval, from, pointer, integer));
  }
  return MPI_SUCCESS;
}

// The C set calls: a pointer.
int set_attr(const char* fn, const Target& t, const char* arg, int keyval, void* value) {
  return set_attr(fn, t, arg, keyval, From::kC, value, 0);
}

// The value of a predefined attribute of communicators, as C gets it (a pointer to an int): *flag
// 0 for the IMPI attributes, which a torusmpi job never has. MPI_ERR_KEYVAL for other keyvals
// under kFirstUserKeyval (a window's, or none).
int predefined_value(const char* fn, MPI_Comm comm, const char* arg, int keyval, Value* out,
                     int* flag) {
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
  *out = Value{From::kInt, value};
  *flag = 1;
  return MPI_SUCCESS;
}

// Looks keyval up on the target; *flag says whether it is set. The predefined attributes answer
// for every communicator.
int get_value(const char* fn, const Target& t, const char* arg, int keyval, Value* out, int* flag) {
  if (flag == nullptr) return raise_error(t.raise_on, MPI_ERR_ARG, fn, "flag argument is NULL");
  if (is_predefined_keyval(keyval)) {
    if (t.kind == AttrKind::kComm) {
      return predefined_value(fn, static_cast<MPI_Comm>(t.handle), arg, keyval, out, flag);
    }
    int kind = 0;
    void* value = nullptr;
    if (t.kind == AttrKind::kWin &&
        win_predefined_attr(static_cast<MPI_Win>(t.handle), keyval, &kind, &value)) {
      // MPI_WIN_BASE is the pointer itself; the others point at the window's copy of the value.
      *out = Value{kind == 0 ? From::kC : kind == 1 ? From::kAint : From::kInt, value};
      *flag = 1;
      return MPI_SUCCESS;
    }
    return raise_error(t.raise_on, MPI_ERR_KEYVAL, fn,
                       "%s %d is a predefined keyval, which no %s has", arg, keyval,
                       kind_noun(t.kind));
  }
  Keyval* k = nullptr;
  if (int err = find_keyval(fn, t, arg, keyval, &k)) return err;
  const Attr* a = find_attr(t.kind, t.handle, keyval);
  *flag = a != nullptr;
  if (a != nullptr) *out = a->value;
  return MPI_SUCCESS;
}

// The C get calls: attribute_val receives the pointer (for predefined and Fortran values, a
// pointer to the integer).
int get_attr(const char* fn, const Target& t, const char* arg, int keyval, void* attribute_val,
             int* flag) {
  if (attribute_val == nullptr)
    return raise_error(t.raise_on, MPI_ERR_ARG, fn, "attribute_val argument is NULL");
  Value v;
  if (int err = get_value(fn, t, arg, keyval, &v, flag)) return err;
  if (*flag) *static_cast<void**>(attribute_val) = as_c(v);
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

// A window is live when its handle points to an implementation (win.cc makes them).
bool win_valid(MPI_Win win) {
  return win != nullptr && win->magic == kMagicWin && win->impl != nullptr;
}

#define TORUSMPI_WIN_TARGET(var, win, fn)                                              \
  if (int err = require_active(fn)) return err;                                        \
  if (!win_valid(win)) {                                                               \
    return raise_error(nullptr, MPI_ERR_WIN, fn, "win argument is %s",                 \
                       (win) == MPI_WIN_NULL ? "MPI_WIN_NULL" : "not a valid window"); \
  }                                                                                    \
  const Target var { AttrKind::kWin, win, nullptr }

int comm_get_attr(const char* fn, MPI_Comm comm, const char* arg, int keyval, void* attribute_val,
                  int* flag) {
  TORUSMPI_COMM_TARGET(t, comm, fn);
  return get_attr(fn, t, arg, keyval, attribute_val, flag);
}

}  // namespace

int attr_copy_all(AttrKind kind, void* old_handle, void* new_handle) {
  auto it = g_objects.find({kind, old_handle});
  if (it == g_objects.end()) return MPI_SUCCESS;
  std::vector<int> order;
  for (const Attr& a : it->second) order.push_back(a.keyval);
  for (int keyval : order) {
    const Attr* a = find_attr(kind, old_handle, keyval);
    if (a == nullptr) continue;  // an earlier callback deleted it
    Keyval* k = keyval_of(keyval);
    if (k == nullptr) continue;
    From from = From::kC;
    void* pointer = nullptr;
    MPI_Aint integer = 0;
    int flag = 0;
    int rc;
    try {
      rc =
          call_copy(*k, keyval, old_handle, new_handle, a->value, &from, &pointer, &integer, &flag);
    } catch (...) {
      attr_delete_all(kind, new_handle);  // as for an error code: the copy holds nothing
      throw;
    }
    if (rc != MPI_SUCCESS) {
      attr_delete_all(kind, new_handle);
      return rc;
    }
    if (flag == 0 || (k = keyval_of(keyval)) == nullptr) continue;
    if (Attr* dup = find_attr(kind, new_handle, keyval)) {
      *dup = make_attr(keyval, from, pointer, integer);
    } else {
      add_attr(k, kind, new_handle, make_attr(keyval, from, pointer, integer));
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
    Attr a = std::move(it->second.back());
    it->second.pop_back();
    if (it->second.empty()) g_objects.erase(it);
    const Keyval* k = keyval_of(a.keyval);
    int rc;
    try {
      rc = k != nullptr ? call_delete(*k, a.keyval, handle, a.value) : MPI_SUCCESS;
    } catch (...) {
      release_keyval(a.keyval);  // the attribute is gone all the same
      throw;
    }
    release_keyval(a.keyval);
    if (rc != MPI_SUCCESS && first_error == MPI_SUCCESS) first_error = rc;
  }
  return first_error;
}

void attr_set_last_used_code(int code) { g_predefined.lastusedcode = code; }

}  // namespace torusmpi::mpi

using torusmpi::mpi::AttrKind;
using torusmpi::mpi::comm_impl;
using torusmpi::mpi::datatype_valid;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;
using torusmpi::mpi::Target;
using torusmpi::mpi::win_valid;

// --- Communicators.

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function* comm_delete_attr_fn, int* comm_keyval,
                            void* extra_state) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::create_keyval(
      "MPI_Comm_create_keyval",
      torusmpi::mpi::c_keyval(AttrKind::kComm, reinterpret_cast<void (*)()>(comm_copy_attr_fn),
                              reinterpret_cast<void (*)()>(comm_delete_attr_fn), extra_state),
      comm_keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_create_keyval);

int PMPI_Comm_free_keyval(int* comm_keyval) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::free_keyval("MPI_Comm_free_keyval", AttrKind::kComm, "comm_keyval",
                                    comm_keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_free_keyval);

int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_set_attr";
  TORUSMPI_COMM_TARGET(t, comm, kFn);
  return torusmpi::mpi::set_attr(kFn, t, "comm_keyval", comm_keyval, attribute_val);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_set_attr);

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::comm_get_attr("MPI_Comm_get_attr", comm, "comm_keyval", comm_keyval,
                                      attribute_val, flag);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_get_attr);

int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_delete_attr";
  TORUSMPI_COMM_TARGET(t, comm, kFn);
  return torusmpi::mpi::delete_attr(kFn, t, "comm_keyval", comm_keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_delete_attr);

// --- Datatypes.

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn,
                            MPI_Type_delete_attr_function* type_delete_attr_fn, int* type_keyval,
                            void* extra_state) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::create_keyval(
      "MPI_Type_create_keyval",
      torusmpi::mpi::c_keyval(AttrKind::kType, reinterpret_cast<void (*)()>(type_copy_attr_fn),
                              reinterpret_cast<void (*)()>(type_delete_attr_fn), extra_state),
      type_keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_create_keyval);

int PMPI_Type_free_keyval(int* type_keyval) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::free_keyval("MPI_Type_free_keyval", AttrKind::kType, "type_keyval",
                                    type_keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_free_keyval);

int PMPI_Type_set_attr(MPI_Datatype type, int type_keyval, void* attribute_val) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_set_attr";
  TORUSMPI_TYPE_TARGET(t, type, kFn);
  return torusmpi::mpi::set_attr(kFn, t, "type_keyval", type_keyval, attribute_val);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_set_attr);

int PMPI_Type_get_attr(MPI_Datatype type, int type_keyval, void* attribute_val, int* flag) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_get_attr";
  TORUSMPI_TYPE_TARGET(t, type, kFn);
  return torusmpi::mpi::get_attr(kFn, t, "type_keyval", type_keyval, attribute_val, flag);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_attr);

int PMPI_Type_delete_attr(MPI_Datatype type, int type_keyval) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Type_delete_attr";
  TORUSMPI_TYPE_TARGET(t, type, kFn);
  return torusmpi::mpi::delete_attr(kFn, t, "type_keyval", type_keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_delete_attr);

// --- Windows.

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                           MPI_Win_delete_attr_function* win_delete_attr_fn, int* win_keyval,
                           void* extra_state) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::create_keyval(
      "MPI_Win_create_keyval",
      torusmpi::mpi::c_keyval(AttrKind::kWin, reinterpret_cast<void (*)()>(win_copy_attr_fn),
                              reinterpret_cast<void (*)()>(win_delete_attr_fn), extra_state),
      win_keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_create_keyval);

int PMPI_Win_free_keyval(int* win_keyval) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::free_keyval("MPI_Win_free_keyval", AttrKind::kWin, "win_keyval",
                                    win_keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_free_keyval);

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_set_attr";
  TORUSMPI_WIN_TARGET(t, win, kFn);
  return torusmpi::mpi::set_attr(kFn, t, "win_keyval", win_keyval, attribute_val);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_set_attr);

// The predefined window attributes (MPI_WIN_BASE, ...) belong with the windows, when they come.
int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Win_get_attr";
  TORUSMPI_WIN_TARGET(t, win, kFn);
  return torusmpi::mpi::get_attr(kFn, t, "win_keyval", win_keyval, attribute_val, flag);
}
TORUSMPI_WEAK_ALIAS(MPI_Win_get_attr);

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  torusmpi::progress::Lock lock;
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
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::create_keyval(
      "MPI_Keyval_create",
      torusmpi::mpi::c_keyval(AttrKind::kComm, reinterpret_cast<void (*)()>(copy_fn),
                              reinterpret_cast<void (*)()>(delete_fn), extra_state),
      keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Keyval_create);

int PMPI_Keyval_free(int* keyval) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::free_keyval("MPI_Keyval_free", AttrKind::kComm, "keyval", keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Keyval_free);

int PMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Attr_put";
  TORUSMPI_COMM_TARGET(t, comm, kFn);
  return torusmpi::mpi::set_attr(kFn, t, "keyval", keyval, attribute_val);
}
TORUSMPI_WEAK_ALIAS(MPI_Attr_put);

int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  torusmpi::progress::Lock lock;
  return torusmpi::mpi::comm_get_attr("MPI_Attr_get", comm, "keyval", keyval, attribute_val, flag);
}
TORUSMPI_WEAK_ALIAS(MPI_Attr_get);

int PMPI_Attr_delete(MPI_Comm comm, int keyval) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Attr_delete";
  TORUSMPI_COMM_TARGET(t, comm, kFn);
  return torusmpi::mpi::delete_attr(kFn, t, "keyval", keyval);
}
TORUSMPI_WEAK_ALIAS(MPI_Attr_delete);

#pragma GCC diagnostic pop

// --- What Open MPI's binding libraries call: libmpi_mpifh makes Fortran keyvals and sets and gets
// Fortran values with these, libmpi_cxx makes its C++ keyvals (C callbacks of its own). The
// signatures are Open MPI 4.1's attribute.h: the object type as an int (COMM_ATTR = 1, TYPE_ATTR,
// WIN_ATTR), a union of callback pointers as one pointer (the same in registers), the `attr_hash`
// an object keeps at c_keyhash (d_keyhash, w_keyhash), which is the handle itself here.

namespace torusmpi::mpi {
namespace {

bool attr_kind_of(int type, AttrKind* kind) {
  switch (type) {
    case ompi::kCommAttr:
      *kind = AttrKind::kComm;
      return true;
    case ompi::kTypeAttr:
      *kind = AttrKind::kType;
      return true;
    case ompi::kWinAttr:
      *kind = AttrKind::kWin;
      return true;
  }
  return false;
}

// The Fortran call a binding's set or get stands for, for messages: only communicators have the
// MPI-1 forms, whose values are INTEGERs.
const char* fortran_call(AttrKind kind, bool mpi1, bool set) {
  if (kind == AttrKind::kComm && mpi1) return set ? "MPI_ATTR_PUT" : "MPI_ATTR_GET";
  switch (kind) {
    case AttrKind::kComm:
      return set ? "MPI_COMM_SET_ATTR" : "MPI_COMM_GET_ATTR";
    case AttrKind::kType:
      return set ? "MPI_TYPE_SET_ATTR" : "MPI_TYPE_GET_ATTR";
    case AttrKind::kWin:
      return set ? "MPI_WIN_SET_ATTR" : "MPI_WIN_GET_ATTR";
  }
  return "an attribute call";
}

int keyval_from_bindings(int type, Keyval k, int* key) {
  if (!attr_kind_of(type, &k.kind)) {
    return raise_error(nullptr, MPI_ERR_ARG, "MPI_KEYVAL_CREATE",
                       "object type %d of a keyval is not a communicator, datatype or window",
                       type);
  }
  return create_keyval(k.fortran() ? "MPI_KEYVAL_CREATE" : "MPI::Create_keyval", k, key);
}

// The object of a binding's set or get: the handle, valid for kind, or the error raised.
int binding_target(const char* fn, AttrKind kind, void* object, Target* out) {
  switch (kind) {
    case AttrKind::kComm: {
      TORUSMPI_COMM_TARGET(t, static_cast<MPI_Comm>(object), fn);
      *out = t;
      return MPI_SUCCESS;
    }
    case AttrKind::kType: {
      TORUSMPI_TYPE_TARGET(t, static_cast<MPI_Datatype>(object), fn);
      *out = t;
      return MPI_SUCCESS;
    }
    case AttrKind::kWin: {
      TORUSMPI_WIN_TARGET(t, static_cast<MPI_Win>(object), fn);
      *out = t;
      return MPI_SUCCESS;
    }
  }
  return MPI_ERR_INTERN;
}

int set_from_bindings(int type, void* object, int key, From from, MPI_Aint value) {
  AttrKind kind;
  if (!attr_kind_of(type, &kind)) {
    return raise_error(nullptr, MPI_ERR_ARG, "MPI_ATTR_PUT", "object type %d is unknown", type);
  }
  const char* fn = fortran_call(kind, from == From::kFint, true);
  Target t;
  if (int err = binding_target(fn, kind, object, &t)) return err;
  return set_attr(fn, t, "keyval", key, from, nullptr, value);
}

// The kind of object behind a binding's attr_hash: by its magic word when it is a handle, else by
// the keyval (predefined keyvals are communicators').
AttrKind kind_of_hash(void* attr_hash, int key) {
  if (attr_hash != nullptr) {
    switch (*static_cast<const uint64_t*>(attr_hash)) {
      case kMagicDatatype:
        return AttrKind::kType;
      case kMagicWin:
        return AttrKind::kWin;
      case kMagicComm:
        return AttrKind::kComm;
    }
  }
  const Keyval* k = is_predefined_keyval(key) ? nullptr : keyval_of(key);
  return k != nullptr ? k->kind : AttrKind::kComm;
}

int get_from_bindings(void* attr_hash, int key, bool mpi1, Value* v, int* flag) {
  AttrKind kind = kind_of_hash(attr_hash, key);
  const char* fn = fortran_call(kind, mpi1, false);
  Target t;
  if (int err = binding_target(fn, kind, attr_hash, &t)) return err;
  return get_value(fn, t, "keyval", key, v, flag);
}

}  // namespace
}  // namespace torusmpi::mpi

namespace mpi = torusmpi::mpi;

// libmpi_cxx: a keyval of C callbacks (its intercepts) whose extra state it allocated.
TORUSMPI_EXPORT int ompi_attr_create_keyval(int type, void (*copy)(), void (*del)(), int* key,
                                            void* extra_state, int flags,
                                            void* bindings_extra_state) {
  torusmpi::progress::Lock lock;
  mpi::Keyval k{AttrKind::kComm, flags, copy, del, extra_state, 0, 0, bindings_extra_state};
  return mpi::keyval_from_bindings(type, k, key);
}

// libmpi_mpifh: MPI_KEYVAL_CREATE (INTEGER values and extra state).
TORUSMPI_EXPORT int ompi_attr_create_keyval_fint(int type, void (*copy)(), void (*del)(), int* key,
                                                 MPI_Fint extra_state, int flags,
                                                 void* bindings_extra_state) {
  torusmpi::progress::Lock lock;
  mpi::Keyval k{AttrKind::kComm,
                flags | mpi::ompi::kKeyvalF77Int,
                copy,
                del,
                nullptr,
                extra_state,
                extra_state,
                bindings_extra_state};
  return mpi::keyval_from_bindings(type, k, key);
}

// libmpi_mpifh: MPI_COMM_CREATE_KEYVAL and the others (INTEGER(KIND=MPI_ADDRESS_KIND)).
TORUSMPI_EXPORT int ompi_attr_create_keyval_aint(int type, void (*copy)(), void (*del)(), int* key,
                                                 MPI_Aint extra_state, int flags,
                                                 void* bindings_extra_state) {
  torusmpi::progress::Lock lock;
  mpi::Keyval k{AttrKind::kComm,
                flags,
                copy,
                del,
                nullptr,
                static_cast<MPI_Fint>(extra_state),
                extra_state,
                bindings_extra_state};
  return mpi::keyval_from_bindings(type, k, key);
}

TORUSMPI_EXPORT int ompi_attr_set_fint(int type, void* object, void** attr_hash, int key,
                                       MPI_Fint attribute, bool predefined) {
  torusmpi::progress::Lock lock;
  (void)attr_hash;
  (void)predefined;
  return mpi::set_from_bindings(type, object, key, mpi::From::kFint, attribute);
}

TORUSMPI_EXPORT int ompi_attr_set_aint(int type, void* object, void** attr_hash, int key,
                                       MPI_Aint attribute, bool predefined) {
  torusmpi::progress::Lock lock;
  (void)attr_hash;
  (void)predefined;
  return mpi::set_from_bindings(type, object, key, mpi::From::kAint, attribute);
}

TORUSMPI_EXPORT int ompi_attr_get_fint(void* attr_hash, int key, MPI_Fint* attribute, int* flag) {
  torusmpi::progress::Lock lock;
  mpi::Value v;
  int err = mpi::get_from_bindings(attr_hash, key, true, &v, flag);
  if (err == MPI_SUCCESS && *flag) *attribute = mpi::as_fint(v);
  return err;
}

TORUSMPI_EXPORT int ompi_attr_get_aint(void* attr_hash, int key, MPI_Aint* attribute, int* flag) {
  torusmpi::progress::Lock lock;
  mpi::Value v;
  int err = mpi::get_from_bindings(attr_hash, key, false, &v, flag);
  if (err == MPI_SUCCESS && *flag) *attribute = mpi::as_aint(v);
  return err;
}
