/* cxx_bindings: the MPI-2 C++ bindings (namespace MPI, as Open MPI 4.1's mpicxx builds them).
 *
 *   cxx_bindings       any number of ranks, 1 included
 *
 * Built with Open MPI's mpicxx, so every MPI:: call goes through Open MPI's libmpi_cxx, which
 * calls the C API and, for user ops, C++ error handlers, C++ keyvals and
 * MPI::ERRORS_THROW_EXCEPTIONS, a few Open MPI internals as well. Every rank runs the same calls.
 * Checked, one "ok/FAIL <rank> <check>" line per case, then "done <rank> of <size> ...":
 * - MPI::Init, Is_initialized, Query_thread, Get_processor_name, Wtime, the MPI::TAG_UB
 *   attribute, MPI::Comm::Get_parent (MPI::COMM_NULL: not spawned);
 * - Send/Recv with MPI::Status (Get_source, Get_tag, Get_count, ANY_SOURCE/ANY_TAG, PROC_NULL),
 *   Sendrecv, Isend/Irecv with MPI::Request::Waitall;
 * - Bcast, Reduce and Gather/Scatter from every root, Allreduce (also MPI::IN_PLACE) with
 *   MPI::SUM and MPI::MAX, Allgather, Alltoall, Reduce_scatter, Barrier, on MPI::INT and
 *   MPI::DOUBLE (the C++ bindings of Open MPI 4.1 have no Reduce_scatter_block);
 * - user ops through MPI::Op::Init with C++ functions: one commutative, one not (2x2 integer
 *   matrix product), in Reduce from every root, Allreduce and MPI::Op::Reduce_local;
 * - Dup, Split, Clone, Free, Compare; Get_group, Group::Incl, Translate_ranks, Group::Compare;
 * - keyvals with C++ copy and delete callbacks, with MPI::Comm::NULL_COPY_FN/NULL_DELETE_FN and
 *   with MPI::Comm::DUP_FN: Set_attr, Get_attr, Dup, Delete_attr, Free, Free_keyval;
 * - Create_contiguous, Create_vector, Create_struct: Commit, Get_size, Get_extent, use, Free;
 * - error handlers: MPI::ERRORS_RETURN on MPI::COMM_WORLD, a C++ handler from
 *   MPI::Comm::Create_errhandler (called by a bad Send and by Call_errhandler), and
 *   MPI::ERRORS_THROW_EXCEPTIONS: Open MPI's libmpi_cxx is built without C++ exceptions, so an
 *   error prints one line on stderr, sets MPI::mpi_errno to the code and the call returns. */
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "check_cxx.h"

static int g_size;

static std::string show(int v) { return strf("%d", v); }
static std::string show(double v) { return strf("%g", v); }

/* Checks got == want element by element; the detail names the first difference. */
template <class T>
static void check_equal(const std::string& what, const std::vector<T>& got,
                        const std::vector<T>& want) {
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  if (got.size() != want.size()) {
    check(false, what.c_str(), "%zu elements, expected %zu", got.size(), want.size());
  } else if (i < got.size()) {
    check(false, what.c_str(), "element %zu is %s, expected %s", i, show(got[i]).c_str(),
          show(want[i]).c_str());
  } else {
    check(true, what.c_str(), "");
  }
}

/* Distinct data for every (sender, receiver, index), to see that each block lands in its place. */
static int cell(int from, int to, int i) { return from * 1000 + to * 100 + i; }

template <class T = int>
static std::vector<T> cells(int from, int to, int n) {
  std::vector<T> v(n);
  for (int i = 0; i < n; ++i) v[i] = T(cell(from, to, i));
  return v;
}

/* Rank r's contribution to a reduction: signs vary and the maximum comes from different ranks
 * for different elements; integers, so sums are exact in any order. */
static int contrib(int r, int i) { return (r * 5 + i * 3) % 11 - 4; }

/* --- Environment. */

