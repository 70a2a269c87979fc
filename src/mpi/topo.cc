// Process topologies: Cartesian (MPI_Cart_*), graph (MPI_Graph_*) and distributed graph
// (MPI_Dist_graph_*), MPI_Dims_create and MPI_Topo_test.
//
// A topology is built on communicators made by MPI_Comm_split and MPI_Comm_dup, and hangs on its
// communicator as the attribute of an internal keyval: MPI_Comm_dup copies it (MPI says a
// duplicate keeps its topology) and MPI_Comm_free deletes it, through the keyval's callbacks.
// Ranks are never reordered (MPI allows an implementation to ignore `reorder`).
#include "mpi/topo.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/progress.h"
#include "mpi/errors.h"
#include "mpi/group.h"
#include "mpi/p2p.h"

namespace torusmpi::mpi {
namespace {

int copy_topology(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  *static_cast<Topology**>(out) = new Topology(*static_cast<Topology*>(in));
  *flag = 1;
  return MPI_SUCCESS;
}

int delete_topology(MPI_Comm, int, void* value, void*) {
  delete static_cast<Topology*>(value);
  return MPI_SUCCESS;
}

// Created when the first topology is made; lives as long as the process.
int g_topology_keyval = MPI_KEYVAL_INVALID;

int topology_keyval() {
  if (g_topology_keyval == MPI_KEYVAL_INVALID) {
    PMPI_Comm_create_keyval(copy_topology, delete_topology, &g_topology_keyval, nullptr);
  }
  return g_topology_keyval;
}

// Gives comm its topology (comm takes ownership).
int attach(MPI_Comm comm, Topology* t) {
  int err = PMPI_Comm_set_attr(comm, topology_keyval(), t);
  if (err != MPI_SUCCESS) {
    delete t;
    return err;
  }
  comm_sync_handle(comm_impl(comm));
  return MPI_SUCCESS;
}

// Raises on comm unless it has a topology of `kind` (MPI_UNDEFINED: any).
int check_topology(const char* fn, MPI_Comm comm, int kind, const Topology** out) {
  Comm* c;
  if (int err = check_comm(fn, comm, &c)) return err;
  *out = topology_of(comm);
  if (*out == nullptr) {
    return raise_error(comm, MPI_ERR_TOPOLOGY, fn, "comm argument (%s) has no topology",
                       c->name.c_str());
  }
  if (kind != MPI_UNDEFINED && (*out)->kind != kind) {
    const char* want = kind == MPI_CART ? "Cartesian" : kind == MPI_GRAPH ? "graph" : "dist graph";
    return raise_error(comm, MPI_ERR_TOPOLOGY, fn, "comm argument has no %s topology", want);
  }
  return MPI_SUCCESS;
}

int product(const std::vector<int>& v) {
  return std::accumulate(v.begin(), v.end(), 1, [](int a, int b) { return a * b; });
}

// Row-major coordinates of rank (the last dimension varies fastest), and back.
std::vector<int> coords_of(const Topology& t, int rank) {
  std::vector<int> c(t.dims.size());
  for (size_t i = t.dims.size(); i-- > 0;) {
    c[i] = rank % t.dims[i];
    rank /= t.dims[i];
  }
  return c;
}
int rank_of(const Topology& t, const std::vector<int>& c) {
  int r = 0;
  for (size_t i = 0; i < t.dims.size(); ++i) r = r * t.dims[i] + c[i];
  return r;
}

// The rank `disp` steps along dimension d from rank, or MPI_PROC_NULL past a non-periodic end.
int shifted(const Topology& t, int rank, int d, int disp) {
  std::vector<int> c = coords_of(t, rank);
  int x = c[d] + disp, n = t.dims[d];
  if (t.periods[d]) {
    x = ((x % n) + n) % n;
  } else if (x < 0 || x >= n) {
    return MPI_PROC_NULL;
  }
  c[d] = x;
  return rank_of(t, c);
}

// Cartesian neighbours in MPI's order: for each dimension, the negative then the positive one.
void cart_neighbors(Topology* t, int rank) {
  t->in.clear();
  t->send_order.clear();
  for (size_t d = 0; d < t->dims.size(); ++d) {
    int lo = shifted(*t, rank, static_cast<int>(d), -1);
    int hi = shifted(*t, rank, static_cast<int>(d), 1);
    t->in.push_back(lo);
    t->in.push_back(hi);
    int j = static_cast<int>(2 * d);
    // Both neighbours the same rank: it receives what goes to its negative neighbour (us, seen
    // from there our positive side) in its second slot, so send that block second.
    if (lo == hi && lo != MPI_PROC_NULL) {
      t->send_order.push_back(j + 1);
      t->send_order.push_back(j);
    } else {
      t->send_order.push_back(j);
      t->send_order.push_back(j + 1);
    }
  }
  t->out = t->in;
}

void identity_order(Topology* t) {
  t->send_order.resize(t->out.size());
  std::iota(t->send_order.begin(), t->send_order.end(), 0);
}

// The rank of this process in comm.
int rank_in(MPI_Comm comm) { return comm_impl(comm)->rank; }

// A communicator over the first n ranks of comm_old (MPI_COMM_NULL on the others), carrying t.
int make_topology_comm(const char* fn, MPI_Comm comm_old, int n, Topology* t, MPI_Comm* out) {
  Comm* c = comm_impl(comm_old);
  int color = c->rank < n ? 0 : MPI_UNDEFINED;
  int err = PMPI_Comm_split(comm_old, color, c->rank, out);
  if (err != MPI_SUCCESS || *out == MPI_COMM_NULL) {
    delete t;
    return err == MPI_SUCCESS ? MPI_SUCCESS : raise_error(comm_old, err, fn, "splitting failed");
  }
  if (t->kind == MPI_CART) {
    cart_neighbors(t, c->rank);
  } else if (t->kind == MPI_GRAPH) {
    int r = c->rank;
    t->in.assign(t->edges.begin() + (r == 0 ? 0 : t->index[r - 1]), t->edges.begin() + t->index[r]);
    t->out = t->in;
    identity_order(t);
  }
  return attach(*out, t);
}

int check_out_ptr(const char* fn, MPI_Comm comm, const void* p, const char* what) {
  if (p != nullptr) return MPI_SUCCESS;
  return raise_error(comm, MPI_ERR_ARG, fn, "%s argument is NULL", what);
}

}  // namespace

const Topology* topology_of(MPI_Comm comm) {
  void* value = nullptr;
  int flag = 0;
  // No keyval yet: no topology yet (and MPI_Init may be asking, before keyvals can be made).
  if (g_topology_keyval == MPI_KEYVAL_INVALID || comm_impl(comm) == nullptr ||
      PMPI_Comm_get_attr(comm, g_topology_keyval, &value, &flag) != MPI_SUCCESS || !flag)
    return nullptr;
  return static_cast<const Topology*>(value);
}

}  // namespace torusmpi::mpi

