/* cxx_capi: the C API used from C++ (built with mpicxx, which links libmpi_cxx in as well).
 *
 *   cxx_capi       any number of ranks, 1 included
 *
 * Every rank runs the same calls. Checked, one "ok/FAIL <rank> <check>" line per case, then
 * "done <rank> of <size> ...":
 * - a C++ exception thrown by a callback passes through the library to the caller, unwinding the
 *   callback's locals (std::vector, std::string, a counting object) on its way, and the library
 *   works on afterwards:
 *   (a) a user op (MPI_Op_create) called by MPI_Reduce_local, then MPI_Allreduce on
 *       MPI_COMM_WORLD;
 *   (b) a communicator error handler (MPI_Comm_create_errhandler) on a dup of MPI_COMM_WORLD,
 *       called for MPI_Send to rank `size`, twice, then MPI_Allreduce on the dup;
 *   (c) a keyval's delete callback under MPI_Comm_delete_attr, then collectives, MPI_Comm_dup,
 *       MPI_Comm_set_attr and MPI_Comm_free on that communicator.
 *   An op throwing from MPI_Allreduce on MPI_COMM_SELF is not tested: Open MPI 4.1 does not call
 *   the op for a reduction over one rank (it copies), so there is nothing to throw.
 * - std::vector buffers in MPI_Bcast and MPI_Reduce from every root, MPI_Allreduce,
 *   MPI_Allgather and MPI_Alltoall, in place and not, with counts 0, 1, size-1, size, size+1
 *   and 1009, on MPI_INT and MPI_DOUBLE (MPI_SUM, MPI_MAX), MPI_CXX_BOOL (MPI_LOR, MPI_LAND) and
 *   MPI_CXX_DOUBLE_COMPLEX (MPI_SUM). A count of 0 passes the empty vectors' data(), which may
 *   be a null pointer. */
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "check_cxx.h"

static int g_size;

static int error_class(int code) {
  int cls = -1;
  MPI_Error_class(code, &cls);
  return cls;
}

/* The sum of 1..size, what every rank contributing rank+1 gives. */
static void check_allreduce_works(MPI_Comm comm, const char* what) {
  int mine = g_rank + 1, sum = -1;
  int rc = MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm);
  check(rc == MPI_SUCCESS && sum == g_size * (g_size + 1) / 2, what, "returned %d, sum %d", rc,
        sum);
}

/* --- Exceptions from callbacks. */

static int g_unwound;  // destructions of Tracked objects

/* A local of the callbacks whose destructor must run as the exception leaves them. */
struct Tracked {
  ~Tracked() { ++g_unwound; }
};

struct CallbackError : std::runtime_error {
  int value;
  CallbackError(const std::string& what, int v) : std::runtime_error(what), value(v) {}
};

/* Runs call(); returns the CallbackError it threw, or one with value -1 if it threw none. */
template <class F>
static CallbackError caught_from(F call) {
  try {
    call();
  } catch (const CallbackError& e) {
    return e;
  }
  return CallbackError("(nothing thrown)", -1);
}

static void throwing_op(void* in, void*, int* len, MPI_Datatype*) {
  Tracked t;
  std::vector<int> copy(static_cast<int*>(in), static_cast<int*>(in) + *len);
  throw CallbackError("op saw " + std::to_string(copy.size()) + " ints", copy.at(0));
}

static void test_op_exception() {
  MPI_Op op;
  MPI_Op_create(throwing_op, 1, &op);
  std::vector<int> in{7, 8, 9}, inout(3, 0);
  g_unwound = 0;
  CallbackError e = caught_from([&] { MPI_Reduce_local(in.data(), inout.data(), 3, MPI_INT, op); });
  check(std::string(e.what()) == "op saw 3 ints" && e.value == 7 && g_unwound == 1,
        "(a) user op's exception comes out of MPI_Reduce_local",
        "caught \"%s\" (%d), %d locals unwound", e.what(), e.value, g_unwound);
  check_rc(MPI_Op_free(&op), "(a) MPI_Op_free after the exception");
  check_allreduce_works(MPI_COMM_WORLD, "(a) MPI_Allreduce on MPI_COMM_WORLD after the exception");
}