static void test_environment(bool initialized_before) {
  check(!initialized_before && MPI::Is_initialized(), "Is_initialized before and after MPI::Init",
        "%d before, %d after", initialized_before, MPI::Is_initialized());
  int c_rank = -1, c_size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &c_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c_size);
  check(g_rank == c_rank && g_size == c_size, "COMM_WORLD.Get_rank/Get_size",
        "%d of %d, the C API says %d of %d", g_rank, g_size, c_rank, c_size);

  int provided = MPI::Query_thread();
  check(provided >= MPI::THREAD_SINGLE && provided <= MPI::THREAD_MULTIPLE && MPI::Is_thread_main(),
        "Query_thread, Is_thread_main", "level %d", provided);

  char name[MPI::MAX_PROCESSOR_NAME] = "";
  int len = -1;
  MPI::Get_processor_name(name, len);
  check(len > 0 && len < MPI::MAX_PROCESSOR_NAME && size_t(len) == strlen(name),
        "Get_processor_name", "length %d for \"%s\"", len, name);

  double t0 = MPI::Wtime(), t1 = MPI::Wtime();
  check(t0 >= 0 && t1 >= t0 && MPI::Wtick() > 0, "Wtime, Wtick", "%g then %g, tick %g", t0, t1,
        MPI::Wtick());

  int* tag_ub = nullptr;
  bool found = MPI::COMM_WORLD.Get_attr(MPI::TAG_UB, &tag_ub);
  check(found && tag_ub != nullptr && *tag_ub >= 32767, "Get_attr(TAG_UB)", "found %d, value %d",
        found, tag_ub ? *tag_ub : -1);

  MPI::Intercomm parent = MPI::Comm::Get_parent();
  check(parent == MPI::COMM_NULL, "Get_parent is COMM_NULL", "a parent communicator");
}

/* --- Point to point. */

/* The Status of a receive says (source, tag, count ints), and `data` holds cells(source, to). */
static void check_received(const std::string& what, const MPI::Status& st, int source, int tag,
                           int count, std::vector<int> data, int to) {
  if (st.Get_source() != source || st.Get_tag() != tag || st.Get_count(MPI::INT) != count) {
    check(false, what.c_str(), "status says source %d tag %d count %d, expected %d %d %d",
          st.Get_source(), st.Get_tag(), st.Get_count(MPI::INT), source, tag, count);
    return;
  }
  data.resize(count);
  check_equal(what, data, cells(source, to, count));
}

static void test_p2p() {
  const MPI::Intracomm& world = MPI::COMM_WORLD;
  std::vector<int> buf(2 * g_size + 8);

  // Rank 0 sends rank r r+1 ints tagged 10+r; r answers with 2r ints tagged 20+r. Rank 0 takes
  // the answers from MPI::ANY_SOURCE, so only the Status tells it who sent what.
  if (g_rank == 0) {
    for (int r = 1; r < g_size; ++r) {
      world.Send(cells(0, r, r + 1).data(), r + 1, MPI::INT, r, 10 + r);
    }
    for (int k = 1; k < g_size; ++k) {
      MPI::Status st;
      world.Recv(buf.data(), int(buf.size()), MPI::INT, MPI::ANY_SOURCE, MPI::ANY_TAG, st);
      int src = st.Get_source();
      check_received(strf("Recv ANY_SOURCE, ANY_TAG: answer %d", k), st, src, 20 + src, 2 * src,
                     buf, 0);
    }
  } else {
    MPI::Status st;
    world.Recv(buf.data(), int(buf.size()), MPI::INT, 0, MPI::ANY_TAG, st);
    check_received("Recv ANY_TAG from 0", st, 0, 10 + g_rank, g_rank + 1, buf, g_rank);
    world.Send(cells(g_rank, 0, 2 * g_rank).data(), 2 * g_rank, MPI::INT, 0, 20 + g_rank);
  }
  // Nothing sent below may match rank 0's ANY_SOURCE/ANY_TAG receives.
  world.Barrier();

  {
    MPI::Status st;
    world.Recv(buf.data(), 1, MPI::INT, MPI::PROC_NULL, 5, st);
    check(st.Get_source() == MPI::PROC_NULL && st.Get_tag() == MPI::ANY_TAG &&
              st.Get_count(MPI::INT) == 0,
          "Recv from PROC_NULL: Status", "source %d tag %d count %d", st.Get_source(), st.Get_tag(),
          st.Get_count(MPI::INT));
  }

  int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  {
    MPI::Status st;
    world.Sendrecv(cells(g_rank, right, 3).data(), 3, MPI::INT, right, 30, buf.data(),
                   int(buf.size()), MPI::INT, left, 30, st);
    check_received("Sendrecv around the ring", st, left, 30, 3, buf, g_rank);
  }

  // Every rank sends every rank (itself too) dest+1 ints tagged 40+sender.
  std::vector<std::vector<int>> in(g_size, std::vector<int>(g_rank + 1)), out(g_size);
  std::vector<MPI::Request> reqs(2 * g_size);
  std::vector<MPI::Status> stats(2 * g_size);
  for (int r = 0; r < g_size; ++r) {
    reqs[r] = world.Irecv(in[r].data(), g_rank + 1, MPI::INT, r, 40 + r);
  }
  for (int r = 0; r < g_size; ++r) {
    out[r] = cells(g_rank, r, r + 1);
    reqs[g_size + r] = world.Isend(out[r].data(), r + 1, MPI::INT, r, 40 + g_rank);
  }
  MPI::Request::Waitall(2 * g_size, reqs.data(), stats.data());
  int still_active = 0;
  for (MPI::Request& r : reqs) still_active += r != MPI::REQUEST_NULL;
  check(still_active == 0, "Waitall sets the requests to REQUEST_NULL", "%d are not", still_active);
  for (int r = 0; r < g_size; ++r) {
    check_received(strf("Isend/Irecv/Waitall from %d", r), stats[r], r, 40 + r, g_rank + 1, in[r],
                   g_rank);
  }
}

