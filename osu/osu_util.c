/* osu_util: options, buffers, data patterns, output, point-to-point helpers and the collective
 * driver of torusmpi's OSU-compatible benchmarks. See osu_util.h. */
#define _GNU_SOURCE /* posix_memalign, sysconf, dlsym's RTLD_DEFAULT */

#include "osu_util.h"

#include <dlfcn.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tags of the helpers' messages, apart from any a benchmark uses for its data. */
enum { kSyncTag = 32001, kGatherTag = 32002 };

/* Pattern values are 0..kPatternMod-1: they fit a signed char and are exact in a float. */
enum { kPatternMod = 101 };

/* Options that only a benchmark with a message size takes (-m, -T, -c); not an OSU_OPT_*. */
enum { kOptData = 0x100 };
/* -a: only collectives with a size have an algorithm to show. */
enum { kOptAlgorithm = 0x200 };
/* -c: every benchmark with a size, fixed (fetch_and_op) or not. */
enum { kOptCheck = 0x400 };

static const char* const kWinNames[] = {"create", "allocate", "dynamic"};
static const char* const kSyncNames[] = {"pscw",  "fence",       "lock",
                                         "flush", "flush_local", "lock_all"};

static const struct {
  const char* option; /* -T argument */
  const char* name;
  MPI_Datatype type;
  int size;
} kTypes[] = {
    {"mpi_char", "MPI_CHAR", MPI_CHAR, (int)sizeof(char)},
    {"mpi_int", "MPI_INT", MPI_INT, (int)sizeof(int)},
    {"mpi_float", "MPI_FLOAT", MPI_FLOAT, (int)sizeof(float)},
};

static void usage(const struct osu_bench* b, FILE* out) {
  fprintf(out, "Usage: %s [options]\n", b->name);
  if (b->sizeless || b->fixed_size) {
    fprintf(out, "  -i, --iterations N            measured iterations (default %d)\n", b->iters);
    fprintf(out, "  -x, --warmup N                warmup iterations (default %d)\n", b->warmup);
  } else {
    fprintf(out,
            "  -m, --message-size [MIN:]MAX  message sizes in bytes, powers of two from MIN to"
            " MAX\n"
            "                                (default %zu:%zu)\n",
            b->min_size, b->max_size);
    fprintf(out,
            "  -i, --iterations N            measured iterations per size (default %d, %d above"
            " %zu bytes)\n",
            b->iters, b->iters_large, b->large_size);
    fprintf(out,
            "  -x, --warmup N                warmup iterations per size (default %d, %d above %zu"
            " bytes)\n",
            b->warmup, b->warmup_large, b->large_size);
  }
  if (b->extra_opts & OSU_OPT_RMA) {
    fprintf(out, "  -w, --win-option WIN          create, allocate (default) or dynamic\n");
    fprintf(out, "  -s, --sync-option SYNC        ");
    for (int k = 0, first = 1; k < 6; k++)
      if (b->syncs & OSU_SYNC_BIT(k)) {
        fprintf(out, "%s%s", first ? "" : ", ", kSyncNames[k]);
        first = 0;
      }
    fprintf(out, " (default %s)\n", kSyncNames[b->sync]);
  }
  if (b->extra_opts & OSU_OPT_WINDOW)
    fprintf(out, "  -W, --window-size N           messages in flight per iteration (default %d)\n",
            b->window);
  if (b->extra_opts & OSU_OPT_THREADS)
    fprintf(out, "  -t, --num-threads N           threads per rank, at most 64 (default 2)\n");
  if (b->extra_opts & OSU_OPT_SLEEP)
    fprintf(out,
            "  -S, --sleep-compute           the compute phase leaves the core to other threads "
            "(device work) instead of spinning\n");
  if (!b->sizeless && !b->fixed_size)
    fprintf(
        out,
        "  -T, --type TYPE               mpi_char (default), mpi_int or mpi_float; sizes stay in\n"
        "                                bytes (count = size / sizeof type)\n");
  if (!b->sizeless)
    fprintf(out,
            "  -c, --validation              check the received data: adds a Validation column,\n"
            "                                exit status 1 on a failure\n");
  fprintf(
      out, "  -d, --accelerator neuron      data buffers in torusmpi's emulated device memory%s\n",
      (b->extra_opts & OSU_OPT_BUFFERS)
          ? ";\n                                then H|D H|D after the options place even and odd\n"
            "                                ranks' buffers (default D D)"
          : "");
  if (b->bus != OSU_BUS_NONE)
    fprintf(out, "  -a, --show-algorithm          add the algorithm torusmpi ran for each size\n");
  if (b->full_usage)
    fprintf(out, "  -f, --full                    %s\n", b->full_usage);
  else
    fprintf(out, "  -f, --full                    add min and max (%s) and iterations columns\n",
            b->full_what);
  fprintf(out, "  -h, --help                    print this and exit\n");
}

/* A decimal number without sign, at most max. */
static int parse_number(const char* s, unsigned long max, unsigned long* out) {
  char* end;
  if (*s < '0' || *s > '9') return 0;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno != 0 || *end != '\0' || v > max) return 0;
  *out = v;
  return 1;
}

/* -m: "MAX", "MIN:MAX" or "MIN:". */
static int parse_sizes(const char* s, struct osu_options* o) {
  unsigned long lo = o->min_size, hi = o->max_size;
  const char* colon = strchr(s, ':');
  if (colon == NULL) {
    if (!parse_number(s, INT_MAX, &hi)) return 0;
  } else {
    char min_text[32];
    size_t len = (size_t)(colon - s);
    if (len == 0 || len >= sizeof min_text) return 0;
    memcpy(min_text, s, len);
    min_text[len] = '\0';
    if (!parse_number(min_text, INT_MAX, &lo)) return 0;
    if (colon[1] != '\0' && !parse_number(colon + 1, INT_MAX, &hi)) return 0;
  }
  if (lo > hi) return 0;
  o->min_size = lo;
  o->max_size = hi;
  return 1;
}

static int parse_int(const char* s, int min, int* out) {
  unsigned long v;
  if (!parse_number(s, INT_MAX, &v) || (long)v < min) return 0;
  *out = (int)v;
  return 1;
}

static int parse_type(const char* s, struct osu_options* o) {
  for (size_t i = 0; i < sizeof kTypes / sizeof kTypes[0]; i++) {
    if (strcmp(s, kTypes[i].option) == 0) {
      o->type = kTypes[i].type;
      o->type_name = kTypes[i].name;
      o->type_size = kTypes[i].size;
      return 1;
    }
  }
  return 0;
}