using torusmpi::mpi::check_out_ptr;
using torusmpi::mpi::Comm;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;
using torusmpi::mpi::Topology;
namespace mpi = torusmpi::mpi;

// Balanced factors: the free dimensions get nnodes / (the fixed ones' product), split as evenly as
// the prime factors allow, largest first.
int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Dims_create";
  if (int err = require_active(kFn)) return err;
  if (ndims < 0) return raise_error(nullptr, MPI_ERR_DIMS, kFn, "ndims argument is %d", ndims);
  if (ndims > 0 && dims == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, kFn, "dims argument is NULL");
  if (nnodes < 1) return raise_error(nullptr, MPI_ERR_ARG, kFn, "nnodes argument is %d", nnodes);
  int fixed = 1, free_dims = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] < 0) return raise_error(nullptr, MPI_ERR_DIMS, kFn, "dims[%d] is %d", i, dims[i]);
    if (dims[i] > 0) {
      fixed *= dims[i];
    } else {
      ++free_dims;
    }
  }
  if (nnodes % fixed != 0) {
    return raise_error(nullptr, MPI_ERR_DIMS, kFn,
                       "nnodes (%d) is not a multiple of the fixed dimensions' product (%d)",
                       nnodes, fixed);
  }
  int left = nnodes / fixed;
  if (free_dims == 0) {
    if (left != 1) {
      return raise_error(nullptr, MPI_ERR_DIMS, kFn,
                         "every dimension is fixed, but their product is %d, not nnodes (%d)",
                         fixed, nnodes);
    }
    return MPI_SUCCESS;
  }
  std::vector<int> factors;
  for (int f = 2; f * f <= left; ++f) {
    while (left % f == 0) factors.push_back(f), left /= f;
  }
  if (left > 1) factors.push_back(left);
  std::vector<int> out(free_dims, 1);
  // Largest factor first onto the smallest dimension so far: the most even split.
  for (auto f = factors.rbegin(); f != factors.rend(); ++f) {
    *std::min_element(out.begin(), out.end()) *= *f;
  }
  std::sort(out.rbegin(), out.rend());
  for (int i = 0, k = 0; i < ndims; ++i) {
    if (dims[i] == 0) dims[i] = out[k++];
  }
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Dims_create);

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm* comm_cart) {
  torusmpi::progress::Lock lock;
  (void)reorder;
  constexpr const char* kFn = "MPI_Cart_create";
  if (int err = require_active(kFn)) return err;
  Comm* c;
  if (int err = mpi::check_comm(kFn, comm_old, &c)) return err;
  if (ndims < 0) return raise_error(comm_old, MPI_ERR_DIMS, kFn, "ndims argument is %d", ndims);
  if (ndims > 0 && (dims == nullptr || periods == nullptr))
    return raise_error(comm_old, MPI_ERR_ARG, kFn, "dims or periods argument is NULL");
  if (int err = check_out_ptr(kFn, comm_old, comm_cart, "comm_cart")) return err;
  auto* t = new Topology;
  t->kind = MPI_CART;
  t->dims.assign(dims, dims + ndims);
  t->periods.assign(periods, periods + ndims);
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) {
      delete t;
      return raise_error(comm_old, MPI_ERR_DIMS, kFn, "dims[%d] is %d", i, dims[i]);
    }
    t->periods[i] = periods[i] != 0;
  }
  int n = mpi::product(t->dims);
  if (n > c->size) {
    delete t;
    return raise_error(comm_old, MPI_ERR_DIMS, kFn,
                       "the grid has %d places, more than the %d ranks of comm_old", n, c->size);
  }
  return mpi::make_topology_comm(kFn, comm_old, n, t, comm_cart);
}
TORUSMPI_WEAK_ALIAS(MPI_Cart_create);