/* --- Collectives with predefined ops. */

struct PredefinedOp {
  const char* name;
  const MPI::Op& op;
  bool is_max;
};

template <class T>
static T fold(const PredefinedOp& op, T a, T b) {
  return op.is_max ? std::max(a, b) : a + b;
}

/* What reducing everyone's contrib() with `op` gives, n elements. */
template <class T>
static std::vector<T> reduced(const PredefinedOp& op, int n) {
  std::vector<T> v(n);
  for (int i = 0; i < n; ++i) {
    v[i] = T(contrib(0, i));
    for (int r = 1; r < g_size; ++r) v[i] = fold(op, v[i], T(contrib(r, i)));
  }
  return v;
}

template <class T>
static std::vector<T> contribution(int r, int n) {
  std::vector<T> v(n);
  for (int i = 0; i < n; ++i) v[i] = T(contrib(r, i));
  return v;
}

template <class T>
static void test_collectives(const MPI::Datatype& type, const char* tname) {
  const MPI::Intracomm& world = MPI::COMM_WORLD;
  const PredefinedOp ops[] = {{"SUM", MPI::SUM, false}, {"MAX", MPI::MAX, true}};
  const int n = 5;

  for (int root = 0; root < g_size; ++root) {
    std::vector<T> v = g_rank == root ? cells<T>(root, 0, n) : std::vector<T>(n, T(-1));
    world.Bcast(v.data(), n, type, root);
    check_equal(strf("Bcast %s root %d", tname, root), v, cells<T>(root, 0, n));
  }

  for (const PredefinedOp& op : ops) {
    std::vector<T> mine = contribution<T>(g_rank, n), want = reduced<T>(op, n);
    for (int root = 0; root < g_size; ++root) {
      std::vector<T> out(n, T(-100));
      world.Reduce(mine.data(), out.data(), n, type, op.op, root);
      if (g_rank == root) {
        check_equal(strf("Reduce %s %s root %d", op.name, tname, root), out, want);
      }
    }
    std::vector<T> out(n, T(-100));
    world.Allreduce(mine.data(), out.data(), n, type, op.op);
    check_equal(strf("Allreduce %s %s", op.name, tname), out, want);
    out = mine;
    world.Allreduce(MPI::IN_PLACE, out.data(), n, type, op.op);
    check_equal(strf("Allreduce %s %s IN_PLACE", op.name, tname), out, want);
  }

  {
    std::vector<T> all(n * g_size, T(-1)), want;
    world.Allgather(contribution<T>(g_rank, n).data(), n, type, all.data(), n, type);
    for (int r = 0; r < g_size; ++r) {
      std::vector<T> part = contribution<T>(r, n);
      want.insert(want.end(), part.begin(), part.end());
    }
    check_equal(strf("Allgather %s", tname), all, want);
  }

  {
    std::vector<T> send, recv(n * g_size, T(-1)), want;
    for (int r = 0; r < g_size; ++r) {
      std::vector<T> to = cells<T>(g_rank, r, n), from = cells<T>(r, g_rank, n);
      send.insert(send.end(), to.begin(), to.end());
      want.insert(want.end(), from.begin(), from.end());
    }
    world.Alltoall(send.data(), n, type, recv.data(), n, type);
    check_equal(strf("Alltoall %s", tname), recv, want);
  }

  {
    // Rank r gets r+1 elements of the sum, so the blocks differ in size.
    std::vector<int> counts(g_size);
    int total = 0, offset = 0;
    for (int r = 0; r < g_size; ++r) {
      counts[r] = r + 1;
      total += counts[r];
      if (r < g_rank) offset += counts[r];
    }
    std::vector<T> sum = reduced<T>(ops[0], total), out(g_rank + 1, T(-100));
    world.Reduce_scatter(contribution<T>(g_rank, total).data(), out.data(), counts.data(), type,
                         MPI::SUM);
    check_equal(strf("Reduce_scatter SUM %s", tname), out,
                std::vector<T>(sum.begin() + offset, sum.begin() + offset + g_rank + 1));
  }

  for (int root = 0; root < g_size; ++root) {
    std::vector<T> all(n * g_size, T(-1)), want, scatter;
    world.Gather(cells<T>(g_rank, root, n).data(), n, type, all.data(), n, type, root);
    for (int r = 0; r < g_size; ++r) {
      std::vector<T> from = cells<T>(r, root, n), to = cells<T>(root, r, n);
      want.insert(want.end(), from.begin(), from.end());
      scatter.insert(scatter.end(), to.begin(), to.end());
    }
    if (g_rank == root) check_equal(strf("Gather %s root %d", tname, root), all, want);
    std::vector<T> part(n, T(-1));
    world.Scatter(scatter.data(), n, type, part.data(), n, type, root);
    check_equal(strf("Scatter %s root %d", tname, root), part, cells<T>(root, g_rank, n));
  }
}