/* Returns -1 to run, 0 after -h, 1 after a bad option; only rank 0 prints. */
static int parse_options(const struct osu_bench* b, int argc, char** argv, struct osu_options* o) {
  static const struct {
    char letter;
    const char* long_name;
    int takes_arg;
    unsigned needs; /* OSU_OPT_* the benchmark must take, 0 for the common ones */
  } kOptions[] = {
      {'m', "message-size", 1, kOptData},
      {'i', "iterations", 1, 0},
      {'x', "warmup", 1, 0},
      {'W', "window-size", 1, OSU_OPT_WINDOW},
      {'T', "type", 1, kOptData},
      {'c', "validation", 0, kOptCheck},
      {'f', "full", 0, 0},
      {'d', "accelerator", 1, 0},
      {'a', "show-algorithm", 0, kOptAlgorithm},
      {'t', "num-threads", 1, OSU_OPT_THREADS},
      {'S', "sleep-compute", 0, OSU_OPT_SLEEP},
      {'w', "win-option", 1, OSU_OPT_RMA},
      {'s', "sync-option", 1, OSU_OPT_RMA},
      {'h', "help", 0, 0},
  };
  int places = 0; /* positional H|D given */
  FILE* err = o->rank == 0 ? stderr : NULL;
  const unsigned takes = b->extra_opts | (b->sizeless || b->fixed_size ? 0u : (unsigned)kOptData) |
                         (b->sizeless ? 0u : (unsigned)kOptCheck) |
                         (b->bus != OSU_BUS_NONE ? (unsigned)kOptAlgorithm : 0u);

  for (int a = 1; a < argc; a++) {
    const char* arg = argv[a];
    const char* value = NULL; /* "-m8" or "--message-size=8" */
    int found = -1;
    if (arg[0] == '-' && arg[1] == '-') {
      const char* eq = strchr(arg + 2, '=');
      size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
      for (size_t k = 0; k < sizeof kOptions / sizeof kOptions[0]; k++)
        if (strlen(kOptions[k].long_name) == len &&
            strncmp(arg + 2, kOptions[k].long_name, len) == 0)
          found = (int)k;
      if (eq != NULL) value = eq + 1;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      for (size_t k = 0; k < sizeof kOptions / sizeof kOptions[0]; k++)
        if (kOptions[k].letter == arg[1]) found = (int)k;
      if (arg[2] != '\0') value = arg + 2;
    } else if ((b->extra_opts & OSU_OPT_BUFFERS) && o->device && places < 2 &&
               (strcmp(arg, "H") == 0 || strcmp(arg, "D") == 0)) {
      o->where[places++] = arg[0];
      continue;
    }
    if (found < 0 || (kOptions[found].needs & ~takes) != 0) {
      if (err) fprintf(err, "%s: unknown option '%s'\n", b->name, arg);
      goto bad;
    }
    if (!kOptions[found].takes_arg && value != NULL) {
      if (err) fprintf(err, "%s: option '%s' takes no value\n", b->name, arg);
      goto bad;
    }
    if (kOptions[found].takes_arg && value == NULL) {
      if (a + 1 >= argc) {
        if (err) fprintf(err, "%s: option '%s' needs a value\n", b->name, arg);
        goto bad;
      }
      value = argv[++a];
    }
    int ok = 1;
    switch (kOptions[found].letter) {
      case 'm':
        ok = parse_sizes(value, o);
        break;
      case 'i':
        ok = parse_int(value, 1, &o->iters);
        break;
      case 'x':
        ok = parse_int(value, 0, &o->warmup);
        break;
      case 'W':
        ok = parse_int(value, 1, &o->window);
        break;
      case 'T':
        ok = parse_type(value, o);
        break;
      case 'c':
        o->validate = 1;
        break;
      case 'f':
        o->full = 1;
        break;
      case 'd':
        ok = strcmp(value, "neuron") == 0;
        o->device = ok;
        break;
      case 'a':
        o->show_algorithm = 1;
        break;
      case 't':
        ok = parse_int(value, 1, &o->threads) && o->threads <= 64;
        break;
      case 'S':
        o->sleep_compute = 1;
        break;
      case 'w':
        ok = 0;
        for (int k = 0; k < 3; k++)
          if (strcmp(value, kWinNames[k]) == 0) o->win = (enum osu_win)k, ok = 1;
        break;
      case 's':
        ok = 0;
        for (int k = 0; k < 6; k++)
          if (strcmp(value, kSyncNames[k]) == 0 && (b->syncs & OSU_SYNC_BIT(k)))
            o->sync = (enum osu_sync)k, ok = 1;
        break;
      case 'h':
        if (o->rank == 0) usage(b, stdout);
        return 0;
    }
    if (!ok) {
      if (err) fprintf(err, "%s: bad value '%s' for option '%s'\n", b->name, value, arg);
      goto bad;
    }
  }
  if (places == 1) {
    if (err)
      fprintf(err, "%s: give the places of both sides' buffers (H|D H|D), or none\n", b->name);
    goto bad;
  }
  return -1;
bad:
  if (err) usage(b, err);
  return 1;
}

/* torusmpi's extension calls (torusmpi.h), looked up at run time so that the benchmarks build
 * with any mpicc and run on any MPI without -d and -a. */
static struct {
  int (*device_malloc)(void** ptr, size_t bytes);
  int (*device_free)(void* ptr);
  int (*memcpy)(void* dst, const void* src, size_t bytes);
  int (*memset)(void* dst, int value, size_t bytes);
  int (*pointer_kind)(const void* ptr, int* kind, int* chip);
  int (*coll_algorithm)(MPI_Comm comm, char* token, int len);
} g_ext;
enum { kMemoryDevice = 1 }; /* TORUSMPI_MEMORY_DEVICE */

static int find_torusmpi(const struct osu_bench* b, const struct osu_options* o) {
  *(void**)&g_ext.device_malloc = dlsym(RTLD_DEFAULT, "torusmpi_device_malloc");
  *(void**)&g_ext.device_free = dlsym(RTLD_DEFAULT, "torusmpi_device_free");
  *(void**)&g_ext.memcpy = dlsym(RTLD_DEFAULT, "torusmpi_memcpy");
  *(void**)&g_ext.memset = dlsym(RTLD_DEFAULT, "torusmpi_memset");
  *(void**)&g_ext.pointer_kind = dlsym(RTLD_DEFAULT, "torusmpi_pointer_kind");
  *(void**)&g_ext.coll_algorithm = dlsym(RTLD_DEFAULT, "torusmpi_coll_algorithm");
  int have_device = g_ext.device_malloc && g_ext.device_free && g_ext.memcpy && g_ext.memset &&
                    g_ext.pointer_kind;
  if ((o->device && !have_device) || (o->show_algorithm && !g_ext.coll_algorithm)) {
    if (o->rank == 0)
      fprintf(stderr, "%s: %s needs torusmpi (this MPI library has no %s)\n", b->name,
              o->device ? "-d neuron" : "-a", o->device ? "device memory" : "algorithm query");
    return 0;
  }
  return 1;
}

