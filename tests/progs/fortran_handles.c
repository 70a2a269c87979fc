/* fortran_handles: the Fortran value (MPI_<Class>_c2f) of every predefined handle of Open MPI
 * 4.1's mpi.h, and of a few handles the program makes.
 *
 *   fortran_handles     any number of ranks, 1 included
 *
 * A Fortran program compiled against Open MPI's mpif.h, mpi or mpi_f08 carries these numbers as
 * constants (MPI_COMM_WORLD is 0, MPI_INT 39, MPI_DOUBLE 46, ...), so a library standing in for
 * Open MPI's must give every predefined handle the same number. Rank 0 prints one line per handle,
 *   NAME CTYPE NUMBER
 * in a fixed order (the order of this file), so that the output of two libraries can be compared
 * line by line. Handles the program creates follow, on lines starting with "user ": their numbers
 * are up to the library, but must be small and not negative.
 * Every rank also checks that f2c(c2f(handle)) gives the handle back; a failure prints
 *   MISMATCH NAME (rank R): why
 * and makes the exit status 1. */
#include <mpi.h>
#include <stdio.h>

/* Larger than any table index a library would hand out to a handful of objects. */
#define SMALL_LIMIT 65536

static int g_rank;
static int g_mismatches;

/* One handle: its number, and whether converting the number back gives the same handle. */
static void report(const char* prefix, const char* name, const char* ctype, MPI_Fint number,
                   int round_trip, int must_be_small) {
  if (g_rank == 0) printf("%s%s %s %d\n", prefix, name, ctype, (int)number);
  if (!round_trip) {
    ++g_mismatches;
    printf("MISMATCH %s (rank %d): f2c(%d) is not the handle\n", name, g_rank, (int)number);
  }
  if (must_be_small && (number < 0 || number >= SMALL_LIMIT)) {
    ++g_mismatches;
    printf("MISMATCH %s (rank %d): number %d is not a small non-negative integer\n", name, g_rank,
           (int)number);
  }
}

/* HANDLE_AS(prefix, small, Comm, MPI_Comm, "name", handle) reports a handle through
 * MPI_Comm_c2f and MPI_Comm_f2c. The per-class macros take the handle's name before it is
 * expanded: Open MPI's mpi.h makes every predefined handle a macro. */