/* --- User ops, C++ functions given to MPI::Op::Init. */

static int g_op_calls;
static int g_op_wrong_type;      // calls that saw another datatype than g_op_type
static MPI::Datatype g_op_type;  // the datatype the reduction in progress uses

/* The element operations, as "inout = in op inout" on one element of `Ints` ints. Each also
 * serves as the reference the results are checked against. */

/* Commutative and associative, but no predefined op: each application adds one, so reducing p
 * values gives their sum plus p-1, in any order. */
static void plus_one(const int* in, int* inout) { *inout = *in + *inout + 1; }

/* Not commutative: 2x2 integer matrices, row major; inout = in * inout. */
static void matrix_product(const int* in, int* inout) {
  int p[4] = {in[0] * inout[0] + in[1] * inout[2], in[0] * inout[1] + in[1] * inout[3],
              in[2] * inout[0] + in[3] * inout[2], in[2] * inout[1] + in[3] * inout[3]};
  std::copy(p, p + 4, inout);
}

template <void (*Fold)(const int*, int*), int Ints>
static void user_op(const void* in, void* inout, int len, const MPI::Datatype& type) {
  ++g_op_calls;
  if (type != g_op_type) ++g_op_wrong_type;
  for (int k = 0; k < len; ++k) {
    Fold(static_cast<const int*>(in) + k * Ints, static_cast<int*>(inout) + k * Ints);
  }
}

struct UserOpCase {
  const char* name;
  MPI::User_function* fn;
  bool commute;
  void (*fold)(const int*, int*);
  int ints;  // per element
};

/* Rank r's element i: for the matrices [[r+i+1, 1], [1, 0]], whose products depend on order. */
static void user_element(const UserOpCase& c, int r, int i, int* out) {
  if (c.ints == 1) {
    *out = contrib(r, i);
  } else {
    int m[4] = {r + i + 1, 1, 1, 0};
    std::copy(m, m + 4, out);
  }
}

static void test_user_ops() {
  const UserOpCase cases[] = {
      {"plus_one", user_op<plus_one, 1>, true, plus_one, 1},
      {"matrix_product", user_op<matrix_product, 4>, false, matrix_product, 4},
  };
  const int n = 3;
  for (const UserOpCase& c : cases) {
    MPI::Datatype type = c.ints == 1 ? MPI::INT : MPI::INT.Create_contiguous(c.ints);
    if (c.ints > 1) type.Commit();
    MPI::Op op;
    op.Init(c.fn, c.commute);
    check(op.Is_commutative() == c.commute, strf("Op::Init %s: Is_commutative", c.name).c_str(),
          "%d", op.Is_commutative());

    // Rank order: a_0 op (a_1 op (... op a_{p-1})).
    std::vector<int> mine(n * c.ints), want(n * c.ints), other(c.ints);
    for (int i = 0; i < n; ++i) {
      user_element(c, g_rank, i, &mine[i * c.ints]);
      user_element(c, g_size - 1, i, &want[i * c.ints]);
      for (int r = g_size - 2; r >= 0; --r) {
        user_element(c, r, i, other.data());
        c.fold(other.data(), &want[i * c.ints]);
      }
    }

    g_op_calls = g_op_wrong_type = 0;
    g_op_type = type;
    for (int root = 0; root < g_size; ++root) {
      std::vector<int> out(mine.size(), -100);
      MPI::COMM_WORLD.Reduce(mine.data(), out.data(), n, type, op, root);
      if (g_rank == root) check_equal(strf("Reduce %s root %d", c.name, root), out, want);
    }
    std::vector<int> out(mine.size(), -100);
    MPI::COMM_WORLD.Allreduce(mine.data(), out.data(), n, type, op);
    check_equal(strf("Allreduce %s", c.name), out, want);
    out = mine;
    MPI::COMM_WORLD.Allreduce(MPI::IN_PLACE, out.data(), n, type, op);
    check_equal(strf("Allreduce %s IN_PLACE", c.name), out, want);
    // With one rank there is nothing to combine; with more, somebody must have called the op.
    int calls = 0;
    MPI::COMM_WORLD.Allreduce(&g_op_calls, &calls, 1, MPI::INT, MPI::SUM);
    check(g_op_wrong_type == 0 && (g_size == 1 || calls > 0),
          strf("%s called with the reduction's datatype", c.name).c_str(),
          "%d calls in all, %d here with another datatype", calls, g_op_wrong_type);

    // Reduce_local(in, inout): inout = in op inout, with the left operand from `in`.
    std::vector<int> a(n * c.ints), b(n * c.ints), expect(n * c.ints);
    for (int i = 0; i < n; ++i) {
      user_element(c, g_rank + 1, i, &a[i * c.ints]);
      user_element(c, g_rank + 2, 2 * i, &b[i * c.ints]);
    }
    expect = b;
    for (int i = 0; i < n; ++i) c.fold(&a[i * c.ints], &expect[i * c.ints]);
    g_op_calls = g_op_wrong_type = 0;
    op.Reduce_local(a.data(), b.data(), n, type);
    check_equal(strf("Op::Reduce_local %s", c.name), b, expect);
    check(g_op_calls == 1 && g_op_wrong_type == 0,
          strf("Op::Reduce_local %s: one call with its datatype", c.name).c_str(),
          "%d calls, %d with another datatype", g_op_calls, g_op_wrong_type);

    op.Free();
    check(op == MPI::OP_NULL, strf("Op::Free %s", c.name).c_str(), "the handle is not OP_NULL");
    if (c.ints > 1) type.Free();
  }
}