static void throwing_handler(MPI_Comm* comm, int* code, ...) {
  Tracked t;
  std::string text(MPI_MAX_ERROR_STRING, '\0');
  int len = 0, rank = -1;
  MPI_Error_string(*code, &text[0], &len);
  text.resize(len);
  MPI_Comm_rank(*comm, &rank);
  throw CallbackError("handler on rank " + std::to_string(rank) + ": " + text, *code);
}

static void test_errhandler_exception() {
  MPI_Comm dup;
  MPI_Errhandler eh;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_create_errhandler(throwing_handler, &eh);
  MPI_Comm_set_errhandler(dup, eh);
  MPI_Errhandler_free(&eh);

  // Twice: the handler stays attached after throwing.
  const std::string prefix = "handler on rank " + std::to_string(g_rank) + ": ";
  for (int round = 1; round <= 2; ++round) {
    int x = 1;
    g_unwound = 0;
    CallbackError e = caught_from([&] { MPI_Send(&x, 1, MPI_INT, g_size, 0, dup); });
    check(std::string(e.what()).compare(0, prefix.size(), prefix) == 0 &&
              error_class(e.value) == MPI_ERR_RANK && g_unwound == 1,
          strf("(b) error handler's exception comes out of MPI_Send, time %d", round).c_str(),
          "caught \"%s\" (code %d), %d locals unwound", e.what(), e.value, g_unwound);
  }
  check_allreduce_works(dup, "(b) MPI_Allreduce on the communicator after the exceptions");
  check_rc(MPI_Comm_free(&dup), "(b) MPI_Comm_free after the exceptions");
}

static bool g_delete_throws;
static int g_deletes;

static int throwing_delete(MPI_Comm, int keyval, void* value, void*) {
  ++g_deletes;
  Tracked t;
  std::vector<std::string> words{"delete", "of", std::to_string(reinterpret_cast<intptr_t>(value))};
  if (g_delete_throws) throw CallbackError(words[0] + " " + words[1] + " " + words[2], keyval);
  return MPI_SUCCESS;
}

static void test_delete_exception() {
  MPI_Comm dup, dup2;
  int kv, found = 1;
  void* value;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, throwing_delete, &kv, nullptr);
  MPI_Comm_set_attr(dup, kv, reinterpret_cast<void*>(intptr_t(5)));
  g_delete_throws = true;
  g_unwound = g_deletes = 0;
  CallbackError e = caught_from([&] { MPI_Comm_delete_attr(dup, kv); });
  check(std::string(e.what()) == "delete of 5" && e.value == kv && g_deletes == 1 && g_unwound == 1,
        "(c) delete callback's exception comes out of MPI_Comm_delete_attr",
        "caught \"%s\" (%d), %d calls, %d locals unwound", e.what(), e.value, g_deletes, g_unwound);

  // Whether the attribute survived is the library's business; it must keep working.
  g_delete_throws = false;
  check_allreduce_works(dup, "(c) MPI_Allreduce on the communicator after the exception");
  int rc = MPI_Comm_dup(dup, &dup2);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_get_attr(dup2, kv, &value, &found);
  check(rc == MPI_SUCCESS && !found, "(c) MPI_Comm_dup after the exception",
        "returned %d, attribute copied %d", rc, found);
  check_rc(MPI_Comm_set_attr(dup, kv, reinterpret_cast<void*>(intptr_t(6))),
           "(c) MPI_Comm_set_attr after the exception");
  g_deletes = 0;
  rc = MPI_Comm_free(&dup);
  check(rc == MPI_SUCCESS && g_deletes == 1, "(c) MPI_Comm_free calls the delete callback",
        "returned %d, %d calls", rc, g_deletes);
  check_rc(MPI_Comm_free(&dup2), "(c) MPI_Comm_free of the dup");
  check_rc(MPI_Comm_free_keyval(&kv), "(c) MPI_Comm_free_keyval");
  check_allreduce_works(MPI_COMM_WORLD, "(c) MPI_Allreduce on MPI_COMM_WORLD at the end");
}

/* --- Collectives on std::vector buffers. */

/* C++ bool without std::vector<bool>'s bit packing: a vector of these is an array of bool. */
struct Bool {
  bool v;
  Bool(bool b = false) : v(b) {}
  operator bool() const { return v; }
};
static_assert(sizeof(Bool) == sizeof(bool), "Bool must have bool's layout");

typedef std::complex<double> Complex;

static std::string show(int v) { return strf("%d", v); }
static std::string show(double v) { return strf("%g", v); }
static std::string show(Bool v) { return v ? "true" : "false"; }
static std::string show(Complex v) { return strf("(%g, %g)", v.real(), v.imag()); }