int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Cartdim_get";
  if (int err = require_active(kFn)) return err;
  const Topology* t;
  if (int err = mpi::check_topology(kFn, comm, MPI_CART, &t)) return err;
  if (int err = check_out_ptr(kFn, comm, ndims, "ndims")) return err;
  *ndims = static_cast<int>(t->dims.size());
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Cartdim_get);

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Cart_get";
  if (int err = require_active(kFn)) return err;
  const Topology* t;
  if (int err = mpi::check_topology(kFn, comm, MPI_CART, &t)) return err;
  int n = static_cast<int>(t->dims.size());
  if (maxdims < n)
    return raise_error(comm, MPI_ERR_ARG, kFn, "maxdims (%d) is less than ndims (%d)", maxdims, n);
  if (n > 0 && (dims == nullptr || periods == nullptr || coords == nullptr))
    return raise_error(comm, MPI_ERR_ARG, kFn, "dims, periods or coords argument is NULL");
  std::vector<int> c = mpi::coords_of(*t, mpi::rank_in(comm));
  for (int i = 0; i < n; ++i) {
    dims[i] = t->dims[i];
    periods[i] = t->periods[i];
    coords[i] = c[i];
  }
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Cart_get);

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Cart_rank";
  if (int err = require_active(kFn)) return err;
  const Topology* t;
  if (int err = mpi::check_topology(kFn, comm, MPI_CART, &t)) return err;
  if (int err = check_out_ptr(kFn, comm, rank, "rank")) return err;
  size_t n = t->dims.size();
  if (n > 0 && coords == nullptr)
    return raise_error(comm, MPI_ERR_ARG, kFn, "coords argument is NULL");
  std::vector<int> c(n);
  for (size_t i = 0; i < n; ++i) {
    int x = coords[i], d = t->dims[i];
    if (t->periods[i]) {
      x = ((x % d) + d) % d;
    } else if (x < 0 || x >= d) {
      return raise_error(comm, MPI_ERR_ARG, kFn,
                         "coords[%zu] is %d, outside the non-periodic dimension of %d", i, x, d);
    }
    c[i] = x;
  }
  *rank = mpi::rank_of(*t, c);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Cart_rank);

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Cart_coords";
  if (int err = require_active(kFn)) return err;
  const Topology* t;
  if (int err = mpi::check_topology(kFn, comm, MPI_CART, &t)) return err;
  int n = static_cast<int>(t->dims.size());
  if (rank < 0 || rank >= mpi::product(t->dims))
    return raise_error(comm, MPI_ERR_RANK, kFn, "rank argument is %d", rank);
  if (maxdims < n)
    return raise_error(comm, MPI_ERR_ARG, kFn, "maxdims (%d) is less than ndims (%d)", maxdims, n);
  if (n > 0 && coords == nullptr)
    return raise_error(comm, MPI_ERR_ARG, kFn, "coords argument is NULL");
  std::vector<int> c = mpi::coords_of(*t, rank);
  std::copy(c.begin(), c.end(), coords);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Cart_coords);

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Cart_shift";
  if (int err = require_active(kFn)) return err;
  const Topology* t;
  if (int err = mpi::check_topology(kFn, comm, MPI_CART, &t)) return err;
  if (direction < 0 || direction >= static_cast<int>(t->dims.size()))
    return raise_error(comm, MPI_ERR_ARG, kFn, "direction argument is %d", direction);
  if (rank_source == nullptr || rank_dest == nullptr)
    return raise_error(comm, MPI_ERR_ARG, kFn, "rank_source or rank_dest argument is NULL");
  int me = mpi::rank_in(comm);
  *rank_source = mpi::shifted(*t, me, direction, -disp);
  *rank_dest = mpi::shifted(*t, me, direction, disp);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Cart_shift);