/* --- Communicators and groups. */

static void test_comms() {
  const MPI::Intracomm& world = MPI::COMM_WORLD;
  check(MPI::Comm::Compare(world, world) == MPI::IDENT, "Compare(COMM_WORLD, COMM_WORLD)",
        "not IDENT");

  MPI::Intracomm dup = world.Dup();
  check(MPI::Comm::Compare(world, dup) == MPI::CONGRUENT && dup.Get_rank() == g_rank &&
            dup.Get_size() == g_size,
        "Dup: CONGRUENT, same rank and size", "compare %d, rank %d of %d",
        MPI::Comm::Compare(world, dup), dup.Get_rank(), dup.Get_size());
  dup.Free();
  check(dup == MPI::COMM_NULL, "Free sets COMM_NULL", "the handle is not COMM_NULL");

  MPI::Intracomm& clone = world.Clone();
  int sum = 0;
  clone.Allreduce(&g_rank, &sum, 1, MPI::INT, MPI::SUM);
  check(MPI::Comm::Compare(world, clone) == MPI::CONGRUENT && sum == g_size * (g_size - 1) / 2,
        "Clone: CONGRUENT and usable", "compare %d, sum of ranks %d",
        MPI::Comm::Compare(world, clone), sum);
  clone.Free();
  delete &clone;

  // Split by parity with the ranks reversed: even ranks 0, 2 become ranks 1, 0 of theirs.
  MPI::Intracomm half = world.Split(g_rank % 2, -g_rank);
  int mates = (g_size - g_rank % 2 + 1) / 2, above = 0, want_sum = 0;
  for (int r = g_rank % 2; r < g_size; r += 2) {
    want_sum += r;
    above += r > g_rank;
  }
  sum = -1;
  half.Allreduce(&g_rank, &sum, 1, MPI::INT, MPI::SUM);
  check(half.Get_size() == mates && half.Get_rank() == above && sum == want_sum,
        "Split by parity, key -rank", "rank %d of %d (expected %d of %d), sum %d (expected %d)",
        half.Get_rank(), half.Get_size(), above, mates, sum, want_sum);
  half.Free();

  MPI::Intracomm reversed = world.Split(0, -g_rank);
  int cmp = MPI::Comm::Compare(world, reversed);
  check(cmp == (g_size > 1 ? MPI::SIMILAR : MPI::CONGRUENT), "Compare with the reversed split",
        "%d", cmp);
  reversed.Free();

  MPI::Group group = world.Get_group();
  std::vector<int> ranks(g_size), backwards(g_size), got(g_size, -1);
  for (int r = 0; r < g_size; ++r) {
    ranks[r] = r;
    backwards[r] = g_size - 1 - r;
  }
  MPI::Group rev = group.Incl(g_size, backwards.data());
  check(group.Get_size() == g_size && group.Get_rank() == g_rank && rev.Get_size() == g_size &&
            rev.Get_rank() == g_size - 1 - g_rank,
        "Get_group, Group::Incl reversed", "rank %d in the reversed group", rev.Get_rank());
  MPI::Group::Translate_ranks(group, g_size, ranks.data(), rev, got.data());
  check_equal(std::string("Group::Translate_ranks"), got, backwards);
  check(MPI::Group::Compare(group, rev) == (g_size > 1 ? MPI::SIMILAR : MPI::IDENT),
        "Group::Compare with the reversed group", "%d", MPI::Group::Compare(group, rev));
  rev.Free();
  group.Free();
  check(group == MPI::GROUP_NULL, "Group::Free sets GROUP_NULL", "it does not");
}