template <class T>
struct NamedOp {
  const char* name;
  MPI_Op op;
  T (*fold)(T, T);
};

/* One element type: its datatype, the ops tried on it, and make(), which turns an integer key
 * into an element (integer-valued, so every result is exact). */
template <class T>
struct ElementType {
  const char* name;
  MPI_Datatype type;
  std::vector<NamedOp<T>> ops;
  T (*make)(int key);
};

/* Rank r's element i in reductions: small, of both signs, the largest from varying ranks. */
static int reduce_key(int r, int i) { return (r * 7 + i * 3) % 13 - 6; }

/* Distinct for every (sender, receiver, index), to see each block land in its place. */
static int place_key(int from, int to, int i) { return from * 100000 + to * 2000 + i; }

template <class T, class Key>
static std::vector<T> elements(const ElementType<T>& et, int n, Key key) {
  std::vector<T> v(n);
  for (int i = 0; i < n; ++i) v[i] = et.make(key(i));
  return v;
}

template <class T>
static std::vector<T> contribution(const ElementType<T>& et, int n, int r) {
  return elements(et, n, [=](int i) { return reduce_key(r, i); });
}

template <class T>
static std::vector<T> blocks(const ElementType<T>& et, int n, int from, int to) {
  return elements(et, n, [=](int i) { return place_key(from, to, i); });
}

/* Why got is not want, or "" if it is. */
template <class T>
static std::string difference(int rc, const std::vector<T>& got, const std::vector<T>& want) {
  if (rc != MPI_SUCCESS) return strf("returned %d", rc);
  if (got.size() != want.size()) return strf("%zu elements, expected %zu", got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(got[i] == want[i])) {
      return strf("element %zu is %s, expected %s", i, show(got[i]).c_str(), show(want[i]).c_str());
    }
  }
  return "";
}

/* One check over many cases (counts, roots, in place or not), so that the output stays small:
 * it passes if every case does, and its detail names the first case that did not. */
class Cases {
 public:
  template <class T>
  void expect(const std::string& which, int rc, const std::vector<T>& got,
              const std::vector<T>& want) {
    ++cases_;
    std::string why = difference(rc, got, want);
    if (!why.empty() && failed_++ == 0) first_ = which + ": " + why;
  }
  void report(const std::string& what) const {
    check(failed_ == 0, what.c_str(), "%d of %d cases failed, the first at %s", failed_, cases_,
          first_.c_str());
  }

 private:
  int cases_ = 0, failed_ = 0;
  std::string first_;
};