// The kept dimensions' sub-grids: ranks that agree on every dropped coordinate share one.
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Cart_sub";
  if (int err = require_active(kFn)) return err;
  const Topology* t;
  if (int err = mpi::check_topology(kFn, comm, MPI_CART, &t)) return err;
  if (int err = check_out_ptr(kFn, comm, newcomm, "newcomm")) return err;
  size_t n = t->dims.size();
  if (n > 0 && remain_dims == nullptr)
    return raise_error(comm, MPI_ERR_ARG, kFn, "remain_dims argument is NULL");
  int me = mpi::rank_in(comm);
  std::vector<int> c = mpi::coords_of(*t, me);
  auto* sub = new Topology;
  sub->kind = MPI_CART;
  int color = 0, key = 0;
  for (size_t i = 0; i < n; ++i) {
    if (remain_dims[i]) {
      sub->dims.push_back(t->dims[i]);
      sub->periods.push_back(t->periods[i]);
      key = key * t->dims[i] + c[i];
    } else {
      color = color * t->dims[i] + c[i];
    }
  }
  int err = PMPI_Comm_split(comm, color, key, newcomm);
  if (err != MPI_SUCCESS) {
    delete sub;
    return err;
  }
  mpi::cart_neighbors(sub, key);
  return mpi::attach(*newcomm, sub);
}
TORUSMPI_WEAK_ALIAS(MPI_Cart_sub);

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank) {
  torusmpi::progress::Lock lock;
  (void)periods;
  constexpr const char* kFn = "MPI_Cart_map";
  if (int err = require_active(kFn)) return err;
  Comm* c;
  if (int err = mpi::check_comm(kFn, comm, &c)) return err;
  if (ndims < 0 || (ndims > 0 && dims == nullptr))
    return raise_error(comm, MPI_ERR_DIMS, kFn, "ndims or dims argument is bad");
  if (int err = check_out_ptr(kFn, comm, newrank, "newrank")) return err;
  int n = mpi::product(std::vector<int>(dims, dims + ndims));
  if (n > c->size)
    return raise_error(comm, MPI_ERR_DIMS, kFn, "the grid has %d places, more than %d ranks", n,
                       c->size);
  *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Cart_map);