int osu_start(const struct osu_bench* b, int* argc, char*** argv, struct osu_options* o) {
  int provided = MPI_THREAD_SINGLE;
  if (b->extra_opts & OSU_OPT_THREADS) {
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(argc, argv);
  }
  memset(o, 0, sizeof *o);
  o->threads = (b->extra_opts & OSU_OPT_THREADS) ? 2 : 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &o->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &o->nranks);
  o->min_size = b->min_size;
  o->max_size = b->max_size;
  o->iters = -1;
  o->warmup = -1;
  o->window = b->window;
  parse_type(kTypes[0].option, o);

  o->win = OSU_WIN_ALLOCATE;
  o->sync = b->sync;
  if (b->fixed_size) {
    o->min_size = o->max_size = b->fixed_size;
    o->type = MPI_LONG_LONG;
    o->type_name = "MPI_LONG_LONG";
    o->type_size = (int)sizeof(long long);
  }

  o->where[0] = o->where[1] = 'D';
  int rc = parse_options(b, *argc, *argv, o);
  if (rc < 0 && (b->extra_opts & OSU_OPT_RMA) && o->nranks != 2) {
    if (o->rank == 0) fprintf(stderr, "%s: needs exactly 2 ranks (got %d)\n", b->name, o->nranks);
    rc = 1;
  }
  if (rc < 0 && (b->extra_opts & OSU_OPT_THREADS) && provided != MPI_THREAD_MULTIPLE) {
    if (o->rank == 0)
      fprintf(stderr, "%s: this MPI library provides thread level %d, not MPI_THREAD_MULTIPLE\n",
              b->name, provided);
    rc = 1;
  }
  if (rc < 0 && (o->device || o->show_algorithm) && !find_torusmpi(b, o)) rc = 1;
  if (rc < 0 && (o->nranks < b->min_ranks || (b->even_ranks && o->nranks % 2 != 0))) {
    if (o->rank == 0 && b->even_ranks)
      fprintf(stderr, "%s: needs an even number of ranks, at least %d (got %d)\n", b->name,
              b->min_ranks, o->nranks);
    else if (o->rank == 0)
      fprintf(stderr, "%s: needs at least %d ranks (got %d)\n", b->name, b->min_ranks, o->nranks);
    rc = 1;
  }
  if (rc >= 0) MPI_Finalize();
  return rc;
}

int osu_finish(long errors) {
  MPI_Finalize();
  return errors != 0;
}

size_t osu_next_size(size_t size) { return size == 0 ? 1 : size * 2; }

int osu_count(const struct osu_options* o, size_t size) {
  return size % (size_t)o->type_size == 0 ? (int)(size / (size_t)o->type_size) : -1;
}

int osu_iters(const struct osu_bench* b, const struct osu_options* o, size_t size) {
  return o->iters >= 0 ? o->iters : size > b->large_size ? b->iters_large : b->iters;
}

int osu_warmup(const struct osu_bench* b, const struct osu_options* o, size_t size) {
  return o->warmup >= 0 ? o->warmup : size > b->large_size ? b->warmup_large : b->warmup;
}