#define HANDLE_AS(prefix, small, kind, ctype, name, value)                              \
  do {                                                                                  \
    ctype handle_ = (value);                                                            \
    MPI_Fint number_ = MPI_##kind##_c2f(handle_);                                       \
    report(prefix, name, #ctype, number_, MPI_##kind##_f2c(number_) == handle_, small); \
  } while (0)
#define USER(kind, ctype, name, value) HANDLE_AS("user ", 1, kind, ctype, name, value)

#define COMM(h) HANDLE_AS("", 0, Comm, MPI_Comm, #h, h)
#define GROUP(h) HANDLE_AS("", 0, Group, MPI_Group, #h, h)
#define REQUEST(h) HANDLE_AS("", 0, Request, MPI_Request, #h, h)
#define MESSAGE(h) HANDLE_AS("", 0, Message, MPI_Message, #h, h)
#define OP(h) HANDLE_AS("", 0, Op, MPI_Op, #h, h)
#define ERRHANDLER(h) HANDLE_AS("", 0, Errhandler, MPI_Errhandler, #h, h)
#define INFO(h) HANDLE_AS("", 0, Info, MPI_Info, #h, h)
#define WIN(h) HANDLE_AS("", 0, Win, MPI_Win, #h, h)
#define FILE_HANDLE(h) HANDLE_AS("", 0, File, MPI_File, #h, h)
#define TYPE(h) HANDLE_AS("", 0, Type, MPI_Datatype, #h, h)

static void predefined(void) {
  COMM(MPI_COMM_WORLD);
  COMM(MPI_COMM_SELF);
  COMM(MPI_COMM_NULL);
  GROUP(MPI_GROUP_NULL);
  GROUP(MPI_GROUP_EMPTY);
  REQUEST(MPI_REQUEST_NULL);
  MESSAGE(MPI_MESSAGE_NULL);
  MESSAGE(MPI_MESSAGE_NO_PROC);
  OP(MPI_OP_NULL);
  OP(MPI_MAX);
  OP(MPI_MIN);
  OP(MPI_SUM);
  OP(MPI_PROD);
  OP(MPI_LAND);
  OP(MPI_BAND);
  OP(MPI_LOR);
  OP(MPI_BOR);
  OP(MPI_LXOR);
  OP(MPI_BXOR);
  OP(MPI_MAXLOC);
  OP(MPI_MINLOC);
  OP(MPI_REPLACE);
  OP(MPI_NO_OP);
  ERRHANDLER(MPI_ERRHANDLER_NULL);
  ERRHANDLER(MPI_ERRORS_ARE_FATAL);
  ERRHANDLER(MPI_ERRORS_RETURN);
  INFO(MPI_INFO_NULL);
  INFO(MPI_INFO_ENV);
  WIN(MPI_WIN_NULL);
  FILE_HANDLE(MPI_FILE_NULL);

  TYPE(MPI_DATATYPE_NULL);
  /* C */
  TYPE(MPI_BYTE);
  TYPE(MPI_PACKED);
  TYPE(MPI_CHAR);
  TYPE(MPI_SHORT);
  TYPE(MPI_INT);
  TYPE(MPI_LONG);
  TYPE(MPI_FLOAT);
  TYPE(MPI_DOUBLE);
  TYPE(MPI_LONG_DOUBLE);
  TYPE(MPI_UNSIGNED_CHAR);
  TYPE(MPI_SIGNED_CHAR);
  TYPE(MPI_UNSIGNED_SHORT);
  TYPE(MPI_UNSIGNED_LONG);
  TYPE(MPI_UNSIGNED);
  TYPE(MPI_WCHAR);
#ifdef MPI_LONG_LONG
  TYPE(MPI_LONG_LONG_INT);
  TYPE(MPI_LONG_LONG);
  TYPE(MPI_UNSIGNED_LONG_LONG);
#endif
  TYPE(MPI_INT8_T);
  TYPE(MPI_UINT8_T);
  TYPE(MPI_INT16_T);
  TYPE(MPI_UINT16_T);
  TYPE(MPI_INT32_T);
  TYPE(MPI_UINT32_T);
  TYPE(MPI_INT64_T);
  TYPE(MPI_UINT64_T);
  TYPE(MPI_AINT);
  TYPE(MPI_OFFSET);
  TYPE(MPI_COUNT);
  TYPE(MPI_C_BOOL);
  TYPE(MPI_C_COMPLEX);
  TYPE(MPI_C_FLOAT_COMPLEX);
  TYPE(MPI_C_DOUBLE_COMPLEX);
  TYPE(MPI_C_LONG_DOUBLE_COMPLEX);
  /* C pairs, for MPI_MAXLOC and MPI_MINLOC */
  TYPE(MPI_FLOAT_INT);
  TYPE(MPI_DOUBLE_INT);
  TYPE(MPI_LONG_DOUBLE_INT);
  TYPE(MPI_LONG_INT);
  TYPE(MPI_SHORT_INT);
  TYPE(MPI_2INT);
  /* C++ */
  TYPE(MPI_CXX_BOOL);
  TYPE(MPI_CXX_COMPLEX);
  TYPE(MPI_CXX_FLOAT_COMPLEX);
  TYPE(MPI_CXX_DOUBLE_COMPLEX);
  TYPE(MPI_CXX_LONG_DOUBLE_COMPLEX);
  /* Fortran; the sized ones only where mpi.h defines them */
  TYPE(MPI_CHARACTER);
  TYPE(MPI_LOGICAL);
#ifdef MPI_LOGICAL1
  TYPE(MPI_LOGICAL1);
#endif
#ifdef MPI_LOGICAL2
  TYPE(MPI_LOGICAL2);
#endif
#ifdef MPI_LOGICAL4
  TYPE(MPI_LOGICAL4);
#endif
#ifdef MPI_LOGICAL8
  TYPE(MPI_LOGICAL8);
#endif
  TYPE(MPI_INTEGER);
#ifdef MPI_INTEGER1
  TYPE(MPI_INTEGER1);
#endif
#ifdef MPI_INTEGER2
  TYPE(MPI_INTEGER2);
#endif
#ifdef MPI_INTEGER4
  TYPE(MPI_INTEGER4);
#endif
#ifdef MPI_INTEGER8
  TYPE(MPI_INTEGER8);
#endif
#ifdef MPI_INTEGER16
  TYPE(MPI_INTEGER16);
#endif
  TYPE(MPI_REAL);
#ifdef MPI_REAL2
  TYPE(MPI_REAL2);
#endif
#ifdef MPI_REAL4
  TYPE(MPI_REAL4);
#endif
#ifdef MPI_REAL8
  TYPE(MPI_REAL8);
#endif
#ifdef MPI_REAL16
  TYPE(MPI_REAL16);
#endif
  TYPE(MPI_DOUBLE_PRECISION);
  TYPE(MPI_COMPLEX);
#ifdef MPI_COMPLEX4
  TYPE(MPI_COMPLEX4);
#endif
#ifdef MPI_COMPLEX8
  TYPE(MPI_COMPLEX8);
#endif
#ifdef MPI_COMPLEX16
  TYPE(MPI_COMPLEX16);
#endif
#ifdef MPI_COMPLEX32
  TYPE(MPI_COMPLEX32);
#endif
  TYPE(MPI_DOUBLE_COMPLEX);
  /* Fortran pairs */
  TYPE(MPI_2REAL);
  TYPE(MPI_2DOUBLE_PRECISION);
  TYPE(MPI_2INTEGER);
  TYPE(MPI_2COMPLEX);
  TYPE(MPI_2DOUBLE_COMPLEX);
  /* Removed in MPI-3: Open MPI's mpi.h declares them only when built with MPI-1 compatibility
   * (otherwise the names are defined, but to a compile-time error). */
#if defined(OMPI_ENABLE_MPI1_COMPAT) && OMPI_ENABLE_MPI1_COMPAT
  TYPE(MPI_LB);
  TYPE(MPI_UB);
#endif
}

static void user_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

/* Handles made at run time. The second duplicate is made after the first is freed, so a library
 * that reuses the freed number shows it here. */
static void user_handles(void) {
  MPI_Comm first, second, third;
  MPI_Datatype contig;
  MPI_Op op;
  MPI_Group group;

  MPI_Comm_dup(MPI_COMM_WORLD, &first);
  MPI_Comm_dup(MPI_COMM_WORLD, &second);
  USER(Comm, MPI_Comm, "first_dup", first);
  USER(Comm, MPI_Comm, "second_dup", second);
  MPI_Comm_free(&first);
  MPI_Comm_dup(MPI_COMM_WORLD, &third);
  USER(Comm, MPI_Comm, "dup_after_free", third);
  MPI_Type_contiguous(3, MPI_INT, &contig);
  MPI_Type_commit(&contig);
  USER(Type, MPI_Datatype, "contiguous", contig);
  MPI_Op_create(user_sum, 1, &op);
  USER(Op, MPI_Op, "op_create", op);
  MPI_Comm_group(second, &group);
  USER(Group, MPI_Group, "comm_group", group);

  MPI_Group_free(&group);
  MPI_Op_free(&op);
  MPI_Type_free(&contig);
  MPI_Comm_free(&third);
  MPI_Comm_free(&second);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  setvbuf(stdout, NULL, _IOLBF, 0);
  predefined();
  user_handles();
  MPI_Finalize();
  return g_mismatches == 0 ? 0 : 1;
}