/* --- Attributes with C++ callbacks. */

struct AttrLog {
  int copies, deletes;
  MPI_Comm copied_from, deleted_on;  // the communicator the last callback was given
  intptr_t deleted_value;
  int wrong_extra;  // callbacks that got another extra_state than the keyval's
};
static AttrLog g_attr;

static void* as_attr(intptr_t v) { return reinterpret_cast<void*>(v); }

/* Copies value v as v+1. */
static int copy_plus_one(const MPI::Comm& oldcomm, int, void* extra, void* in, void* out,
                         bool& flag) {
  ++g_attr.copies;
  g_attr.wrong_extra += extra != &g_attr;
  g_attr.copied_from = oldcomm;
  *static_cast<void**>(out) = as_attr(reinterpret_cast<intptr_t>(in) + 1);
  flag = true;
  return MPI::SUCCESS;
}

static int record_delete(MPI::Comm& comm, int, void* value, void* extra) {
  ++g_attr.deletes;
  g_attr.wrong_extra += extra != &g_attr;
  g_attr.deleted_on = comm;
  g_attr.deleted_value = reinterpret_cast<intptr_t>(value);
  return MPI::SUCCESS;
}

/* The attribute's value, or -1 if `comm` has none. */
static intptr_t attr_of(const MPI::Comm& comm, int keyval) {
  void* value = nullptr;
  return comm.Get_attr(keyval, &value) ? reinterpret_cast<intptr_t>(value) : -1;
}

static void test_attributes() {
  const MPI::Intracomm& world = MPI::COMM_WORLD;
  g_attr = AttrLog();
  int kv = MPI::Comm::Create_keyval(copy_plus_one, record_delete, &g_attr);
  MPI::Intracomm a = world.Dup();
  MPI_Comm a_handle = a;
  a.Set_attr(kv, as_attr(42));
  check(attr_of(a, kv) == 42, "C++ keyval: Set_attr, Get_attr", "value %ld", long(attr_of(a, kv)));

  MPI::Intracomm b = a.Dup();
  MPI_Comm b_handle = b;
  check(g_attr.copies == 1 && g_attr.copied_from == a_handle && attr_of(b, kv) == 43 &&
            attr_of(a, kv) == 42,
        "C++ copy callback on Dup", "%d copies, from the source: %d, values %ld and %ld",
        g_attr.copies, g_attr.copied_from == a_handle, long(attr_of(a, kv)), long(attr_of(b, kv)));

  a.Set_attr(kv, as_attr(50));
  check(g_attr.deletes == 1 && g_attr.deleted_value == 42 && g_attr.deleted_on == a_handle,
        "C++ delete callback on replacing Set_attr", "%d deletes, last of %ld", g_attr.deletes,
        long(g_attr.deleted_value));
  b.Delete_attr(kv);
  check(g_attr.deletes == 2 && g_attr.deleted_value == 43 && g_attr.deleted_on == b_handle &&
            attr_of(b, kv) == -1,
        "C++ delete callback on Delete_attr", "%d deletes, last of %ld, still there: %d",
        g_attr.deletes, long(g_attr.deleted_value), attr_of(b, kv) != -1);
  a.Free();
  b.Free();
  check(g_attr.deletes == 3 && g_attr.deleted_value == 50 && g_attr.deleted_on == a_handle,
        "C++ delete callback on Free", "%d deletes, last of %ld", g_attr.deletes,
        long(g_attr.deleted_value));
  MPI::Comm::Free_keyval(kv);
  check(kv == MPI::KEYVAL_INVALID && g_attr.wrong_extra == 0, "Free_keyval, extra_state passed",
        "keyval %d, %d callbacks with a wrong extra_state", kv, g_attr.wrong_extra);

  kv = MPI::Comm::Create_keyval(MPI::Comm::NULL_COPY_FN, MPI::Comm::NULL_DELETE_FN, nullptr);
  a = world.Dup();
  a.Set_attr(kv, as_attr(7));
  b = a.Dup();
  check(attr_of(a, kv) == 7 && attr_of(b, kv) == -1, "NULL_COPY_FN: Dup leaves it out",
        "values %ld and %ld", long(attr_of(a, kv)), long(attr_of(b, kv)));
  a.Delete_attr(kv);
  check(attr_of(a, kv) == -1, "NULL_DELETE_FN: Delete_attr", "still there");
  a.Free();
  b.Free();
  MPI::Comm::Free_keyval(kv);

  g_attr = AttrLog();
  kv = MPI::Comm::Create_keyval(MPI::Comm::DUP_FN, record_delete, &g_attr);
  a = world.Dup();
  a.Set_attr(kv, as_attr(9));
  b = a.Dup();
  check(attr_of(b, kv) == 9, "DUP_FN: Dup copies the value", "value %ld", long(attr_of(b, kv)));
  a.Free();
  b.Free();
  check(g_attr.deletes == 2 && g_attr.deleted_value == 9, "DUP_FN: both copies deleted on Free",
        "%d deletes, last of %ld", g_attr.deletes, long(g_attr.deleted_value));
  MPI::Comm::Free_keyval(kv);
}