void* osu_alloc(size_t bytes) {
  long page = sysconf(_SC_PAGESIZE);
  void* p = NULL;
  if (page <= 0) page = 4096;
  if (bytes == 0) bytes = 1;
  if (posix_memalign(&p, (size_t)page, bytes) != 0) {
    fprintf(stderr, "osu: cannot allocate %zu bytes\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
  }
  memset(p, 0, bytes); /* map the pages before anything is timed */
  return p;
}

static int on_device(const struct osu_options* o) {
  return o->device && o->where[o->rank % 2] == 'D';
}

void* osu_alloc_buf(const struct osu_options* o, size_t bytes) {
  if (!on_device(o)) return osu_alloc(bytes);
  void* p = NULL;
  if (bytes == 0) bytes = 1;
  if (g_ext.device_malloc(&p, bytes) != MPI_SUCCESS) {
    fprintf(stderr, "osu: cannot allocate %zu bytes of device memory\n", bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
  }
  g_ext.memset(p, 0, bytes);
  return p;
}

void osu_free_buf(const struct osu_options* o, void* buf) {
  if (on_device(o))
    g_ext.device_free(buf);
  else
    free(buf);
}

/* Device data is written and read through a host copy (untimed), one per thread (osu_latency_mt's
 * threads fill and check at once). */
static _Thread_local void* g_stage;
static _Thread_local size_t g_stage_bytes;

void osu_release_stage(void) {
  free(g_stage);
  g_stage = NULL;
  g_stage_bytes = 0;
}

static int is_device(const struct osu_options* o, const void* buf) {
  int kind = 0;
  return o->device && g_ext.pointer_kind(buf, &kind, NULL) == MPI_SUCCESS && kind == kMemoryDevice;
}

/* Where to write or read `bytes` of buf from host code: buf itself, or the host copy (holding
 * buf's bytes when `load`). */
static void* stage(const struct osu_options* o, const void* buf, size_t bytes, int load) {
  if (!is_device(o, buf)) return (void*)buf;
  if (g_stage_bytes < bytes) {
    free(g_stage);
    g_stage = osu_alloc(bytes);
    g_stage_bytes = bytes;
  }
  if (load) g_ext.memcpy(g_stage, buf, bytes);
  return g_stage;
}

static void unstage(void* buf, const void* host, size_t bytes) {
  if (host != buf) g_ext.memcpy(buf, host, bytes);
}

/* Consecutive iterations (13) and neighbouring ranks (29) get seeds that differ modulo
 * kPatternMod, so data left from the previous iteration or sent by the wrong rank fails. */
unsigned osu_seed(size_t size, int iteration, int rank) {
  return (unsigned)(size % kPatternMod) * 7u + (unsigned)(iteration % kPatternMod) * 13u +
         (unsigned)(rank % kPatternMod) * 29u;
}

unsigned osu_seed_to(size_t size, int iteration, int from, int to) {
  return osu_seed(size, iteration, from) + (unsigned)(to % kPatternMod) * 37u;
}

static int pattern(unsigned seed, int i) { return (int)((seed + (unsigned)i) % kPatternMod); }

static void fill_host(void* buf, int count, const struct osu_options* o, unsigned seed) {
  if (o->type == MPI_INT) {
    for (int i = 0; i < count; i++) ((int*)buf)[i] = pattern(seed, i);
  } else if (o->type == MPI_FLOAT) {
    for (int i = 0; i < count; i++) ((float*)buf)[i] = (float)pattern(seed, i);
  } else {
    for (int i = 0; i < count; i++) ((char*)buf)[i] = (char)pattern(seed, i);
  }
}

static long check_host(const void* buf, int count, const struct osu_options* o, unsigned seed) {
  long bad = 0;
  if (o->type == MPI_INT) {
    for (int i = 0; i < count; i++) bad += ((const int*)buf)[i] != pattern(seed, i);
  } else if (o->type == MPI_FLOAT) {
    for (int i = 0; i < count; i++) bad += ((const float*)buf)[i] != (float)pattern(seed, i);
  } else {
    for (int i = 0; i < count; i++) bad += ((const char*)buf)[i] != (char)pattern(seed, i);
  }
  return bad;
}

static size_t bytes_of(const struct osu_options* o, int count) {
  return (size_t)count * (size_t)o->type_size;
}

void osu_fill(void* buf, int count, const struct osu_options* o, unsigned seed) {
  void* h = stage(o, buf, bytes_of(o, count), 0);
  fill_host(h, count, o, seed);
  unstage(buf, h, bytes_of(o, count));
}

long osu_check(const void* buf, int count, const struct osu_options* o, unsigned seed) {
  return check_host(stage(o, buf, bytes_of(o, count), 1), count, o, seed);
}

void* osu_elem(void* buf, const struct osu_options* o, size_t k) {
  return (char*)buf + k * (size_t)o->type_size;
}

/* One period (kPatternMod elements) of values as a -T type, then the buffer from element phase of
 * the period on. */
static void store_periodic(void* buf, int count, const struct osu_options* o, const int* period,
                           int phase) {
  int k = phase;
  if (o->type == MPI_INT) {
    for (int i = 0; i < count; i++, k = k + 1 == kPatternMod ? 0 : k + 1)
      ((int*)buf)[i] = period[k];
  } else if (o->type == MPI_FLOAT) {
    for (int i = 0; i < count; i++, k = k + 1 == kPatternMod ? 0 : k + 1)
      ((float*)buf)[i] = (float)period[k];
  } else {
    for (int i = 0; i < count; i++, k = k + 1 == kPatternMod ? 0 : k + 1)
      ((char*)buf)[i] = (char)period[k];
  }
}

static long count_periodic(const void* buf, int count, const struct osu_options* o,
                           const int* period, int phase) {
  long bad = 0;
  int k = phase;
  if (o->type == MPI_INT) {
    for (int i = 0; i < count; i++, k = k + 1 == kPatternMod ? 0 : k + 1)
      bad += ((const int*)buf)[i] != period[k];
  } else if (o->type == MPI_FLOAT) {
    for (int i = 0; i < count; i++, k = k + 1 == kPatternMod ? 0 : k + 1)
      bad += ((const float*)buf)[i] != (float)period[k];
  } else {
    for (int i = 0; i < count; i++, k = k + 1 == kPatternMod ? 0 : k + 1)
      bad += ((const char*)buf)[i] != (char)period[k];
  }
  return bad;
}

/* The largest element of a rank's MPI_SUM vector: p of them must sum to at most SCHAR_MAX in a
 * char (Open MPI 4.1 saturates MPI_CHAR sums, MPICH wraps them; neither may happen). */
static int sum_max(const struct osu_options* o) {
  int m = kPatternMod - 1;
  if (o->type == MPI_CHAR && SCHAR_MAX / o->nranks < m) m = SCHAR_MAX / o->nranks;
  return m;
}

/* Rank r's element i is pattern(seed_r, i) % (sum_max + 1): periodic in i with period kPatternMod,
 * so the sum over ranks is too and one period of it is the whole expected vector. */
void osu_fill_sum(void* buf, int count, const struct osu_options* o, size_t size, int iteration,
                  int rank) {
  int period[kPatternMod];
  const unsigned seed = osu_seed(size, iteration, rank);
  const int mod = sum_max(o) + 1;
  for (int k = 0; k < kPatternMod; k++) period[k] = pattern(seed, k) % mod;
  void* h = stage(o, buf, bytes_of(o, count), 0);
  store_periodic(h, count, o, period, 0);
  unstage(buf, h, bytes_of(o, count));
}

long osu_check_sum(const void* buf, size_t first, int count, const struct osu_options* o,
                   size_t size, int iteration) {
  int period[kPatternMod] = {0};
  const int mod = sum_max(o) + 1;
  for (int r = 0; r < o->nranks; r++) {
    const unsigned seed = osu_seed(size, iteration, r);
    for (int k = 0; k < kPatternMod; k++) period[k] += pattern(seed, k) % mod;
  }
  return count_periodic(stage(o, buf, bytes_of(o, count), 1), count, o, period,
                        (int)(first % kPatternMod));
}

/* All ones: -1 as a char or an int, a NaN as a float; never a pattern value nor a sum of them.
 * Only the data helpers see device buffers, and they take an osu_options: poison finds the kind
 * through the extension alone. */
void osu_poison(void* buf, size_t bytes) {
  int kind = 0;
  if (g_ext.pointer_kind != NULL && g_ext.pointer_kind(buf, &kind, NULL) == MPI_SUCCESS &&
      kind == kMemoryDevice)
    g_ext.memset(buf, 0xff, bytes);
  else
    memset(buf, 0xff, bytes);
}

enum { kSizeWidth = 10, kFieldWidth = 18 };

void osu_print_header(const struct osu_bench* b, const struct osu_options* o) {
  if (o->rank != 0) return;
  int bw = b->metric == OSU_BANDWIDTH;
  const char* column = b->column ? b->column : bw ? "Bandwidth (MB/s)" : "Latency (us)";
  printf("# torusmpi OSU-compatible MPI %s\n", b->title);
  if (b->extra_opts & OSU_OPT_RMA) {
    static const char* const kWinCalls[] = {"MPI_Win_create", "MPI_Win_allocate",
                                            "MPI_Win_create_dynamic"};
    static const char* const kSyncCalls[] = {
        "Post/Start/Complete/Wait", "MPI_Win_fence",
        "MPI_Win_lock/unlock",      "MPI_Win_flush",
        "MPI_Win_flush_local",      "MPI_Win_lock_all/unlock_all"};
    printf("# Window creation: %s\n", kWinCalls[o->win]);
    printf("# Synchronization: %s\n", kSyncCalls[o->sync]);
  }
  printf("# Datatype: %s.\n", o->type_name);
  printf("%-*s%*s", kSizeWidth, "# Size", kFieldWidth, column);
  if (o->full)
    printf("%*s%*s%*s", kFieldWidth, bw ? "Min BW (MB/s)" : "Min Latency(us)", kFieldWidth,
           bw ? "Max BW (MB/s)" : "Max Latency(us)", kFieldWidth, "Iterations");
  if (o->validate) printf("%*s", kFieldWidth, "Validation");
  printf("\n");
  fflush(stdout);
}

void osu_print_row(const struct osu_options* o, size_t size, double value, double min, double max,
                   int iters, long errors) {
  if (o->rank != 0) return;
  printf("%-*zu%*.2f", kSizeWidth, size, kFieldWidth, value);
  if (o->full) printf("%*.2f%*.2f%*d", kFieldWidth, min, kFieldWidth, max, kFieldWidth, iters);
  if (o->validate) printf("%*s", kFieldWidth, errors == 0 ? "Pass" : "Fail");
  printf("\n");
  fflush(stdout);
}

void osu_sync(int n, MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank >= n) return;
  /* Round d: tell rank + d, hear from rank - d; after ceil(log2 n) rounds all have heard of all. */
  for (int d = 1; d < n; d *= 2)
    MPI_Sendrecv(NULL, 0, MPI_CHAR, (rank + d) % n, kSyncTag, NULL, 0, MPI_CHAR, (rank - d + n) % n,
                 kSyncTag, comm, MPI_STATUS_IGNORE);
}

void osu_gather(const double* mine, int k, double* all, int n, MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank >= n) return;
  if (rank != 0) {
    MPI_Send(mine, k, MPI_DOUBLE, 0, kGatherTag, comm);
    return;
  }
  memcpy(all, mine, (size_t)k * sizeof *all);
  for (int r = 1; r < n; r++)
    MPI_Recv(all + (size_t)r * k, k, MPI_DOUBLE, r, kGatherTag, comm, MPI_STATUS_IGNORE);
}

