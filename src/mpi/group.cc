// Groups: MPI_Comm_group, the queries (size, rank, translate_ranks, compare), the constructors
// (union, intersection, difference, incl, excl, range_incl, range_excl) and MPI_Group_free.
// A group is a list of job ranks; set operations index the job's ranks once (O(job size)), which
// keeps them linear however large the groups are.
#include "mpi/group.h"

#include <algorithm>
#include <new>
#include <vector>

#include "core/progress.h"
#include "mpi/errors.h"
#include "mpi/fortran.h"

namespace torusmpi::mpi {
namespace {

// Never destroyed, like the request pool: a stale handle keeps pointing at a group object.
std::vector<Group*>& g_free_groups = *new std::vector<Group*>;

// MPI_GROUP_EMPTY's group: its handle is the predefined object, so it has none of its own.
Group g_empty_group;

}  // namespace

Group* group_impl(MPI_Group g) {
  if (g == MPI_GROUP_EMPTY) return &g_empty_group;
  if (g == nullptr || g == MPI_GROUP_NULL || g->magic != kMagicGroup) return nullptr;
  return static_cast<Group*>(g->impl);
}

MPI_Group group_new(std::vector<int> ranks) {
  if (ranks.empty()) return MPI_GROUP_EMPTY;
  Group* g;
  if (g_free_groups.empty()) {
    g = new Group;
  } else {
    g = g_free_groups.back();
    g_free_groups.pop_back();
  }
  g->handle.magic = kMagicGroup;
  g->handle.impl = g;
  g->ranks = std::move(ranks);
  g->rank = MPI_UNDEFINED;
  const int me = runtime().job.rank;
  for (size_t i = 0; i < g->ranks.size(); ++i) {
    if (g->ranks[i] == me) g->rank = static_cast<int>(i);
  }
  g->handle.grp_proc_count = static_cast<int32_t>(g->ranks.size());
  g->handle.grp_my_rank = g->rank;
  // Now, not when first converted: libmpi_mpifh reads the number of a group it has just made.
  fortran_number(HandleKind::kGroup, &g->handle);
  return &g->handle;
}

void group_release(MPI_Group h) {
  Group* g = group_impl(h);
  if (g == nullptr || g == &g_empty_group) return;
  g->handle.magic = kMagicFreed;
  fortran_forget(HandleKind::kGroup, &g->handle);
  g->ranks.clear();
  g->ranks.shrink_to_fit();
  g_free_groups.push_back(g);
}

std::vector<int> comm_members(const Comm& c) {
  std::vector<int> out(c.size);
  for (int r = 0; r < c.size; ++r) out[r] = c.world_rank(r);
  return out;
}

}  // namespace torusmpi::mpi

using torusmpi::mpi::Comm;
using torusmpi::mpi::Group;
using torusmpi::mpi::group_impl;
using torusmpi::mpi::group_new;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;
using torusmpi::mpi::runtime;

namespace {

// Resolves a group argument or raises MPI_ERR_GROUP (groups have no error handler of their own:
// MPI_COMM_WORLD's takes it).
#define TORUSMPI_RESOLVE_GROUP(var, group, fn, what)                                        \
  Group* var = group_impl(group);                                                           \
  if (var == nullptr) {                                                                     \
    return raise_error(nullptr, MPI_ERR_GROUP, fn, "%s argument is %s", what,               \
                       (group) == MPI_GROUP_NULL ? "MPI_GROUP_NULL" : "not a valid group"); \
  }

// Position of each job rank in g (-1: not a member), as a table over the job.
std::vector<int> positions(const Group& g) {
  std::vector<int> at(torusmpi::pml::peer_count(), -1);  // job ranks, then processes of other jobs
  for (size_t i = 0; i < g.ranks.size(); ++i) at[g.ranks[i]] = static_cast<int>(i);
  return at;
}

int size_of(const Group& g) { return static_cast<int>(g.ranks.size()); }

// The ranks of g listed in `which` (n of them), each a rank of g and none twice; `what` names
// the argument. MPI_ERR_RANK otherwise.
int checked_ranks(const char* fn, const Group& g, int n, const int* which, const char* what,
                  std::vector<int>* out) {
  std::vector<char> seen(g.ranks.size(), 0);
  for (int i = 0; i < n; ++i) {
    int r = which[i];
    if (r < 0 || r >= size_of(g)) {
      return raise_error(nullptr, MPI_ERR_RANK, fn,
                         "%s[%d] is %d, not a rank of the group (size %d)", what, i, r, size_of(g));
    }
    if (seen[r]) {
      return raise_error(nullptr, MPI_ERR_RANK, fn, "%s[%d] is %d, which %s names twice", what, i,
                         r, what);
    }
    seen[r] = 1;
    out->push_back(r);
  }
  return MPI_SUCCESS;
}

// The ranks the triplets of MPI_Group_range_incl/excl name, in order, checked like
// checked_ranks; a stride of 0 is MPI_ERR_ARG.
int range_ranks(const char* fn, const Group& g, int n, int ranges[][3], std::vector<int>* out) {
  std::vector<int> listed;
  for (int i = 0; i < n; ++i) {
    const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0) {
      return raise_error(nullptr, MPI_ERR_ARG, fn, "ranges[%d] has stride 0", i);
    }
    for (int end : {first, last}) {
      if (end < 0 || end >= size_of(g)) {
        return raise_error(
            nullptr, MPI_ERR_RANK, fn,
            "ranges[%d] = {%d, %d, %d} reaches %d, not a rank of the group (size %d)", i, first,
            last, stride, end, size_of(g));
      }
    }
    // first, first + stride, ... while not past last; none when the stride leads away from it.
    for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      listed.push_back(static_cast<int>(r));
    }
  }
  return checked_ranks(fn, g, static_cast<int>(listed.size()), listed.data(), "ranges", out);
}