/* --- Derived datatypes. */

struct Pair {
  int i;
  double d;
};

static void check_type(const char* what, MPI::Datatype& t, int size, MPI::Aint extent) {
  t.Commit();
  MPI::Aint lb = -1, ext = -1;
  t.Get_extent(lb, ext);
  check(t.Get_size() == size && lb == 0 && ext == extent, what,
        "size %d, lb %ld, extent %ld; expected %d, 0, %ld", t.Get_size(), long(lb), long(ext), size,
        long(extent));
}

static void test_datatypes() {
  MPI::Datatype contig = MPI::INT.Create_contiguous(3);
  check_type("Create_contiguous(3) of INT", contig, 12, 12);

  // Three blocks of two ints, four ints apart: ints 0 1, 4 5, 8 9.
  MPI::Datatype vec = MPI::INT.Create_vector(3, 2, 4);
  check_type("Create_vector(3, 2, 4) of INT", vec, 24, 40);
  std::vector<int> src(12), got(6, -1);
  for (int i = 0; i < 12; ++i) src[i] = i;
  MPI::Status st;
  MPI::COMM_WORLD.Sendrecv(src.data(), 1, vec, g_rank, 50, got.data(), 6, MPI::INT, g_rank, 50, st);
  check_equal(std::string("vector type: the strided ints"), got,
              std::vector<int>{0, 1, 4, 5, 8, 9});

  const int lengths[2] = {1, 1};
  const MPI::Aint displs[2] = {offsetof(Pair, i), offsetof(Pair, d)};
  const MPI::Datatype types[2] = {MPI::INT, MPI::DOUBLE};
  MPI::Datatype pair = MPI::Datatype::Create_struct(2, lengths, displs, types);
  check_type("Create_struct {INT, DOUBLE}", pair, int(sizeof(int) + sizeof(double)),
             MPI::Aint(sizeof(Pair)));
  Pair out[2] = {{g_rank, 2.5}, {-g_rank, -7.0}}, in[2] = {{0, 0}, {0, 0}};
  MPI::COMM_WORLD.Sendrecv(out, 2, pair, g_rank, 51, in, 2, pair, g_rank, 51, st);
  check(in[0].i == out[0].i && in[0].d == out[0].d && in[1].i == out[1].i && in[1].d == out[1].d &&
            st.Get_count(pair) == 2,
        "struct type: two elements", "got {%d, %g} {%d, %g}, count %d", in[0].i, in[0].d, in[1].i,
        in[1].d, st.Get_count(pair));

  for (MPI::Datatype* t : {&contig, &vec, &pair}) t->Free();
  check(contig == MPI::DATATYPE_NULL && vec == MPI::DATATYPE_NULL && pair == MPI::DATATYPE_NULL,
        "Datatype::Free sets DATATYPE_NULL", "it does not");
}

/* --- Error handlers. */

static const char kNoExceptions[] =
    "MPI 2 C++ exception throwing is disabled, MPI::mpi_errno has the error code\n";

struct HandlerLog {
  int calls, code, rank;
  MPI_Comm comm;
};
static HandlerLog g_handler;

static void record_error(MPI::Comm& comm, int* code, ...) {
  ++g_handler.calls;
  g_handler.code = *code;
  g_handler.comm = comm;
  g_handler.rank = comm.Get_rank();  // the communicator given to the handler is usable
}

static int error_class(int code) { return MPI::Get_error_class(code); }

/* Runs call() with descriptor 2 on a temporary file (libmpi_cxx writes with fprintf(stderr)) and
 * returns what it wrote. */
template <class F>
static std::string capture_stderr(F call) {
  fflush(stderr);
  FILE* tmp = tmpfile();
  if (tmp == nullptr) {
    call();
    return "(no temporary file to capture stderr)";
  }
  int saved = dup(2);
  dup2(fileno(tmp), 2);
  call();
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(tmp);
  std::string text;
  char chunk[256];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, tmp)) > 0) text.append(chunk, n);
  fclose(tmp);
  return text;
}