long osu_sum_errors(long errors, int n, MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) {
    double mine = (double)errors;
    osu_gather(&mine, 1, NULL, n, comm);
    return errors;
  }
  double* all = osu_alloc((size_t)n * sizeof *all);
  double mine = (double)errors;
  osu_gather(&mine, 1, all, n, comm);
  long sum = 0;
  for (int r = 0; r < n; r++) sum += (long)all[r];
  free(all);
  return sum;
}

/* --- Collective benchmarks ---------------------------------------------------------------------
 */

enum { kIterWidth = 12 }; /* OSU prints its collectives' Iterations column 12 wide */

double osu_bus_factor(enum osu_bus bus, int p) {
  switch (bus) {
    case OSU_BUS_ONE:
      return 1.0;
    case OSU_BUS_TWO_N1_N:
      return 2.0 * (p - 1) / p;
    case OSU_BUS_N1_N:
      return (double)(p - 1) / p;
    case OSU_BUS_NONE:
      break;
  }
  return 0.0;
}

void osu_over_ranks(double mine, const struct osu_options* o, double* avg, double* min,
                    double* max) {
  *avg = *min = *max = mine;
  if (o->rank != 0) {
    osu_gather(&mine, 1, NULL, o->nranks, MPI_COMM_WORLD);
    return;
  }
  double* all = osu_alloc((size_t)o->nranks * sizeof *all);
  osu_gather(&mine, 1, all, o->nranks, MPI_COMM_WORLD);
  double sum = 0;
  for (int r = 0; r < o->nranks; r++) {
    sum += all[r];
    if (all[r] < *min) *min = all[r];
    if (all[r] > *max) *max = all[r];
  }
  *avg = sum / o->nranks;
  free(all);
}

static void print_title(const struct osu_bench* b) {
  printf("# torusmpi OSU-compatible MPI %s\n", b->title);
}

enum { kAlgorithmWidth = 32 };

static void print_bw_heading(const struct osu_bench* b, const struct osu_options* o) {
  if (b->bus != OSU_BUS_NONE)
    printf("%*s%*s", kFieldWidth, "algbw(GB/s)", kFieldWidth, "busbw(GB/s)");
  if (o->show_algorithm) printf("  %-*s", kAlgorithmWidth, "Algorithm");
}

/* Validation (-c) and the bandwidth columns, then the end of the row. */
static void print_row_end(const struct osu_bench* b, const struct osu_options* o, long errors,
                          double bytes, double us) {
  if (o->validate) printf("%*s", kFieldWidth, errors == 0 ? "Pass" : "Fail");
  if (b->bus != OSU_BUS_NONE) {
    const double algbw = us > 0 ? bytes / (us * 1e3) : 0.0; /* bytes / (us * 1e-6) / 1e9 */
    printf("%*.2f%*.2f", kFieldWidth, algbw, kFieldWidth,
           algbw * osu_bus_factor(b->bus, o->nranks));
  }
  if (o->show_algorithm) {
    /* The size's last collective on MPI_COMM_WORLD was the benchmark's own: the statistics
     * travel by point-to-point messages. */
    char token[128] = "";
    g_ext.coll_algorithm(MPI_COMM_WORLD, token, (int)sizeof token);
    printf("  %-*s", kAlgorithmWidth, token);
  }
  printf("\n");
  fflush(stdout);
}

void osu_print_coll_header(const struct osu_bench* b, const struct osu_options* o) {
  if (o->rank != 0) return;
  print_title(b);
  if (b->sizeless) {
    printf("# Avg Latency(us)");
  } else {
    printf("# Datatype: %s.\n", o->type_name);
    printf("%-*s%*s", kSizeWidth, "# Size", kFieldWidth, "Avg Latency(us)");
  }
  if (o->full)
    printf("%*s%*s%*s", kFieldWidth, "Min Latency(us)", kFieldWidth, "Max Latency(us)", kIterWidth,
           "Iterations");
  if (o->validate) printf("%*s", kFieldWidth, "Validation");
  print_bw_heading(b, o);
  printf("\n");
  fflush(stdout);
}