template <class T>
static void test_vector_collectives(const ElementType<T>& et, const std::vector<int>& counts) {
  const char* modes[2] = {"", " in place"};
  std::string all = "counts";
  for (int n : counts) all += strf(" %d", n);

  Cases bcast;
  for (int n : counts) {
    for (int root = 0; root < g_size; ++root) {
      std::vector<T> v = g_rank == root ? blocks(et, n, root, 0) : std::vector<T>(n);
      int rc = MPI_Bcast(v.data(), n, et.type, root, MPI_COMM_WORLD);
      bcast.expect(strf("count %d root %d", n, root), rc, v, blocks(et, n, root, 0));
    }
  }
  bcast.report(strf("MPI_Bcast %s, %s, every root", et.name, all.c_str()));

  for (const NamedOp<T>& op : et.ops) {
    Cases reduce, allreduce;
    for (int n : counts) {
      std::vector<T> mine = contribution(et, n, g_rank), want = contribution(et, n, 0);
      for (int r = 1; r < g_size; ++r) {
        for (int i = 0; i < n; ++i) want[i] = op.fold(want[i], et.make(reduce_key(r, i)));
      }
      for (int in_place = 0; in_place < 2; ++in_place) {
        for (int root = 0; root < g_size; ++root) {
          bool here = in_place && g_rank == root;
          std::vector<T> out = here ? mine : std::vector<T>(n);
          int rc = MPI_Reduce(here ? MPI_IN_PLACE : mine.data(), out.data(), n, et.type, op.op,
                              root, MPI_COMM_WORLD);
          if (g_rank == root) {
            reduce.expect(strf("count %d root %d%s", n, root, modes[in_place]), rc, out, want);
          }
        }
        std::vector<T> out = in_place ? mine : std::vector<T>(n);
        int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : mine.data(), out.data(), n, et.type, op.op,
                               MPI_COMM_WORLD);
        allreduce.expect(strf("count %d%s", n, modes[in_place]), rc, out, want);
      }
    }
    reduce.report(
        strf("MPI_Reduce %s %s, %s, every root, in place and not", et.name, op.name, all.c_str()));
    allreduce.report(
        strf("MPI_Allreduce %s %s, %s, in place and not", et.name, op.name, all.c_str()));
  }

  // Allgather: rank r's block is blocks(r, 0); Alltoall: the block from r to s is blocks(r, s).
  Cases allgather, alltoall;
  for (int n : counts) {
    std::vector<T> mine = blocks(et, n, g_rank, 0), gathered, to_all, from_all;
    for (int r = 0; r < g_size; ++r) {
      std::vector<T> g = blocks(et, n, r, 0), t = blocks(et, n, g_rank, r),
                     f = blocks(et, n, r, g_rank);
      gathered.insert(gathered.end(), g.begin(), g.end());
      to_all.insert(to_all.end(), t.begin(), t.end());
      from_all.insert(from_all.end(), f.begin(), f.end());
    }
    for (int in_place = 0; in_place < 2; ++in_place) {
      std::vector<T> out(n * g_size);
      if (in_place) std::copy(mine.begin(), mine.end(), out.begin() + n * g_rank);
      int rc = MPI_Allgather(in_place ? MPI_IN_PLACE : mine.data(), n, et.type, out.data(), n,
                             et.type, MPI_COMM_WORLD);
      allgather.expect(strf("count %d%s", n, modes[in_place]), rc, out, gathered);

      out = in_place ? to_all : std::vector<T>(n * g_size);
      rc = MPI_Alltoall(in_place ? MPI_IN_PLACE : to_all.data(), n, et.type, out.data(), n, et.type,
                        MPI_COMM_WORLD);
      alltoall.expect(strf("count %d%s", n, modes[in_place]), rc, out, from_all);
    }
  }
  allgather.report(strf("MPI_Allgather %s, %s, in place and not", et.name, all.c_str()));
  alltoall.report(strf("MPI_Alltoall %s, %s, in place and not", et.name, all.c_str()));
}

int main(int argc, char** argv) {
  // One write per line, so the ranks' lines reach the launcher's output whole.
  setvbuf(stdout, nullptr, _IOLBF, 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);

  test_op_exception();
  test_errhandler_exception();
  test_delete_exception();

  std::vector<int> counts{0, 1, g_size - 1, g_size, g_size + 1, 1009};
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());

  ElementType<int> ints{"MPI_INT",
                        MPI_INT,
                        {{"MPI_SUM", MPI_SUM, [](int a, int b) { return a + b; }},
                         {"MPI_MAX", MPI_MAX, [](int a, int b) { return std::max(a, b); }}},
                        [](int key) { return key; }};
  ElementType<double> doubles{
      "MPI_DOUBLE",
      MPI_DOUBLE,
      {{"MPI_SUM", MPI_SUM, [](double a, double b) { return a + b; }},
       {"MPI_MAX", MPI_MAX, [](double a, double b) { return std::max(a, b); }}},
      [](int key) { return double(key); }};
  // Scrambled bits, so that neighbouring keys do not simply alternate.
  ElementType<Bool> bools{"MPI_CXX_BOOL",
                          MPI_CXX_BOOL,
                          {{"MPI_LOR", MPI_LOR, [](Bool a, Bool b) { return Bool(a || b); }},
                           {"MPI_LAND", MPI_LAND, [](Bool a, Bool b) { return Bool(a && b); }}},
                          [](int key) { return Bool((uint32_t(key) * 2654435761u) >> 31); }};
  ElementType<Complex> complexes{"MPI_CXX_DOUBLE_COMPLEX",
                                 MPI_CXX_DOUBLE_COMPLEX,
                                 {{"MPI_SUM", MPI_SUM, [](Complex a, Complex b) { return a + b; }}},
                                 [](int key) { return Complex(key, 3 - key % 7); }};

  test_vector_collectives(ints, counts);
  test_vector_collectives(doubles, counts);
  test_vector_collectives(bools, counts);
  test_vector_collectives(complexes, counts);

  int status = check_done(g_size);
  MPI_Finalize();
  return status;
}