static void test_errhandlers() {
  MPI::Intracomm& world = MPI::COMM_WORLD;
  int x = 1;
  world.Set_errhandler(MPI::ERRORS_RETURN);
  MPI::Errhandler eh = world.Get_errhandler();
  check(eh == MPI::ERRORS_RETURN, "Get_errhandler is ERRORS_RETURN", "another handler");
  eh.Free();
  world.Send(&x, 1, MPI::INT, g_size, 0);
  check(true, "ERRORS_RETURN: Send to rank size returns", "");
  int rc = MPI_Send(&x, 1, MPI_INT, g_size, 0, world);
  check(rc != MPI_SUCCESS && error_class(rc) == MPI::ERR_RANK,
        "ERRORS_RETURN: the C call on COMM_WORLD gives ERR_RANK", "returned %d", rc);

  MPI::Intracomm dup = world.Dup();
  MPI_Comm dup_handle = dup;
  eh = MPI::Comm::Create_errhandler(record_error);
  dup.Set_errhandler(eh);
  g_handler = HandlerLog();
  dup.Send(&x, 1, MPI::INT, g_size, 0);
  check(g_handler.calls == 1 && error_class(g_handler.code) == MPI::ERR_RANK &&
            g_handler.comm == dup_handle && g_handler.rank == g_rank,
        "C++ handler called by a bad Send", "%d calls, code %d (class %d), right comm %d, rank %d",
        g_handler.calls, g_handler.code, error_class(g_handler.code), g_handler.comm == dup_handle,
        g_handler.rank);
  dup.Call_errhandler(MPI::ERR_ARG);
  check(g_handler.calls == 2 && g_handler.code == MPI::ERR_ARG && g_handler.comm == dup_handle,
        "C++ handler called by Call_errhandler", "%d calls, code %d", g_handler.calls,
        g_handler.code);
  world.Send(&x, 1, MPI::INT, g_size, 0);
  check(g_handler.calls == 2, "C++ handler not called for COMM_WORLD", "%d calls", g_handler.calls);
  eh.Free();
  dup.Free();

  // Open MPI's libmpi_cxx has no exceptions: the handler prints a line, sets MPI::mpi_errno.
  dup = world.Dup();
  dup.Set_errhandler(MPI::ERRORS_THROW_EXCEPTIONS);
  eh = dup.Get_errhandler();
  check(eh == MPI::ERRORS_THROW_EXCEPTIONS, "Get_errhandler is ERRORS_THROW_EXCEPTIONS",
        "another handler");
  eh.Free();
  MPI::mpi_errno = MPI::SUCCESS;
  std::string said = capture_stderr([&] { dup.Send(&x, 1, MPI::INT, g_size, 0); });
  check(said == kNoExceptions && error_class(MPI::mpi_errno) == MPI::ERR_RANK,
        "ERRORS_THROW_EXCEPTIONS: bad Send sets mpi_errno",
        "mpi_errno %d (class %d), stderr \"%s\"", MPI::mpi_errno, error_class(MPI::mpi_errno),
        said.c_str());
  MPI::mpi_errno = MPI::SUCCESS;
  said = capture_stderr([&] { dup.Call_errhandler(MPI::ERR_ARG); });
  check(said == kNoExceptions && MPI::mpi_errno == MPI::ERR_ARG,
        "ERRORS_THROW_EXCEPTIONS: Call_errhandler sets mpi_errno", "mpi_errno %d, stderr \"%s\"",
        MPI::mpi_errno, said.c_str());
  int sum = 0;
  dup.Allreduce(&x, &sum, 1, MPI::INT, MPI::SUM);
  check(sum == g_size, "ERRORS_THROW_EXCEPTIONS: the communicator works on", "sum %d", sum);
  dup.Free();
}

int main(int argc, char** argv) {
  // One write per line, so the ranks' lines reach the launcher's output whole.
  setvbuf(stdout, nullptr, _IOLBF, 0);
  bool initialized_before = MPI::Is_initialized();
  MPI::Init(argc, argv);
  g_rank = MPI::COMM_WORLD.Get_rank();
  g_size = MPI::COMM_WORLD.Get_size();

  test_environment(initialized_before);
  test_p2p();
  test_collectives<int>(MPI::INT, "INT");
  test_collectives<double>(MPI::DOUBLE, "DOUBLE");
  test_user_ops();
  test_comms();
  test_attributes();
  test_datatypes();
  test_errhandlers();

  MPI::COMM_WORLD.Barrier();
  check(true, "Barrier", "");
  int status = check_done(g_size);
  MPI::Finalize();
  return status;
}