int check_count(const char* fn, int n, const void* array, const char* what, int limit) {
  if (n < 0) return raise_error(nullptr, MPI_ERR_ARG, fn, "n argument is %d", n);
  if (n > limit) {
    return raise_error(nullptr, MPI_ERR_ARG, fn, "n argument is %d, more than the group's %d ranks",
                       n, limit);
  }
  if (n > 0 && array == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, fn, "%s argument is NULL", what);
  return MPI_SUCCESS;
}

int check_out(const char* fn, const void* p, const char* what) {
  if (p != nullptr) return MPI_SUCCESS;
  return raise_error(nullptr, MPI_ERR_ARG, fn, "%s argument is NULL", what);
}

// g's members at the given ranks, as a new group.
MPI_Group subset(const Group& g, const std::vector<int>& ranks) {
  std::vector<int> members;
  members.reserve(ranks.size());
  for (int r : ranks) members.push_back(g.ranks[r]);
  return group_new(std::move(members));
}

// The ranks of g not in `drop`.
std::vector<int> complement(const Group& g, const std::vector<int>& drop) {
  std::vector<char> out(g.ranks.size(), 0);
  for (int r : drop) out[r] = 1;
  std::vector<int> keep;
  for (int r = 0; r < size_of(g); ++r) {
    if (!out[r]) keep.push_back(r);
  }
  return keep;
}

enum class SetOp { kUnion, kIntersection, kDifference };

int set_op(const char* fn, MPI_Group group1, MPI_Group group2, MPI_Group* newgroup, SetOp op) {
  if (int err = require_active(fn)) return err;
  TORUSMPI_RESOLVE_GROUP(g1, group1, fn, "group1");
  TORUSMPI_RESOLVE_GROUP(g2, group2, fn, "group2");
  if (int err = check_out(fn, newgroup, "newgroup")) return err;
  std::vector<int> in2 = positions(*g2);
  std::vector<int> members;
  // MPI's orders: group1's members first in group1's order (union: then group2's others in
  // group2's order); intersection and difference keep group1's order.
  for (int j : g1->ranks) {
    bool both = in2[j] >= 0;
    if (op == SetOp::kUnion || (op == SetOp::kIntersection) == both) members.push_back(j);
  }
  if (op == SetOp::kUnion) {
    std::vector<int> in1 = positions(*g1);
    for (int j : g2->ranks) {
      if (in1[j] < 0) members.push_back(j);
    }
  }
  *newgroup = group_new(std::move(members));
  return MPI_SUCCESS;
}

}  // namespace

int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_group";
  if (int err = require_active(kFn)) return err;
  Comm* c = torusmpi::mpi::comm_impl(comm);
  if (c == nullptr) {
    return raise_error(nullptr, MPI_ERR_COMM, kFn, "comm argument is %s",
                       comm == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not a valid communicator");
  }
  if (group == nullptr) return raise_error(comm, MPI_ERR_ARG, kFn, "group argument is NULL");
  *group = group_new(torusmpi::mpi::comm_members(*c));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_group);

int PMPI_Group_size(MPI_Group group, int* size) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Group_size";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_GROUP(g, group, kFn, "group");
  if (int err = check_out(kFn, size, "size")) return err;
  *size = size_of(*g);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Group_size);