namespace {

// MPI_Graph_create's description: index[i] is the number of edges of nodes 0..i.
int check_graph(const char* fn, MPI_Comm comm, int nnodes, const int index[], const int edges[],
                int size) {
  if (nnodes < 0 || nnodes > size) {
    return raise_error(comm, MPI_ERR_ARG, fn, "nnodes argument is %d (comm has %d ranks)", nnodes,
                       size);
  }
  if (nnodes > 0 && index == nullptr)
    return raise_error(comm, MPI_ERR_ARG, fn, "index argument is NULL");
  for (int i = 0; i < nnodes; ++i) {
    if (index[i] < (i == 0 ? 0 : index[i - 1]))
      return raise_error(comm, MPI_ERR_ARG, fn, "index[%d] is %d, less than before", i, index[i]);
  }
  int nedges = nnodes > 0 ? index[nnodes - 1] : 0;
  if (nedges > 0 && edges == nullptr)
    return raise_error(comm, MPI_ERR_ARG, fn, "edges argument is NULL");
  for (int e = 0; e < nedges; ++e) {
    if (edges[e] < 0 || edges[e] >= nnodes)
      return raise_error(comm, MPI_ERR_ARG, fn, "edges[%d] is %d, not a node", e, edges[e]);
  }
  return MPI_SUCCESS;
}

}  // namespace

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm* comm_graph) {
  torusmpi::progress::Lock lock;
  (void)reorder;
  constexpr const char* kFn = "MPI_Graph_create";
  if (int err = require_active(kFn)) return err;
  Comm* c;
  if (int err = mpi::check_comm(kFn, comm_old, &c)) return err;
  if (int err = check_graph(kFn, comm_old, nnodes, index, edges, c->size)) return err;
  if (int err = check_out_ptr(kFn, comm_old, comm_graph, "comm_graph")) return err;
  auto* t = new Topology;
  t->kind = MPI_GRAPH;
  t->index.assign(index, index + nnodes);
  t->edges.assign(edges, edges + (nnodes > 0 ? index[nnodes - 1] : 0));
  return mpi::make_topology_comm(kFn, comm_old, nnodes, t, comm_graph);
}
TORUSMPI_WEAK_ALIAS(MPI_Graph_create);

int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Graphdims_get";
  if (int err = require_active(kFn)) return err;
  const Topology* t;
  if (int err = mpi::check_topology(kFn, comm, MPI_GRAPH, &t)) return err;
  if (nnodes == nullptr || nedges == nullptr)
    return raise_error(comm, MPI_ERR_ARG, kFn, "nnodes or nedges argument is NULL");
  *nnodes = static_cast<int>(t->index.size());
  *nedges = static_cast<int>(t->edges.size());
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Graphdims_get);

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Graph_get";
  if (int err = require_active(kFn)) return err;
  const Topology* t;
  if (int err = mpi::check_topology(kFn, comm, MPI_GRAPH, &t)) return err;
  if (maxindex < 0 || maxedges < 0 || (maxindex > 0 && index == nullptr) ||
      (maxedges > 0 && edges == nullptr))
    return raise_error(comm, MPI_ERR_ARG, kFn, "maxindex, maxedges, index or edges is bad");
  std::copy_n(t->index.begin(), std::min<size_t>(maxindex, t->index.size()), index);
  std::copy_n(t->edges.begin(), std::min<size_t>(maxedges, t->edges.size()), edges);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Graph_get);

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Graph_neighbors_count";
  if (int err = require_active(kFn)) return err;
  const Topology* t;
  if (int err = mpi::check_topology(kFn, comm, MPI_GRAPH, &t)) return err;
  if (rank < 0 || rank >= static_cast<int>(t->index.size()))
    return raise_error(comm, MPI_ERR_RANK, kFn, "rank argument is %d", rank);
  if (int err = check_out_ptr(kFn, comm, nneighbors, "nneighbors")) return err;
  *nneighbors = t->index[rank] - (rank == 0 ? 0 : t->index[rank - 1]);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Graph_neighbors_count);

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Graph_neighbors";
  if (int err = require_active(kFn)) return err;
  const Topology* t;
  if (int err = mpi::check_topology(kFn, comm, MPI_GRAPH, &t)) return err;
  if (rank < 0 || rank >= static_cast<int>(t->index.size()))
    return raise_error(comm, MPI_ERR_RANK, kFn, "rank argument is %d", rank);
  int first = rank == 0 ? 0 : t->index[rank - 1];
  int n = std::min(maxneighbors, t->index[rank] - first);
  if (n > 0 && neighbors == nullptr)
    return raise_error(comm, MPI_ERR_ARG, kFn, "neighbors argument is NULL");
  for (int i = 0; i < n; ++i) neighbors[i] = t->edges[first + i];
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Graph_neighbors);

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Graph_map";
  if (int err = require_active(kFn)) return err;
  Comm* c;
  if (int err = mpi::check_comm(kFn, comm, &c)) return err;
  if (int err = check_graph(kFn, comm, nnodes, index, edges, c->size)) return err;
  if (int err = check_out_ptr(kFn, comm, newrank, "newrank")) return err;
  *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Graph_map);

