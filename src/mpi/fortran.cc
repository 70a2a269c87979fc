// What Open MPI's Fortran bindings (libmpi_mpifh, and the `use mpi` / `use mpi_f08` libraries on
// top of it) and Fortran programs themselves take from libmpi.so.40 beyond the MPI functions:
// the sentinels (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE, ... as common blocks), the
// predefined attribute callbacks and MPI_CONVERSION_FN_NULL as Fortran subroutines, MPI_WTIME and
// the address arithmetic of the F90 interfaces, string and argv conversions, and a few words of
// Open MPI's state the bindings read inline.
//
// Names, kinds and sizes are those of Open MPI 4.1.4's libmpi.so.40 on Debian 12 (gfortran:
// lowercase with one trailing underscore; the callbacks in all four manglings Open MPI exports).
// tests/abi/check-exports.sh compares them with Open MPI's library and with what its binding
// libraries import.
#include "mpi/fortran.h"

#include <cstdlib>
#include <cstring>

#include "core/progress.h"
#include "mpi/builtins.h"

// mpi.h names the C callbacks (OMPI_C_MPI_*) with these macros; here they are the Fortran
// subroutines of the same names.
#undef MPI_NULL_COPY_FN
#undef MPI_DUP_FN
#undef MPI_NULL_DELETE_FN
#undef MPI_COMM_NULL_COPY_FN
#undef MPI_COMM_DUP_FN
#undef MPI_COMM_NULL_DELETE_FN
#undef MPI_TYPE_NULL_COPY_FN
#undef MPI_TYPE_DUP_FN
#undef MPI_TYPE_NULL_DELETE_FN
#undef MPI_WIN_NULL_COPY_FN
#undef MPI_WIN_DUP_FN
#undef MPI_WIN_NULL_DELETE_FN
#undef MPI_CONVERSION_FN_NULL

// --- Sentinels. A Fortran program passes their addresses (its common blocks bind to these
// objects, copied into the executable when it links them); libmpi_mpifh compares arguments with
// the same addresses, which it imports from here.
extern "C" {
TORUSMPI_EXPORT_DATA int mpi_fortran_bottom_ = 0;
TORUSMPI_EXPORT_DATA int mpi_fortran_in_place_ = 0;
TORUSMPI_EXPORT_DATA int mpi_fortran_unweighted_ = 0;
TORUSMPI_EXPORT_DATA int mpi_fortran_weights_empty_ = 0;
TORUSMPI_EXPORT_DATA int mpi_fortran_errcodes_ignore_ = 0;
TORUSMPI_EXPORT_DATA char mpi_fortran_argv_null_ = 0;
TORUSMPI_EXPORT_DATA char mpi_fortran_argvs_null_ = 0;
TORUSMPI_EXPORT_DATA int mpi_fortran_status_ignore_[2] = {};  // 8 bytes, as Open MPI's
TORUSMPI_EXPORT_DATA int mpi_fortran_statuses_ignore_[2] = {};
}  // extern "C"

// --- Open MPI's state, read inline by libmpi_mpifh (OMPI_ERR_INIT_FINALIZE, MPI_PARAM_CHECK).
int32_t ompi_mpi_state = torusmpi::mpi::ompi::kStateNotInitialized;
bool ompi_mpi_param_check = true;

// The table through which Open MPI's error macros turn its internal (negative) codes into MPI
// codes. Every code torusmpi gives the bindings is an MPI code already (they return it as it is
// when it is not negative), so the table is empty: its count is 0 and its array, an opal_pointer_
// array_t of 120 bytes, is never read.
extern "C" {
TORUSMPI_EXPORT_DATA int32_t ompi_errcode_intern_lastused = 0;
TORUSMPI_EXPORT_DATA struct { unsigned char bytes[120]; } ompi_errcodes_intern = {};
}  // extern "C"

// The list MPI_REGISTER_DATAREP of both bindings appends its intercepts to, inline
// (opal_list_append): an empty opal_list_t, whose sentinel's next and prev point at itself.
extern "C" TORUSMPI_EXPORT_DATA opal_list_t ompi_registered_datareps;
opal_list_t ompi_registered_datareps = {nullptr,
                                        1,
                                        {nullptr, 1, &ompi_registered_datareps.opal_list_sentinel,
                                         &ompi_registered_datareps.opal_list_sentinel, 0},
                                        0};