void osu_print_coll_row(const struct osu_bench* b, const struct osu_options* o, size_t size,
                        double avg_us, double min_us, double max_us, int iters, long errors,
                        double bytes) {
  if (o->rank != 0) return;
  if (b->sizeless)
    printf("%*.2f", kFieldWidth - 1, avg_us); /* under "# Avg Latency(us)", as OSU's barrier */
  else
    printf("%-*zu%*.2f", kSizeWidth, size, kFieldWidth, avg_us);
  if (o->full) printf("%*.2f%*.2f%*d", kFieldWidth, min_us, kFieldWidth, max_us, kIterWidth, iters);
  print_row_end(b, o, errors, bytes, avg_us);
}

void osu_print_nbc_header(const struct osu_bench* b, const struct osu_options* o) {
  if (o->rank != 0) return;
  print_title(b);
  printf("# Overall = Coll. Init + Compute + MPI_Wait (no MPI_Test during the compute)\n\n");
  if (b->extra_opts & OSU_OPT_RMA) {
    static const char* const kWinCalls[] = {"MPI_Win_create", "MPI_Win_allocate",
                                            "MPI_Win_create_dynamic"};
    static const char* const kSyncCalls[] = {
        "Post/Start/Complete/Wait", "MPI_Win_fence",
        "MPI_Win_lock/unlock",      "MPI_Win_flush",
        "MPI_Win_flush_local",      "MPI_Win_lock_all/unlock_all"};
    printf("# Window creation: %s\n", kWinCalls[o->win]);
    printf("# Synchronization: %s\n", kSyncCalls[o->sync]);
  }
  printf("# Datatype: %s.\n", o->type_name);
  printf("%-*s%*s%*s", kSizeWidth, "# Size", kFieldWidth, "Overall(us)", kFieldWidth,
         "Compute(us)");
  if (o->full)
    printf("%*s%*s%*s", kFieldWidth, "Coll. Init(us)", kFieldWidth, "MPI_Test(us)", kFieldWidth,
           "MPI_Wait(us)");
  printf("%*s%*s", kFieldWidth, "Pure Comm.(us)", kFieldWidth, "Overlap(%)");
  if (o->validate) printf("%*s", kFieldWidth, "Validation");
  print_bw_heading(b, o);
  printf("\n");
  fflush(stdout);
}

void osu_print_nbc_row(const struct osu_bench* b, const struct osu_options* o, size_t size,
                       const struct osu_nbc_times* t, long errors, double bytes) {
  if (o->rank != 0) return;
  double overlap = t->comm > 0 ? 100.0 - 100.0 * (t->overall - t->compute) / t->comm : 0.0;
  if (overlap < 0) overlap = 0;
  printf("%-*zu%*.2f%*.2f", kSizeWidth, size, kFieldWidth, t->overall, kFieldWidth, t->compute);
  if (o->full)
    printf("%*.2f%*.2f%*.2f", kFieldWidth, t->init, kFieldWidth, t->test, kFieldWidth, t->wait);
  printf("%*.2f%*.2f", kFieldWidth, t->comm, kFieldWidth, overlap);
  print_row_end(b, o, errors, bytes, t->comm);
}

long osu_coll_run(const struct osu_bench* b, const struct osu_options* o,
                  const struct osu_coll_ops* ops, void* state) {
  long all_errors = 0;
  /* A sizeless benchmark runs one "size", 0. */
  const size_t first = b->sizeless ? 0 : o->min_size, last = b->sizeless ? 0 : o->max_size;
  osu_print_coll_header(b, o);

  for (size_t size = first; size <= last; size = osu_next_size(size)) {
    if (!b->sizeless && osu_count(o, size) < 0) continue;
    const double bytes = ops->prepare ? ops->prepare(state, size) : 0.0;
    if (bytes < 0) continue;
    const int iters = osu_iters(b, o, size);
    const int warmup = osu_warmup(b, o, size);
    double total = 0;
    long errors = 0;

    if (ops->fill) ops->fill(state, size, 0);
    for (int i = 0; i < warmup + iters; i++) {
      if (o->validate && ops->fill && i > 0) ops->fill(state, size, i);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      ops->call(state);
      const double t = MPI_Wtime() - t0;
      if (i >= warmup) total += t;
      if (o->validate && ops->check) errors += ops->check(state, size, i);
    }

    double avg, min, max;
    osu_over_ranks(iters > 0 ? total * 1e6 / iters : 0.0, o, &avg, &min, &max);
    errors = osu_sum_errors(errors, o->nranks, MPI_COMM_WORLD);
    all_errors += errors;
    osu_print_coll_row(b, o, size, avg, min, max, iters, errors, bytes);
  }
  return all_errors;
}

/* --- One-sided benchmarks ---------------------------------------------------------------------
 */

/* A window of `bytes` on each of the two ranks, of the -w flavor, in device memory where this
 * rank is `targeted` by the peer's operations and its -d neuron place is D (MPI_Win_allocate
 * through the info key torusmpi_memory_kind=device, the others on torusmpi_device_malloc's memory).
 * `disp0` is the displacement of the peer's window start: 0, or its address for a dynamic window. A
 * library that refuses the window stops the job with its message. */
struct rma_window {
  MPI_Win win;
  char* base;
  char* own;      /* memory this rank gave the window (create, dynamic), else NULL */
  int own_device; /* own is device memory */
  MPI_Aint disp0;
};