namespace {

// Weights as MPI passes them: MPI_UNWEIGHTED (none), MPI_WEIGHTS_EMPTY (none, degree 0), or n.
bool has_weights(const int* w) { return w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY; }

int check_ranks(const char* fn, MPI_Comm comm, const int* v, int n, const char* what, int size) {
  if (n > 0 && v == nullptr) return raise_error(comm, MPI_ERR_ARG, fn, "%s argument is NULL", what);
  for (int i = 0; i < n; ++i) {
    if (v[i] < 0 || v[i] >= size)
      return raise_error(comm, MPI_ERR_RANK, fn, "%s[%d] is %d, not a rank", what, i, v[i]);
  }
  return MPI_SUCCESS;
}

}  // namespace

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm* comm_dist_graph) {
  torusmpi::progress::Lock lock;
  (void)info;
  (void)reorder;
  constexpr const char* kFn = "MPI_Dist_graph_create_adjacent";
  if (int err = require_active(kFn)) return err;
  Comm* c;
  if (int err = mpi::check_comm(kFn, comm_old, &c)) return err;
  if (indegree < 0 || outdegree < 0)
    return raise_error(comm_old, MPI_ERR_ARG, kFn, "indegree or outdegree is negative");
  if (int err = check_ranks(kFn, comm_old, sources, indegree, "sources", c->size)) return err;
  if (int err = check_ranks(kFn, comm_old, destinations, outdegree, "destinations", c->size))
    return err;
  if (int err = check_out_ptr(kFn, comm_old, comm_dist_graph, "comm_dist_graph")) return err;
  bool weighted = has_weights(sourceweights) || has_weights(destweights);
  if (weighted && ((indegree > 0 && !has_weights(sourceweights)) ||
                   (outdegree > 0 && !has_weights(destweights))))
    return raise_error(comm_old, MPI_ERR_ARG, kFn, "weights are given for one side only");
  auto* t = new Topology;
  t->kind = MPI_DIST_GRAPH;
  t->in.assign(sources, sources + indegree);
  t->out.assign(destinations, destinations + outdegree);
  t->weighted = weighted;
  if (weighted) {
    if (indegree > 0) t->sweights.assign(sourceweights, sourceweights + indegree);
    if (outdegree > 0) t->dweights.assign(destweights, destweights + outdegree);
  }
  mpi::identity_order(t);
  int err = PMPI_Comm_dup(comm_old, comm_dist_graph);
  if (err != MPI_SUCCESS) {
    delete t;
    return err;
  }
  return mpi::attach(*comm_dist_graph, t);
}
TORUSMPI_WEAK_ALIAS(MPI_Dist_graph_create_adjacent);