// The status of an empty request, which MPI_TESTANY's binding copies out when no request is
// active: source MPI_ANY_SOURCE, tag MPI_ANY_TAG, no error, no data.
extern "C" TORUSMPI_EXPORT_DATA MPI_Status ompi_status_empty;
MPI_Status ompi_status_empty = {MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};

// --- Fortran subroutines, each exported under Open MPI's four names (UPPER, lower, lower_,
// lower__): a Fortran program names them in EXTERNAL statements (mpif.h) or calls them from the
// modules.
#define TORUSMPI_FORTRAN_NAME(name, impl) \
  TORUSMPI_EXPORT __typeof__(impl) name __attribute__((alias(#impl)))
#define TORUSMPI_FORTRAN_NAMES(upper, lower, impl) \
  TORUSMPI_FORTRAN_NAME(upper, impl);              \
  TORUSMPI_FORTRAN_NAME(lower, impl);              \
  TORUSMPI_FORTRAN_NAME(lower##_, impl);           \
  TORUSMPI_FORTRAN_NAME(lower##__, impl)

namespace {
using torusmpi::mpi::kFortranFalse;
using torusmpi::mpi::kFortranTrue;
}  // namespace

// The predefined copy and delete callbacks of keyvals, for Fortran keyvals: MPI-1's take INTEGER
// values and extra state (MPI_NULL_COPY_FN, MPI_DUP_FN, MPI_NULL_DELETE_FN), the others
// INTEGER(KIND=MPI_ADDRESS_KIND). The object's type never matters to them.
extern "C" {
void torusmpi_f_null_copy_fn(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* flag,
                             MPI_Fint* ierr) {
  torusmpi::progress::Lock lock;
  *flag = kFortranFalse;
  *ierr = MPI_SUCCESS;
}
void torusmpi_f_dup_fn(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* in, MPI_Fint* out, MPI_Fint* flag,
                       MPI_Fint* ierr) {
  torusmpi::progress::Lock lock;
  *out = *in;
  *flag = kFortranTrue;
  *ierr = MPI_SUCCESS;
}
void torusmpi_f_null_delete_fn(MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint*, MPI_Fint* ierr) {
  torusmpi::progress::Lock lock;
  *ierr = MPI_SUCCESS;
}
void torusmpi_f_aint_null_copy_fn(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*,
                                  MPI_Fint* flag, MPI_Fint* ierr) {
  torusmpi::progress::Lock lock;
  *flag = kFortranFalse;
  *ierr = MPI_SUCCESS;
}
void torusmpi_f_aint_dup_fn(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint* in, MPI_Aint* out,
                            MPI_Fint* flag, MPI_Fint* ierr) {
  torusmpi::progress::Lock lock;
  *out = *in;
  *flag = kFortranTrue;
  *ierr = MPI_SUCCESS;
}
void torusmpi_f_aint_null_delete_fn(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Fint* ierr) {
  torusmpi::progress::Lock lock;
  *ierr = MPI_SUCCESS;
}

// MPI_CONVERSION_FN_NULL (MPI_REGISTER_DATAREP): no conversion, no error.
void torusmpi_f_conversion_fn_null(void*, MPI_Fint*, MPI_Fint*, void*, MPI_Offset*, MPI_Aint*,
                                   MPI_Fint* ierr) {
  torusmpi::progress::Lock lock;
  *ierr = MPI_SUCCESS;
}

// What `use mpi` calls for MPI_WTIME, MPI_WTICK, MPI_AINT_ADD and MPI_AINT_DIFF (the result
// comes back through the last argument).
void torusmpi_f_wtime(double* w) { *w = PMPI_Wtime(); }
void torusmpi_f_wtick(double* w) { *w = PMPI_Wtick(); }
void torusmpi_f_aint_add(MPI_Aint* base, MPI_Aint* disp, MPI_Aint* w) {
  torusmpi::progress::Lock lock;
  *w = PMPI_Aint_add(*base, *disp);
}
void torusmpi_f_aint_diff(MPI_Aint* addr1, MPI_Aint* addr2, MPI_Aint* w) {
  torusmpi::progress::Lock lock;
  *w = PMPI_Aint_diff(*addr1, *addr2);
}
}  // extern "C"

TORUSMPI_FORTRAN_NAMES(MPI_NULL_COPY_FN, mpi_null_copy_fn, torusmpi_f_null_copy_fn);
TORUSMPI_FORTRAN_NAMES(MPI_DUP_FN, mpi_dup_fn, torusmpi_f_dup_fn);
TORUSMPI_FORTRAN_NAMES(MPI_NULL_DELETE_FN, mpi_null_delete_fn, torusmpi_f_null_delete_fn);
TORUSMPI_FORTRAN_NAMES(MPI_COMM_NULL_COPY_FN, mpi_comm_null_copy_fn, torusmpi_f_aint_null_copy_fn);
TORUSMPI_FORTRAN_NAMES(MPI_COMM_DUP_FN, mpi_comm_dup_fn, torusmpi_f_aint_dup_fn);
TORUSMPI_FORTRAN_NAMES(MPI_COMM_NULL_DELETE_FN, mpi_comm_null_delete_fn,
                       torusmpi_f_aint_null_delete_fn);
TORUSMPI_FORTRAN_NAMES(MPI_TYPE_NULL_COPY_FN, mpi_type_null_copy_fn, torusmpi_f_aint_null_copy_fn);
TORUSMPI_FORTRAN_NAMES(MPI_TYPE_DUP_FN, mpi_type_dup_fn, torusmpi_f_aint_dup_fn);
TORUSMPI_FORTRAN_NAMES(MPI_TYPE_NULL_DELETE_FN, mpi_type_null_delete_fn,
                       torusmpi_f_aint_null_delete_fn);
TORUSMPI_FORTRAN_NAMES(MPI_WIN_NULL_COPY_FN, mpi_win_null_copy_fn, torusmpi_f_aint_null_copy_fn);
TORUSMPI_FORTRAN_NAMES(MPI_WIN_DUP_FN, mpi_win_dup_fn, torusmpi_f_aint_dup_fn);
TORUSMPI_FORTRAN_NAMES(MPI_WIN_NULL_DELETE_FN, mpi_win_null_delete_fn,
                       torusmpi_f_aint_null_delete_fn);
TORUSMPI_FORTRAN_NAMES(MPI_CONVERSION_FN_NULL, mpi_conversion_fn_null,
                       torusmpi_f_conversion_fn_null);
TORUSMPI_FORTRAN_NAME(mpi_conversion_fn_null_f, torusmpi_f_conversion_fn_null);  // Open MPI's too
TORUSMPI_FORTRAN_NAMES(MPI_WTIME_F90, mpi_wtime_f90, torusmpi_f_wtime);
TORUSMPI_FORTRAN_NAMES(MPI_WTICK_F90, mpi_wtick_f90, torusmpi_f_wtick);
TORUSMPI_FORTRAN_NAMES(MPI_AINT_ADD_F90, mpi_aint_add_f90, torusmpi_f_aint_add);
TORUSMPI_FORTRAN_NAMES(MPI_AINT_DIFF_F90, mpi_aint_diff_f90, torusmpi_f_aint_diff);

#undef TORUSMPI_FORTRAN_NAMES
#undef TORUSMPI_FORTRAN_NAME

// --- Strings. A Fortran string is `len` characters padded with blanks, not terminated.

// A new C string (malloc, the caller frees it) of fstr without its leading and trailing blanks.
// MPI_SUCCESS, or MPI_ERR_NO_MEM (an MPI code: the bindings pass it on unchanged).
TORUSMPI_EXPORT int ompi_fortran_string_f2c(char* fstr, int len, char** cstr) {
  int first = 0;
  while (first < len && fstr[first] == ' ') ++first;
  int last = len;
  while (last > first && fstr[last - 1] == ' ') --last;
  const size_t n = static_cast<size_t>(last - first);
  *cstr = static_cast<char*>(std::malloc(n + 1));
  if (*cstr == nullptr) return MPI_ERR_NO_MEM;
  std::memcpy(*cstr, fstr + first, n);
  (*cstr)[n] = '\0';
  return MPI_SUCCESS;
}

// cstr into the len characters of fstr, cut to fit or padded with blanks.
TORUSMPI_EXPORT int ompi_fortran_string_c2f(char* cstr, char* fstr, int len) {
  const size_t n = strnlen(cstr, static_cast<size_t>(len));
  std::memcpy(fstr, cstr, n);
  std::memset(fstr + n, ' ', static_cast<size_t>(len) - n);
  return MPI_SUCCESS;
}

// Argument vectors (MPI_COMM_SPAWN's argv), built with malloc as Open MPI's opal_argv functions
// build them, because the bindings free them with opal_argv_free: a null-terminated array of
// strings, each its own allocation.
namespace {

class Argv {
 public:
  ~Argv() { free_all(); }
  bool append(char* s) {
    auto* grown = static_cast<char**>(std::realloc(v_, sizeof(char*) * (n_ + 2)));
    if (grown == nullptr) return false;
    v_ = grown;
    v_[n_++] = s;
    v_[n_] = nullptr;
    return true;
  }
  char** release() {
    char** v = v_;
    v_ = nullptr;
    n_ = 0;
    return v;
  }

 private:
  void free_all() {
    for (size_t i = 0; i < n_; ++i) std::free(v_[i]);
    std::free(v_);
  }
  char** v_ = nullptr;
  size_t n_ = 0;
};

// Converts strings of `string_len` characters `advance` bytes apart, `count` of them (-1: until
// the first blank one, which is left out).
int fortran_argv(char* array, int count, int string_len, int advance, char*** argv) {
  Argv out;
  *argv = nullptr;
  for (int i = 0; count < 0 || i < count; ++i, array += advance) {
    char* s = nullptr;
    if (int err = ompi_fortran_string_f2c(array, string_len, &s)) return err;
    if (count < 0 && s[0] == '\0') {
      std::free(s);
      break;
    }
    if (!out.append(s)) {
      std::free(s);
      return MPI_ERR_NO_MEM;
    }
  }
  *argv = out.release();
  return MPI_SUCCESS;
}

}  // namespace

TORUSMPI_EXPORT int ompi_fortran_argv_blank_f2c(char* array, int string_len, int advance,
                                                char*** argv) {
  return fortran_argv(array, -1, string_len, advance, argv);
}

TORUSMPI_EXPORT int ompi_fortran_argv_count_f2c(char* array, int argc, int string_len, int advance,
                                                char*** argv) {
  return fortran_argv(array, argc, string_len, advance, argv);
}

// MPI_COMM_SPAWN_MULTIPLE's ARRAY_OF_ARGV(COUNT, *): argument j of command i is string (i, j) of
// the column-major array.
TORUSMPI_EXPORT int ompi_fortran_multiple_argvs_f2c(int count, char* array, int string_len,
                                                    char**** argv) {
  auto** all = static_cast<char***>(std::calloc(static_cast<size_t>(count), sizeof(char**)));
  if (all == nullptr && count > 0) return MPI_ERR_NO_MEM;
  for (int i = 0; i < count; ++i) {
    if (int err = fortran_argv(array + static_cast<ptrdiff_t>(i) * string_len, -1, string_len,
                               string_len * count, &all[i])) {
      for (int j = 0; j < i; ++j) {
        for (char** a = all[j]; a != nullptr && *a != nullptr; ++a) std::free(*a);
        std::free(all[j]);
      }
      std::free(all);
      return err;
    }
  }
  *argv = all;
  return MPI_SUCCESS;
}

// --- Datatypes.

// The predefined datatype of a size in a kind (ompi::kDataInt, kDataFloat, kDataComplex) of a
// language: MPI_TYPE_MATCH_SIZE's binding asks for Fortran's, which MPI_Type_match_size answers.
// MPI_DATATYPE_NULL when there is none (the binding then raises MPI_ERR_ARG).
TORUSMPI_EXPORT MPI_Datatype ompi_datatype_match_size(int size, uint16_t kind, uint16_t lang) {
  torusmpi::progress::Lock lock;
  int typeclass = kind == torusmpi::mpi::ompi::kDataInt       ? MPI_TYPECLASS_INTEGER
                  : kind == torusmpi::mpi::ompi::kDataFloat   ? MPI_TYPECLASS_REAL
                  : kind == torusmpi::mpi::ompi::kDataComplex ? MPI_TYPECLASS_COMPLEX
                                                              : -1;
  if (lang != torusmpi::mpi::ompi::kDataFortran || typeclass < 0) return MPI_DATATYPE_NULL;
  return torusmpi::mpi::fortran_type_of_size(typeclass, size);
}