static void rma_fail(const char* call, int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  fprintf(stderr, "osu: %s failed: %s\n", call, text);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

static void rma_open(const struct osu_options* o, size_t bytes, int targeted,
                     struct rma_window* w) {
  const int device = targeted && on_device(o);
  const int peer = 1 - o->rank;
  int rc = MPI_SUCCESS;
  const char* call = "MPI_Win_create";
  w->own = NULL;
  w->own_device = device;
  w->disp0 = 0;
  if (bytes == 0) bytes = 1;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (o->win == OSU_WIN_ALLOCATE) {
    MPI_Info info = MPI_INFO_NULL;
    if (device) {
      MPI_Info_create(&info);
      MPI_Info_set(info, "torusmpi_memory_kind", "device");
    }
    call = "MPI_Win_allocate";
    rc = MPI_Win_allocate((MPI_Aint)bytes, 1, info, MPI_COMM_WORLD, &w->base, &w->win);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  } else {
    if (device) {
      w->own = osu_alloc_buf(o, bytes);
    } else {
      w->own = osu_alloc(bytes);
    }
    w->base = w->own;
    if (o->win == OSU_WIN_CREATE) {
      rc = MPI_Win_create(w->base, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
    } else {
      call = "MPI_Win_create_dynamic";
      rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
      if (rc == MPI_SUCCESS) {
        call = "MPI_Win_attach";
        MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
        rc = MPI_Win_attach(w->win, w->base, (MPI_Aint)bytes);
      }
      MPI_Aint mine = 0;
      MPI_Get_address(w->base, &mine);
      MPI_Sendrecv(&mine, 1, MPI_AINT, peer, kSyncTag, &w->disp0, 1, MPI_AINT, peer, kSyncTag,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  if (rc != MPI_SUCCESS) rma_fail(call, rc);
  if (device && !is_device(o, w->base)) {
    /* A library that ignores the info key: its host window would be timed as a device one. */
    fprintf(stderr,
            "osu: MPI_Win_allocate with info torusmpi_memory_kind=device gave host memory: this "
            "library has no device windows\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
  }
}

static void rma_close(const struct osu_options* o, struct rma_window* w) {
  if (o->win == OSU_WIN_DYNAMIC) MPI_Win_detach(w->win, w->base);
  MPI_Win_free(&w->win);
  if (w->own != NULL && w->own_device)
    osu_free_buf(o, w->own);
  else
    free(w->own);
}

/* Element k of a -T buffer (char, int, float; long long for fetch_and_op and compare_and_swap) is
 * expected to be mult * pattern(seed, k) (mult * 1 for a long long): the number that are not.
 * Staged through host memory when buf is device memory. */
static long rma_count_bad(const struct osu_options* o, const void* buf, int count, unsigned seed,
                          long mult) {
  const void* h = stage(o, buf, bytes_of(o, count), 1);
  long bad = 0;
  for (int k = 0; k < count; k++) {
    const long want = mult * pattern(seed, k);
    if (o->type == MPI_LONG_LONG)
      bad += ((const long long*)h)[k] != mult;
    else if (o->type == MPI_INT)
      bad += ((const int*)h)[k] != want;
    else if (o->type == MPI_FLOAT)
      bad += ((const float*)h)[k] != (float)want;
    else
      bad += ((const char*)h)[k] != (char)want;
  }
  return bad;
}

static void rma_store_ll(const struct osu_options* o, void* buf, long long value) {
  long long* h = stage(o, buf, sizeof value, 0);
  *h = value;
  unstage(buf, h, sizeof value);
}

static void rma_zero(const struct osu_options* o, void* buf, size_t bytes) {
  if (is_device(o, buf))
    g_ext.memset(buf, 0, bytes);
  else
    memset(buf, 0, bytes);
}

struct rma_call {
  enum osu_rma_op op;
  const struct osu_options* o;
  int count, peer, window;
  size_t size;
  MPI_Aint disp0;
  char *sbuf, *rbuf, *cbuf;
  MPI_Win win;
};

/* The benchmark's operations of one synchronization: `window` of them, to consecutive places of
 * the target window (and, for the fetching ones, of rbuf). */
static void rma_ops(const struct rma_call* c) {
  const struct osu_options* o = c->o;
  for (int j = 0; j < c->window; j++) {
    const MPI_Aint disp = c->disp0 + (MPI_Aint)((size_t)j * c->size);
    char* r = c->rbuf + (size_t)j * c->size;
    switch (c->op) {
      case OSU_RMA_PUT:
        MPI_Put(c->sbuf, c->count, o->type, c->peer, disp, c->count, o->type, c->win);
        break;
      case OSU_RMA_GET:
        MPI_Get(r, c->count, o->type, c->peer, disp, c->count, o->type, c->win);
        break;
      case OSU_RMA_ACC:
        MPI_Accumulate(c->sbuf, c->count, o->type, c->peer, disp, c->count, o->type, MPI_SUM,
                       c->win);
        break;
      case OSU_RMA_GET_ACC:
        MPI_Get_accumulate(c->sbuf, c->count, o->type, r, c->count, o->type, c->peer, disp,
                           c->count, o->type, MPI_SUM, c->win);
        break;
      case OSU_RMA_FOP:
        MPI_Fetch_and_op(c->sbuf, r, MPI_LONG_LONG, c->peer, disp, MPI_SUM, c->win);
        break;
      case OSU_RMA_CAS:
        MPI_Compare_and_swap(c->sbuf, c->cbuf, r, MPI_LONG_LONG, c->peer, disp, c->win);
        break;
    }
  }
}

long osu_rma_run(const struct osu_bench* b, const struct osu_options* o, enum osu_rma_op op,
                 int bidir) {
  const int bw = b->metric == OSU_BANDWIDTH;
  const int window = bw ? o->window : 1;
  /* Latency under fence and pscw: the ranks take turns, one operation each per iteration, and the
   * latency is half an iteration (OSU's way); bandwidth: rank 0 alone unless bidir. */
  const int turns = !bw && (o->sync == OSU_SYNC_FENCE || o->sync == OSU_SYNC_PSCW);
  const int is_origin = o->rank == 0 || bidir || turns;
  const int fetches = op != OSU_RMA_PUT && op != OSU_RMA_ACC;
  const int accumulates = op == OSU_RMA_ACC || op == OSU_RMA_GET_ACC;
  if (o->validate && accumulates && o->type == MPI_CHAR) {
    /* n sums of the same data leave a char's range, where libraries differ (saturate, wrap). */
    if (o->rank == 0) fprintf(stderr, "%s: -c needs -T mpi_int or -T mpi_float\n", b->name);
    return 1;
  }
  struct rma_call c = {.op = op, .o = o, .peer = 1 - o->rank, .window = window};
  const size_t span = (o->max_size > 8 ? o->max_size : 8) * (size_t)window;
  c.sbuf = osu_alloc_buf(o, o->max_size > 8 ? o->max_size : 8);
  c.rbuf = osu_alloc_buf(o, span);
  c.cbuf = osu_alloc_buf(o, 8);
  MPI_Group world, peer_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &c.peer, &peer_group);
  osu_print_header(b, o);

  long all_errors = 0;
  for (size_t size = o->min_size; size <= o->max_size; size = osu_next_size(size)) {
    c.count = osu_count(o, size);
    if (c.count <= 0) continue;
    c.size = size;
    const int iters = osu_iters(b, o, size);
    const int warmup = osu_warmup(b, o, size);
    const int n = warmup + iters;
    const int per_iter = o->full || o->validate;
    const unsigned mine = osu_seed(size, 0, o->rank), theirs = osu_seed(size, 0, c.peer);
    long errors = 0;
    double t0 = 0, total = 0, tmin = DBL_MAX, tmax = 0;
    /* Ranks the peer's operations reach (for -c and for -d neuron's window placement). */
    const int targeted = o->rank == 1 || bidir || turns;
    struct rma_window w;
    rma_open(o, size * (size_t)window, targeted, &w);
    c.win = w.win;
    c.disp0 = w.disp0;

    /* The window: what gets read (get) or summed into (zero); a put's target is poisoned. */
    for (int j = 0; j < window; j++) {
      char* seg = w.base + (size_t)j * size;
      if (op == OSU_RMA_GET)
        osu_fill(seg, c.count, o, mine);
      else if (op == OSU_RMA_PUT)
        osu_poison(seg, size);
      else
        rma_zero(o, seg, size);
    }
    if (op == OSU_RMA_FOP) rma_store_ll(o, c.sbuf, 1);
    if (op == OSU_RMA_CAS) rma_store_ll(o, c.sbuf, 0), rma_store_ll(o, c.cbuf, 0);
    if (op == OSU_RMA_PUT || accumulates) osu_fill(c.sbuf, c.count, o, mine);
    osu_sync(2, MPI_COMM_WORLD);

    if (o->sync == OSU_SYNC_FLUSH || o->sync == OSU_SYNC_FLUSH_LOCAL)
      if (o->rank == 0) MPI_Win_lock(MPI_LOCK_SHARED, c.peer, 0, c.win);
    if (o->sync == OSU_SYNC_FENCE) MPI_Win_fence(0, c.win);

    for (int i = 0; i < n; i++) {
      const int timed = i >= warmup;
      if (o->validate && op == OSU_RMA_PUT)
        osu_fill(c.sbuf, c.count, o, osu_seed(size, i, o->rank));
      if (o->validate && op == OSU_RMA_CAS)
        rma_store_ll(o, c.cbuf, i), rma_store_ll(o, c.sbuf, i + 1);
      if (o->validate && fetches) osu_poison(c.rbuf, size * (size_t)window);
      if (timed && (per_iter || i == warmup)) t0 = MPI_Wtime();
      switch (o->sync) {
        case OSU_SYNC_LOCK:
          if (o->rank == 0) {
            MPI_Win_lock(MPI_LOCK_SHARED, c.peer, 0, c.win);
            rma_ops(&c);
            MPI_Win_unlock(c.peer, c.win);
          }
          break;
        case OSU_SYNC_FLUSH:
          if (o->rank == 0) rma_ops(&c), MPI_Win_flush(c.peer, c.win);
          break;
        case OSU_SYNC_FLUSH_LOCAL:
          if (o->rank == 0) rma_ops(&c), MPI_Win_flush_local(c.peer, c.win);
          break;
        case OSU_SYNC_LOCK_ALL:
          if (o->rank == 0) {
            MPI_Win_lock_all(0, c.win);
            rma_ops(&c);
            MPI_Win_unlock_all(c.win);
          }
          break;
        case OSU_SYNC_FENCE:
          if (turns) {
            for (int turn = 0; turn < 2; turn++) {
              if (o->rank == turn) rma_ops(&c);
              MPI_Win_fence(0, c.win);
            }
          } else {
            if (is_origin) rma_ops(&c);
            MPI_Win_fence(0, c.win);
          }
          break;
        case OSU_SYNC_PSCW:
          if (turns) {
            for (int turn = 0; turn < 2; turn++) {
              if (o->rank == turn) {
                MPI_Win_start(peer_group, 0, c.win);
                rma_ops(&c);
                MPI_Win_complete(c.win);
              } else {
                MPI_Win_post(peer_group, 0, c.win);
                MPI_Win_wait(c.win);
              }
            }
          } else {
            if (bidir || o->rank == 1) MPI_Win_post(peer_group, 0, c.win);
            if (is_origin) {
              MPI_Win_start(peer_group, 0, c.win);
              rma_ops(&c);
              MPI_Win_complete(c.win);
            }
            if (bidir || o->rank == 1) MPI_Win_wait(c.win);
          }
          break;
      }
      if (timed && per_iter) {
        const double t = MPI_Wtime() - t0;
        total += t;
        if (t < tmin) tmin = t;
        if (t > tmax) tmax = t;
      }
      /* What the operations fetched: the target's data (get), its sum so far (i times ours:
       * get_accumulate), the counter before this iteration (fetch_and_op, compare_and_swap). */
      if (o->validate && fetches && is_origin) {
        for (int j = 0; j < window; j++) {
          const char* r = c.rbuf + (size_t)j * size;
          if (op == OSU_RMA_GET)
            errors += rma_count_bad(o, r, c.count, theirs, 1);
          else if (op == OSU_RMA_GET_ACC)
            errors += rma_count_bad(o, r, c.count, mine, i);
          else
            errors += rma_count_bad(o, r, 1, 0, i);
        }
      }
    }
    if (!per_iter) total = MPI_Wtime() - t0;
    if (o->sync == OSU_SYNC_FLUSH || o->sync == OSU_SYNC_FLUSH_LOCAL)
      if (o->rank == 0) MPI_Win_unlock(c.peer, c.win);
    if (o->sync == OSU_SYNC_FENCE) MPI_Win_fence(MPI_MODE_NOSUCCEED, c.win);
    osu_sync(2, MPI_COMM_WORLD);

    /* The target's window after all n iterations from the peer. */
    if (o->validate && targeted) {
      for (int j = 0; j < window; j++) {
        const char* seg = w.base + (size_t)j * size;
        if (op == OSU_RMA_PUT)
          errors += rma_count_bad(o, seg, c.count, osu_seed(size, n - 1, c.peer), 1);
        else if (op == OSU_RMA_GET)
          errors += rma_count_bad(o, seg, c.count, mine, 1);
        else if (accumulates)
          errors += rma_count_bad(o, seg, c.count, theirs, n);
        else
          errors += rma_count_bad(o, seg, 1, 0, n);
      }
    }
    rma_close(o, &w);

    errors = osu_sum_errors(errors, 2, MPI_COMM_WORLD);
    all_errors += errors;
    const double halves = turns ? 2.0 : 1.0;
    if (bw) {
      const double bytes = (double)size * window * (bidir ? 2 : 1);
      osu_print_row(o, size, bytes * iters / total / 1e6, bytes / tmax / 1e6, bytes / tmin / 1e6,
                    iters, errors);
    } else {
      osu_print_row(o, size, total * 1e6 / iters / halves, tmin * 1e6 / halves, tmax * 1e6 / halves,
                    iters, errors);
    }
  }
  MPI_Group_free(&peer_group);
  MPI_Group_free(&world);
  osu_free_buf(o, c.cbuf);
  osu_free_buf(o, c.rbuf);
  osu_free_buf(o, c.sbuf);
  return all_errors;
}
