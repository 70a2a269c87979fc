/* tools: the MPI tools interface, before, during and after MPI.
 *
 *   tools      run with TORUSMPI_SPIN_COUNT=77 and TORUSMPI_DEBUG=boot in the environment
 *
 * torusmpi's control variables are its TORUSMPI_* parameters, read-only; there are no
 * performance variables. Reporting as in check.h. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

/* Index of the control variable called name, or -1. */
static int cvar_index(const char* name) {
  int index = -1;
  return MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS ? index : -1;
}

static void check_cvars(void) {
  int num = 0;
  check_rc(MPI_T_cvar_get_num(&num), "cvar_get_num");
  check(num >= 5, "cvar-count", "%d control variables", num);
  for (int i = 0; i < num; ++i) {
    char name[64], desc[512];
    int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    int rc = MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype, desc, &desc_len,
                                 &bind, &scope);
    check(rc == MPI_SUCCESS && strncmp(name, "TORUSMPI_", 9) == 0 &&
              name_len == (int)strlen(name) + 1 && desc_len > 1 &&
              (scope == MPI_T_SCOPE_READONLY || scope == MPI_T_SCOPE_ALL_EQ) &&
              bind == MPI_T_BIND_NO_OBJECT,
          "cvar-info", "index %d: rc %d name \"%s\" (len %d) scope %d bind %d", i, rc, name,
          name_len, scope, bind);
    check(cvar_index(name) == i, "cvar-index-roundtrip", "%s", name);
  }
  int len = 0;
  char name[8];
  MPI_T_cvar_get_info(0, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
  check(len > 1, "cvar-info-length-query", "a zero length asks for the length: got %d", len);
  check(MPI_T_cvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
            MPI_T_ERR_INVALID_INDEX,
        "cvar-info-bad-index", "index %d", num);
  check(cvar_index("TORUSMPI_NO_SUCH_THING") == -1, "cvar-unknown-name", "found");
}

/* The environment's values reach the variables, of the advertised datatypes. */
static void check_values(void) {
  MPI_T_cvar_handle handle;
  int count = 0;
  long long spin = 0;
  int i = cvar_index("TORUSMPI_SPIN_COUNT");
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_T_cvar_get_info(i, NULL, NULL, NULL, &type, NULL, NULL, NULL, NULL, NULL);
  check_rc(MPI_T_cvar_handle_alloc(i, NULL, &handle, &count), "cvar_handle_alloc");
  check(count == 1 && type == MPI_COUNT, "spin-count-shape", "count %d", count);
  check_rc(MPI_T_cvar_read(handle, &spin), "cvar_read");
  check(spin == 77, "spin-count-value", "read %lld, the environment says 77", spin);
  check(MPI_T_cvar_write(handle, &spin) == MPI_T_ERR_CVAR_SET_NEVER, "cvar-write-refused",
        "parameters read at MPI_Init are read-only");
  check_rc(MPI_T_cvar_handle_free(&handle), "cvar_handle_free");

  /* Collective selection is read at each call: writable, and checked. */
  char alg[256] = "";
  int scope = -1;
  i = cvar_index("TORUSMPI_ALLREDUCE_ALGORITHM");
  MPI_T_cvar_get_info(i, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &scope);
  check(scope == MPI_T_SCOPE_ALL_EQ, "selection-scope", "scope %d, want MPI_T_SCOPE_ALL_EQ", scope);
  check_rc(MPI_T_cvar_handle_alloc(i, NULL, &handle, &count), "cvar_handle_alloc(algorithm)");
  check(MPI_T_cvar_write(handle, "ring") == MPI_SUCCESS, "selection-write", "ring refused");
  MPI_T_cvar_read(handle, alg);
  check(strcmp(alg, "ring") == 0, "selection-read-back", "read \"%s\"", alg);
  check(MPI_T_cvar_write(handle, "no_such_algorithm") == MPI_T_ERR_INVALID,
        "selection-bad-token-refused", "accepted");
  MPI_T_cvar_read(handle, alg);
  check(strcmp(alg, "ring") == 0, "selection-kept-after-refusal", "read \"%s\"", alg);
  check(MPI_T_cvar_write(handle, "") == MPI_SUCCESS, "selection-cleared", "\"\" refused");
  MPI_T_cvar_handle_free(&handle);
  check(handle == MPI_T_CVAR_HANDLE_NULL, "cvar-handle-nulled", "not MPI_T_CVAR_HANDLE_NULL");

  char debug[256] = "";
  i = cvar_index("TORUSMPI_DEBUG");
  MPI_T_cvar_handle_alloc(i, NULL, &handle, &count);
  check(count >= 1 && count <= (int)sizeof debug, "debug-count", "count %d", count);
  MPI_T_cvar_read(handle, debug);
  check(strcmp(debug, "boot") == 0, "debug-value", "\"%s\", the environment says \"boot\"", debug);
  MPI_T_cvar_handle_free(&handle);
}

static void check_categories_and_pvars(void) {
  int num = -1, cvars = -1, pvars = -1, cats = -1, index = -1;
  char name[64];
  int name_len = sizeof name;
  check_rc(MPI_T_category_get_num(&num), "category_get_num");
  check(num == 1, "category-count", "%d", num);
  check_rc(MPI_T_category_get_info(0, name, &name_len, NULL, NULL, &cvars, &pvars, &cats),
           "category_get_info");
  int all = 0;
  MPI_T_cvar_get_num(&all);
  check(strcmp(name, "torusmpi") == 0 && cvars == all && pvars == 0 && cats == 0,
        "category-content", "\"%s\": %d cvars of %d, %d pvars, %d categories", name, cvars, all,
        pvars, cats);
  check(MPI_T_category_get_index("torusmpi", &index) == MPI_SUCCESS && index == 0, "category-index",
        "%d", index);
  check_rc(MPI_T_pvar_get_num(&num), "pvar_get_num");
  check(num == 0, "pvar-count", "%d performance variables", num);
  MPI_T_pvar_session session;
  check_rc(MPI_T_pvar_session_create(&session), "pvar_session_create");
  MPI_T_pvar_handle handle;
  int count;
  check(MPI_T_pvar_handle_alloc(session, 0, NULL, &handle, &count) == MPI_T_ERR_INVALID_INDEX,
        "pvar-handle-bad-index", "there are no performance variables");
  check_rc(MPI_T_pvar_session_free(&session), "pvar_session_free");
}

int main(int argc, char** argv) {
  int provided = -1;
  check(MPI_T_cvar_get_num(&provided) == MPI_T_ERR_NOT_INITIALIZED, "before-init-refused",
        "MPI_T must be initialized first");
  /* MPI_T may start before MPI, and nest. */
  check_rc(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), "t_init_thread");
  check(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "t-provided", "%d",
        provided);
  check_cvars();
  check_rc(MPI_Init(&argc, &argv), "init");
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  check_rc(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), "t_init_thread-nested");
  check_values();
  check_categories_and_pvars();
  check_rc(MPI_T_finalize(), "t_finalize-nested");
  check_rc(MPI_Finalize(), "finalize");
  check_values(); /* still open once: usable after MPI_Finalize */
  check_rc(MPI_T_finalize(), "t_finalize");
  int num;
  check(MPI_T_cvar_get_num(&num) == MPI_T_ERR_NOT_INITIALIZED, "after-t-finalize-refused",
        "MPI_T is closed");
  check(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED, "t-finalize-unbalanced", "accepted");
  return check_done(-1);
}
