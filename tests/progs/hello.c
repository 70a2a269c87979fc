/* hello: the environment of one MPI job, checked from every rank.
 *
 *   hello <expected size> <torusmpi prefix> [single|funneled|serialized|multiple]
 *
 * With a thread level, starts with MPI_Init_thread at that level, else with MPI_Init. Prints one
 * "ok <rank> <check>" or "FAIL <rank> <check>: why" line per check and a last "done <rank> ..."
 * line; exits 1 if any check failed. The rank is -1 until MPI_Comm_rank has answered. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* Every mapped file called libmpi* must come from the torusmpi prefix: Open MPI's libmpi.so.40
 * must not be loaded at all, and torusmpi's must be. */
static void check_mapped_libmpi(const char* prefix) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) {
    check(0, "maps", "cannot open /proc/self/maps");
    return;
  }
  char line[4096], foreign[4096] = "";
  int ours = 0;
  size_t plen = strlen(prefix);
  while (fgets(line, sizeof line, maps) != NULL) {
    char* path = strchr(line, '/');
    if (path == NULL) continue;
    path[strcspn(path, "\n")] = '\0';
    const char* base = strrchr(path, '/') + 1;
    if (strncmp(base, "libmpi", 6) != 0) continue;
    if (strncmp(path, prefix, plen) == 0 && path[plen] == '/') {
      ours = 1;
    } else if (foreign[0] == '\0') {
      snprintf(foreign, sizeof foreign, "%s", path);
    }
  }
  fclose(maps);
  check(foreign[0] == '\0', "maps-no-foreign-libmpi", "%s is mapped", foreign);
  check(ours, "maps-torusmpi-libmpi", "no libmpi* under %s is mapped", prefix);
}

/* A predefined attribute of MPI_COMM_WORLD: its value, or a failed check and INT_MIN. */
static int world_attr(int keyval, const char* what) {
  int* value = NULL;
  int flag = 0;
  int rc = MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &value, &flag);
  check(rc == MPI_SUCCESS && flag && value != NULL, what, "rc=%d flag=%d", rc, flag);
  return rc == MPI_SUCCESS && flag && value != NULL ? *value : -2147483647 - 1;
}

static void check_type(MPI_Datatype type, const char* name, int size) {
  int got_size = -1, len = 0;
  char got_name[MPI_MAX_OBJECT_NAME] = "";
  MPI_Type_size(type, &got_size);
  MPI_Type_get_name(type, got_name, &len);
  check(got_size == size && strcmp(got_name, name) == 0 && len == (int)strlen(name), name,
        "size %d name \"%s\" (len %d)", got_size, got_name, len);
}

