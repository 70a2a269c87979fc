/* types: prints what the library says about every predefined datatype of Open MPI 4.1's mpi.h,
 * one line each, plus a few run-time facts. The test diffs this output under real Open MPI against
 * torusmpi's: an application must not be able to tell them apart. Prints nothing that varies from
 * run to run (no library version, host or rank count). */
#include <mpi.h>
#include <stdio.h>

/* Open MPI 4.1 still exports MPI_LB and MPI_UB, and old binaries use them, but its mpi.h hides
 * them unless built with MPI-1 compatibility. */
extern struct ompi_predefined_datatype_t ompi_mpi_lb, ompi_mpi_ub;

/* The table of predefined types, laid out by hand: clang-format would give each its own line. */
/* clang-format off */
#define TYPE(t) {t, #t}
/* Its object is exported whether or not Open MPI's Fortran has a 16-byte integer; the macro
 * is not. */
#ifdef MPI_INTEGER16
#define INTEGER16 TYPE(MPI_INTEGER16)
#else
#define INTEGER16 {(MPI_Datatype)&ompi_mpi_integer16, "MPI_INTEGER16"}
#endif
static const struct {
  MPI_Datatype type;
  const char* macro;
} kTypes[] = {
    TYPE(MPI_DATATYPE_NULL), TYPE(MPI_BYTE), TYPE(MPI_PACKED), TYPE(MPI_CHAR), TYPE(MPI_SHORT),
    TYPE(MPI_INT), TYPE(MPI_LONG), TYPE(MPI_FLOAT), TYPE(MPI_DOUBLE), TYPE(MPI_LONG_DOUBLE),
    TYPE(MPI_UNSIGNED_CHAR), TYPE(MPI_SIGNED_CHAR), TYPE(MPI_UNSIGNED_SHORT),
    TYPE(MPI_UNSIGNED_LONG), TYPE(MPI_UNSIGNED), TYPE(MPI_FLOAT_INT), TYPE(MPI_DOUBLE_INT),
    TYPE(MPI_LONG_DOUBLE_INT), TYPE(MPI_LONG_INT), TYPE(MPI_SHORT_INT), TYPE(MPI_2INT),
    TYPE(MPI_WCHAR), TYPE(MPI_LONG_LONG_INT), TYPE(MPI_LONG_LONG), TYPE(MPI_UNSIGNED_LONG_LONG),
    TYPE(MPI_2COMPLEX), TYPE(MPI_2DOUBLE_COMPLEX), TYPE(MPI_CHARACTER), TYPE(MPI_LOGICAL),
    TYPE(MPI_LOGICAL1), TYPE(MPI_LOGICAL2), TYPE(MPI_LOGICAL4), TYPE(MPI_LOGICAL8),
    TYPE(MPI_INTEGER), TYPE(MPI_INTEGER1), TYPE(MPI_INTEGER2), TYPE(MPI_INTEGER4),
    TYPE(MPI_INTEGER8), INTEGER16, TYPE(MPI_REAL), TYPE(MPI_REAL4), TYPE(MPI_REAL8),
    TYPE(MPI_REAL16), TYPE(MPI_DOUBLE_PRECISION), TYPE(MPI_COMPLEX), TYPE(MPI_COMPLEX8),
    TYPE(MPI_COMPLEX16), TYPE(MPI_COMPLEX32), TYPE(MPI_DOUBLE_COMPLEX), TYPE(MPI_2REAL),
    TYPE(MPI_2DOUBLE_PRECISION), TYPE(MPI_2INTEGER), TYPE(MPI_INT8_T), TYPE(MPI_UINT8_T),
    TYPE(MPI_INT16_T), TYPE(MPI_UINT16_T), TYPE(MPI_INT32_T), TYPE(MPI_UINT32_T),
    TYPE(MPI_INT64_T), TYPE(MPI_UINT64_T), TYPE(MPI_AINT), TYPE(MPI_OFFSET), TYPE(MPI_C_BOOL),
    TYPE(MPI_C_COMPLEX), TYPE(MPI_C_FLOAT_COMPLEX), TYPE(MPI_C_DOUBLE_COMPLEX),
    TYPE(MPI_C_LONG_DOUBLE_COMPLEX), TYPE(MPI_CXX_BOOL), TYPE(MPI_CXX_COMPLEX),
    TYPE(MPI_CXX_FLOAT_COMPLEX), TYPE(MPI_CXX_DOUBLE_COMPLEX), TYPE(MPI_CXX_LONG_DOUBLE_COMPLEX),
    TYPE(MPI_COUNT),
    {(MPI_Datatype)&ompi_mpi_lb, "MPI_LB"},
    {(MPI_Datatype)&ompi_mpi_ub, "MPI_UB"},
    /* Declared and exported, though no macro of this mpi.h names them. */
    {(MPI_Datatype)&ompi_mpi_ldblcplex, "ompi_mpi_ldblcplex"},
    {(MPI_Datatype)&ompi_mpi_real2, "ompi_mpi_real2"},
};
/* clang-format on */
#undef TYPE
#undef INTEGER16

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  /* MPI_DATATYPE_NULL is an invalid argument to some of these: print the error class instead. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  int version = 0, subversion = 0;
  MPI_Get_version(&version, &subversion);
  printf("MPI_Get_version %d.%d\n", version, subversion);
  printf("sizeof MPI_Status %zu MPI_Aint %zu MPI_Offset %zu MPI_Count %zu handle %zu\n",
         sizeof(MPI_Status), sizeof(MPI_Aint), sizeof(MPI_Offset), sizeof(MPI_Count),
         sizeof(MPI_Comm));
  printf("MPI_VERSION %d.%d MPI_MAX_PROCESSOR_NAME %d MPI_MAX_OBJECT_NAME %d MPI_ERR_LASTCODE %d\n",
         MPI_VERSION, MPI_SUBVERSION, MPI_MAX_PROCESSOR_NAME, MPI_MAX_OBJECT_NAME,
         MPI_ERR_LASTCODE);
  printf("MPI_ANY_SOURCE %d MPI_PROC_NULL %d MPI_ROOT %d MPI_UNDEFINED %d MPI_THREAD_MULTIPLE %d\n",
         MPI_ANY_SOURCE, MPI_PROC_NULL, MPI_ROOT, MPI_UNDEFINED, MPI_THREAD_MULTIPLE);

  const struct {
    MPI_Comm comm;
    const char* macro;
  } comms[] = {{MPI_COMM_WORLD, "MPI_COMM_WORLD"}, {MPI_COMM_SELF, "MPI_COMM_SELF"}};
  for (size_t i = 0; i < sizeof comms / sizeof comms[0]; ++i) {
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = -1, size = -1;
    int rc = MPI_Comm_get_name(comms[i].comm, name, &len);
    if (comms[i].comm == MPI_COMM_SELF) MPI_Comm_size(MPI_COMM_SELF, &size);
    printf("%s: rc %d name \"%s\" len %d size %d\n", comms[i].macro, rc, name, len, size);
  }

  for (size_t i = 0; i < sizeof kTypes / sizeof kTypes[0]; ++i) {
    MPI_Datatype t = kTypes[i].type;
    int size = -1, len = -1, rc, cls;
    char name[MPI_MAX_OBJECT_NAME] = "";
    MPI_Aint lb = -1, extent = -1, true_lb = -1, true_extent = -1;
    printf("%s:", kTypes[i].macro);
    rc = MPI_Type_size(t, &size);
    MPI_Error_class(rc, &cls);
    printf(" size %d (%d)", rc == MPI_SUCCESS ? size : -1, cls);
    rc = MPI_Type_get_name(t, name, &len);
    MPI_Error_class(rc, &cls);
    printf(" name \"%s\" len %d (%d)", rc == MPI_SUCCESS ? name : "", rc == MPI_SUCCESS ? len : -1,
           cls);
    rc = MPI_Type_get_extent(t, &lb, &extent);
    MPI_Error_class(rc, &cls);
    printf(" extent %ld %ld (%d)", rc == MPI_SUCCESS ? (long)lb : -1L,
           rc == MPI_SUCCESS ? (long)extent : -1L, cls);
    rc = MPI_Type_get_true_extent(t, &true_lb, &true_extent);
    MPI_Error_class(rc, &cls);
    printf(" true_extent %ld %ld (%d)\n", rc == MPI_SUCCESS ? (long)true_lb : -1L,
           rc == MPI_SUCCESS ? (long)true_extent : -1L, cls);
  }

  MPI_Finalize();
  return 0;
}