int PMPI_Group_rank(MPI_Group group, int* rank) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Group_rank";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_GROUP(g, group, kFn, "group");
  if (int err = check_out(kFn, rank, "rank")) return err;
  *rank = g->rank;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Group_rank);

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[]) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Group_translate_ranks";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_GROUP(g1, group1, kFn, "group1");
  TORUSMPI_RESOLVE_GROUP(g2, group2, kFn, "group2");
  if (n < 0) return raise_error(nullptr, MPI_ERR_ARG, kFn, "n argument is %d", n);
  if (n > 0 && ranks1 == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "ranks1 argument is NULL");
  if (n > 0 && ranks2 == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "ranks2 argument is NULL");
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= size_of(*g1))) {
      return raise_error(nullptr, MPI_ERR_RANK, kFn,
                         "ranks1[%d] is %d, not a rank of group1 (size %d) nor MPI_PROC_NULL", i,
                         ranks1[i], size_of(*g1));
    }
  }
  std::vector<int> in2 = positions(*g2);
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
    } else {
      int at = in2[g1->ranks[ranks1[i]]];
      ranks2[i] = at >= 0 ? at : MPI_UNDEFINED;
    }
  }
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Group_translate_ranks);

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Group_compare";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_GROUP(g1, group1, kFn, "group1");
  TORUSMPI_RESOLVE_GROUP(g2, group2, kFn, "group2");
  if (int err = check_out(kFn, result, "result")) return err;
  if (g1->ranks == g2->ranks) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  std::vector<int> a = g1->ranks, b = g2->ranks;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  *result = a == b ? MPI_SIMILAR : MPI_UNEQUAL;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Group_compare);

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  torusmpi::progress::Lock lock;
  return set_op("MPI_Group_union", group1, group2, newgroup, SetOp::kUnion);
}
TORUSMPI_WEAK_ALIAS(MPI_Group_union);

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  torusmpi::progress::Lock lock;
  return set_op("MPI_Group_intersection", group1, group2, newgroup, SetOp::kIntersection);
}
TORUSMPI_WEAK_ALIAS(MPI_Group_intersection);

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  torusmpi::progress::Lock lock;
  return set_op("MPI_Group_difference", group1, group2, newgroup, SetOp::kDifference);
}
TORUSMPI_WEAK_ALIAS(MPI_Group_difference);

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Group_incl";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_GROUP(g, group, kFn, "group");
  if (int err = check_count(kFn, n, ranks, "ranks", size_of(*g))) return err;
  if (int err = check_out(kFn, newgroup, "newgroup")) return err;
  std::vector<int> which;
  if (int err = checked_ranks(kFn, *g, n, ranks, "ranks", &which)) return err;
  *newgroup = subset(*g, which);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Group_incl);

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Group_excl";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_GROUP(g, group, kFn, "group");
  if (int err = check_count(kFn, n, ranks, "ranks", size_of(*g))) return err;
  if (int err = check_out(kFn, newgroup, "newgroup")) return err;
  std::vector<int> which;
  if (int err = checked_ranks(kFn, *g, n, ranks, "ranks", &which)) return err;
  *newgroup = subset(*g, complement(*g, which));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Group_excl);

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Group_range_incl";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_GROUP(g, group, kFn, "group");
  if (int err = check_count(kFn, n, ranges, "ranges", size_of(*g))) return err;
  if (int err = check_out(kFn, newgroup, "newgroup")) return err;
  std::vector<int> which;
  if (int err = range_ranks(kFn, *g, n, ranges, &which)) return err;
  *newgroup = subset(*g, which);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Group_range_incl);

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Group_range_excl";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_GROUP(g, group, kFn, "group");
  if (int err = check_count(kFn, n, ranges, "ranges", size_of(*g))) return err;
  if (int err = check_out(kFn, newgroup, "newgroup")) return err;
  std::vector<int> which;
  if (int err = range_ranks(kFn, *g, n, ranges, &which)) return err;
  *newgroup = subset(*g, complement(*g, which));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Group_range_excl);

int PMPI_Group_free(MPI_Group* group) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Group_free";
  if (int err = require_active(kFn)) return err;
  if (group == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "group argument is NULL");
  TORUSMPI_RESOLVE_GROUP(g, *group, kFn, "group");
  (void)g;
  // MPI_GROUP_EMPTY may be freed like any group a constructor returned: it stays usable.
  torusmpi::mpi::group_release(*group);
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Group_free);