// Every process names some edges; each learns its own in- and out-edges by gathering all of them
// (an allgather of counts, then of edges): in-edges in the order of the process that named them,
// then of naming.
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm* comm_dist_graph) {
  torusmpi::progress::Lock lock;
  (void)info;
  (void)reorder;
  constexpr const char* kFn = "MPI_Dist_graph_create";
  if (int err = require_active(kFn)) return err;
  Comm* c;
  if (int err = mpi::check_comm(kFn, comm_old, &c)) return err;
  if (n < 0) return raise_error(comm_old, MPI_ERR_ARG, kFn, "n argument is %d", n);
  if (int err = check_ranks(kFn, comm_old, sources, n, "sources", c->size)) return err;
  if (n > 0 && degrees == nullptr)
    return raise_error(comm_old, MPI_ERR_ARG, kFn, "degrees argument is NULL");
  int nedges = 0;
  for (int i = 0; i < n; ++i) {
    if (degrees[i] < 0)
      return raise_error(comm_old, MPI_ERR_ARG, kFn, "degrees[%d] is %d", i, degrees[i]);
    nedges += degrees[i];
  }
  if (int err = check_ranks(kFn, comm_old, destinations, nedges, "destinations", c->size))
    return err;
  if (int err = check_out_ptr(kFn, comm_old, comm_dist_graph, "comm_dist_graph")) return err;
  bool weighted = has_weights(weights) && nedges > 0;
  // Every edge as (source, destination, weight).
  std::vector<int> mine;
  for (int i = 0, e = 0; i < n; ++i) {
    for (int k = 0; k < degrees[i]; ++k, ++e) {
      mine.insert(mine.end(), {sources[i], destinations[e], weighted ? weights[e] : 1});
    }
  }
  const int p = c->size;
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(p), displs(p);
  int err = PMPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_old);
  int any_weighted = weighted, all_weighted = 0;
  if (err == MPI_SUCCESS)
    err = PMPI_Allreduce(&any_weighted, &all_weighted, 1, MPI_INT, MPI_LOR, comm_old);
  if (err != MPI_SUCCESS) return err;
  for (int q = 1; q < p; ++q) displs[q] = displs[q - 1] + counts[q - 1];
  std::vector<int> all(displs[p - 1] + counts[p - 1]);
  err = PMPI_Allgatherv(mine.data(), count, MPI_INT, all.data(), counts.data(), displs.data(),
                        MPI_INT, comm_old);
  if (err != MPI_SUCCESS) return err;
  auto* t = new Topology;
  t->kind = MPI_DIST_GRAPH;
  t->weighted = all_weighted != 0;
  for (size_t e = 0; e + 2 < all.size(); e += 3) {
    int s = all[e], d = all[e + 1], w = all[e + 2];
    if (s == c->rank) {
      t->out.push_back(d);
      if (t->weighted) t->dweights.push_back(w);
    }
    if (d == c->rank) {
      t->in.push_back(s);
      if (t->weighted) t->sweights.push_back(w);
    }
  }
  mpi::identity_order(t);
  err = PMPI_Comm_dup(comm_old, comm_dist_graph);
  if (err != MPI_SUCCESS) {
    delete t;
    return err;
  }
  return mpi::attach(*comm_dist_graph, t);
}
TORUSMPI_WEAK_ALIAS(MPI_Dist_graph_create);

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Dist_graph_neighbors_count";
  if (int err = require_active(kFn)) return err;
  const Topology* t;
  if (int err = mpi::check_topology(kFn, comm, MPI_DIST_GRAPH, &t)) return err;
  if (indegree == nullptr || outdegree == nullptr || weighted == nullptr)
    return raise_error(comm, MPI_ERR_ARG, kFn, "indegree, outdegree or weighted is NULL");
  *indegree = static_cast<int>(t->in.size());
  *outdegree = static_cast<int>(t->out.size());
  *weighted = t->weighted;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Dist_graph_neighbors_count);

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[]) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Dist_graph_neighbors";
  if (int err = require_active(kFn)) return err;
  const Topology* t;
  if (int err = mpi::check_topology(kFn, comm, MPI_DIST_GRAPH, &t)) return err;
  int nin = std::min<int>(maxindegree, t->in.size());
  int nout = std::min<int>(maxoutdegree, t->out.size());
  if ((nin > 0 && sources == nullptr) || (nout > 0 && destinations == nullptr))
    return raise_error(comm, MPI_ERR_ARG, kFn, "sources or destinations argument is NULL");
  std::copy_n(t->in.begin(), nin, sources);
  std::copy_n(t->out.begin(), nout, destinations);
  if (t->weighted && has_weights(sourceweights))
    std::copy_n(t->sweights.begin(), nin, sourceweights);
  if (t->weighted && has_weights(destweights)) std::copy_n(t->dweights.begin(), nout, destweights);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Dist_graph_neighbors);

int PMPI_Topo_test(MPI_Comm comm, int* status) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Topo_test";
  if (int err = require_active(kFn)) return err;
  Comm* c;
  if (int err = mpi::check_comm(kFn, comm, &c)) return err;
  if (int err = check_out_ptr(kFn, comm, status, "status")) return err;
  const Topology* t = mpi::topology_of(comm);
  *status = t == nullptr ? MPI_UNDEFINED : t->kind;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Topo_test);