static int thread_level(const char* name) {
  if (strcmp(name, "single") == 0) return MPI_THREAD_SINGLE;
  if (strcmp(name, "funneled") == 0) return MPI_THREAD_FUNNELED;
  if (strcmp(name, "serialized") == 0) return MPI_THREAD_SERIALIZED;
  if (strcmp(name, "multiple") == 0) return MPI_THREAD_MULTIPLE;
  fprintf(stderr, "hello: unknown thread level %s\n", name);
  exit(2);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s <expected size> <torusmpi prefix> [thread level]\n", argv[0]);
    return 2;
  }
  int expected_size = atoi(argv[1]);
  const char* prefix = argv[2];
  int required = argc > 3 ? thread_level(argv[3]) : -1;
  /* Ranks print concurrently through mpirun: whole lines keep them readable. */
  setvbuf(stdout, NULL, _IOLBF, 0);

  int flag = -1;
  MPI_Initialized(&flag);
  check(flag == 0, "initialized-before", "flag %d", flag);
  MPI_Finalized(&flag);
  check(flag == 0, "finalized-before", "flag %d", flag);

  int provided = -1;
  if (required >= 0) {
    check_rc(MPI_Init_thread(&argc, &argv, required, &provided), "init_thread");
    /* torusmpi provides every level: exactly what was asked. */
    check(provided == required, "init_thread-provided", "required %d, provided %d", required,
          provided);
  } else {
    check_rc(MPI_Init(&argc, &argv), "init");
  }

  int rank = -1, size = -1;
  check_rc(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "comm_rank");
  check_rc(MPI_Comm_size(MPI_COMM_WORLD, &size), "comm_size");
  g_rank = rank;
  check(rank >= 0 && rank < size, "rank-in-range", "rank %d size %d", rank, size);
  check(size == expected_size, "size-expected", "size %d, expected %d", size, expected_size);
  const char* env_rank = getenv("OMPI_COMM_WORLD_RANK");
  const char* env_size = getenv("OMPI_COMM_WORLD_SIZE");
  if (env_rank != NULL)
    check(atoi(env_rank) == rank, "rank-env", "rank %d, env %s", rank, env_rank);
  if (env_size != NULL)
    check(atoi(env_size) == size, "size-env", "size %d, env %s", size, env_size);
  int self_rank = -1, self_size = -1;
  MPI_Comm_rank(MPI_COMM_SELF, &self_rank);
  MPI_Comm_size(MPI_COMM_SELF, &self_size);
  check(self_rank == 0 && self_size == 1, "comm_self", "rank %d size %d", self_rank, self_size);

  MPI_Initialized(&flag);
  check(flag == 1, "initialized-during", "flag %d", flag);
  MPI_Finalized(&flag);
  check(flag == 0, "finalized-during", "flag %d", flag);

  check_mapped_libmpi(prefix);

  char text[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = -1;
  check_rc(MPI_Get_library_version(text, &len), "get_library_version");
  check(strncmp(text, "torusmpi", 8) == 0 && len == (int)strlen(text), "library-is-torusmpi",
        "\"%s\" (len %d)", text, len);
  /* The transports it names are this build's: shared memory and self at least. */
  check(strstr(text, "data transports: shm,self") != NULL, "library-version-transports", "\"%s\"",
        text);
  int version = -1, subversion = -1;
  MPI_Get_version(&version, &subversion);
  check(version == 3 && subversion == 1, "get_version", "%d.%d", version, subversion);

  char name[MPI_MAX_PROCESSOR_NAME] = "";
  len = -1;
  check_rc(MPI_Get_processor_name(name, &len), "get_processor_name");
  check(len > 0 && len == (int)strlen(name) && len < MPI_MAX_PROCESSOR_NAME, "processor-name",
        "\"%s\" (len %d)", name, len);

  int level = -1;
  check_rc(MPI_Query_thread(&level), "query_thread");
  check(required < 0 ? level == MPI_THREAD_SINGLE : level == provided, "query_thread-level",
        "level %d, provided %d", level, provided);
  flag = -1;
  MPI_Is_thread_main(&flag);
  check(flag == 1, "is_thread_main", "flag %d", flag);

  double t0 = MPI_Wtime();
  struct timespec pause = {0, 2000000};
  nanosleep(&pause, NULL);
  double t1 = MPI_Wtime();
  check(t1 - t0 >= 0.0015 && t1 - t0 < 10.0, "wtime", "%.9f then %.9f", t0, t1);
  double tick = MPI_Wtick();
  check(tick > 0.0 && tick < 1.0, "wtick", "%g", tick);

  int tag_ub = world_attr(MPI_TAG_UB, "attr-tag_ub");
  check(tag_ub >= 32767, "tag_ub-value", "%d", tag_ub);
  int host = world_attr(MPI_HOST, "attr-host");
  check(host == MPI_PROC_NULL || (host >= 0 && host < size), "host-value", "%d", host);
  int io = world_attr(MPI_IO, "attr-io");
  check(io == MPI_PROC_NULL || io == MPI_ANY_SOURCE || (io >= 0 && io < size), "io-value", "%d",
        io);
  int global = world_attr(MPI_WTIME_IS_GLOBAL, "attr-wtime_is_global");
  check(global == 0 || global == 1, "wtime_is_global-value", "%d", global);
  int universe = world_attr(MPI_UNIVERSE_SIZE, "attr-universe_size");
  check(universe >= size, "universe_size-value", "%d < size %d", universe, size);

  void* mem = NULL;
  check_rc(MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &mem), "alloc_mem");
  if (mem != NULL) {
    memset(mem, 0xa5, 1 << 20);
    check_rc(MPI_Free_mem(mem), "free_mem");
  }

  check_type(MPI_INT, "MPI_INT", 4);
  check_type(MPI_DOUBLE, "MPI_DOUBLE", 8);
  check_type(MPI_CHAR, "MPI_CHAR", 1);
  check_type(MPI_BYTE, "MPI_BYTE", 1);
  check_type(MPI_FLOAT_INT, "MPI_FLOAT_INT", 8);

  char comm_name[MPI_MAX_OBJECT_NAME] = "";
  MPI_Comm_get_name(MPI_COMM_WORLD, comm_name, &len);
  check(strcmp(comm_name, "MPI_COMM_WORLD") == 0, "comm_world-name", "\"%s\"", comm_name);
  MPI_Comm_get_name(MPI_COMM_SELF, comm_name, &len);
  check(strcmp(comm_name, "MPI_COMM_SELF") == 0, "comm_self-name", "\"%s\"", comm_name);

  check_rc(MPI_Finalize(), "finalize");
  MPI_Initialized(&flag);
  check(flag == 1, "initialized-after", "flag %d", flag);
  MPI_Finalized(&flag);
  check(flag == 1, "finalized-after", "flag %d", flag);

  return check_done(size);
}
