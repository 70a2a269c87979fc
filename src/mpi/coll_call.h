// What the collective entry points share (coll.cc, neighbor.cc): their argument checks, the call
// on its way to the engine, and running it, blocking or not.
//
// Datatypes. The engine moves bytes; every datatype, predefined or derived, travels as its packed
// stream (count * size bytes in type-map order), the same wire format as point-to-point. A type
// whose elements tile memory with nothing between them (size == extent and one contiguous block:
// every predefined type but the pair types, contiguous derived types) is used in place, so the
// usual case costs nothing. Any other layout goes through a Staging: packed into a buffer of its
// own before the run, and what the run received unpacked into the caller's layout as the run ends
// (RunArgs::finish, before the request can be seen complete).
#ifndef TORUSMPI_MPI_COLL_CALL_H_
#define TORUSMPI_MPI_COLL_CALL_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "coll/team.h"
#include "dtype/dtype.h"
#include "mpi/p2p.h"

namespace torusmpi::mpi {

// A checked datatype argument.
struct TypeArg {
  MPI_Datatype handle = nullptr;
  const dtype::Type* t = nullptr;
  size_t size = 0;    // packed bytes of one element
  size_t extent = 0;  // bytes from one element's origin to the next
  bool derived = false;
  // n elements at buf are n * size contiguous bytes at buf + offset, for every n.
  bool dense = false;
  int64_t offset = 0;
};

// The datatype argument of a collective: a committed datatype that carries data; `what` ("send",
// "recv", "") prefixes the argument's name in messages.
int check_type_arg(const char* fn, MPI_Comm comm, const char* what, MPI_Datatype type,
                   TypeArg* out);

// One side (what is sent, or received) of a call: block i is counts[i] elements of *types[i]
// (of *types[0] for every block when types has one entry) from the element origin buf + at[i].
struct Side {
  void* buf = nullptr;
  std::vector<const TypeArg*> types;
  std::vector<size_t> counts;
  std::vector<int64_t> at;
};

// The staged data of one call. A blocking call keeps it on its stack; a nonblocking one hands it
// to its run, whose end deletes it.
class Staging {
 public:
  Staging() = default;
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  ~Staging();

  // Packs (fill) or stages for unpacking at the end (drain) a side that cannot be used in place
  // (CollCall::place): blocks() for n equal blocks of count elements of t, one after the other;
  // side() for any side, each block packed after the one before (*displs gets where).
  void* blocks(void* buf, const TypeArg& t, size_t count, size_t n, bool fill, bool drain);
  void* side(const Side& s, bool fill, bool drain, const std::vector<size_t>& bytes,
             std::vector<size_t>* displs);
  // Keeps a derived datatype alive until the run ends (a user op's argument).
  void retain(MPI_Datatype type);

  bool idle() const { return buffers_.empty() && retained_.empty(); }
  // RunArgs::finish: unpacks what was received (the run went well) and, for a nonblocking call,
  // deletes the staging.
  static void finish(void* ctx, Status status);
  void set_owned_by_run() { owned_by_run_ = true; }

 private:
  char* stage(size_t bytes, bool on_device);
  void pack_or_drain(char* packed, void* buf, const dtype::TypeRef& t, size_t count, int64_t at,
                     bool fill, bool drain);

  struct Drain {
    dtype::TypeRef t;
    const char* packed;
    char* user;  // element origin
    int64_t count;
  };
  std::vector<StageMem> buffers_;
  std::vector<Drain> drains_;
  std::vector<MPI_Datatype> retained_;
  bool owned_by_run_ = false;
};

// A call on its way to the engine; the arrays of vector collectives live here until the schedule
// is built, which happens before the call returns, blocking or not.
struct CollCall {
  coll::Args a;
  coll::RunArgs r;
  std::vector<size_t> arrays[4];
  std::unique_ptr<Staging> staged;  // made when a datatype needs it

  const size_t* keep(int i, std::vector<size_t> v) {
    arrays[i] = std::move(v);
    return arrays[i].data();
  }
  // Room for array i of n values, to be filled by the caller: on the stack for communicators of
  // up to kInline ranks (a malloc and free are a tenth of a small call), else in arrays[i].
  static constexpr size_t kInline = 16;
  size_t* room(int i, size_t n) {
    if (n <= kInline) return inline_[i];
    arrays[i].resize(n);
    return arrays[i].data();
  }
  size_t inline_[4][kInline];
  Staging& staging() {
    if (!staged) staged = std::make_unique<Staging>();
    return *staged;
  }

  // Where the engine finds a side of the call. n equal blocks of count elements of t, block j at
  // buf + j * count * extent: the first block's bytes, the others following them. Any side: the
  // base address, and per block its bytes and byte displacement from it. A side whose types are
  // dense is used in place (no Staging is made); otherwise it is staged: `fill`, the run reads it
  // (packed now); `drain`, the run writes it (unpacked when the run ends).
  void* place(void* buf, const TypeArg& t, size_t count, size_t n, bool fill, bool drain);
  void* place(const Side& s, bool fill, bool drain, std::vector<size_t>* bytes,
              std::vector<size_t>* displs);
};

// Runs the call (request == nullptr), or starts it and makes *request.
int run_collective(const char* fn, MPI_Comm comm, Comm* c, CollCall& call, MPI_Request* request);
// The same for a call that needs no staging, from its shape and buffers alone (a and r are the
// run's to fill in: Team::run).
int run_collective(const char* fn, MPI_Comm comm, Comm* c, coll::Args& a, coll::RunArgs& r,
                   MPI_Request* request);
// The same with the schedule given, built by the caller rather than chosen by c's team, and
// call.r.comm and call.r.tag set: an intercommunicator's collectives (intercomm.cc).
int run_schedule(const char* fn, MPI_Comm comm, Comm* c, CollCall& call,
                 std::shared_ptr<const coll::Schedule> schedule, MPI_Request* request);

// Persistent collectives (MPIX_<coll>_init, Open MPI 4.1's pcollreq extension, with MPI 4.0's
// semantics for MPI_<coll>_init): `call` makes the collective's nonblocking form under the init's
// name, its request argument being where the request goes. Given check_only(), the call checks its
// arguments and runs nothing: the init raises what is wrong at once. The request keeps `call`
// (with the arrays it points to, which MPI says stay as they are until the request is freed) and
// the derived datatypes and user ops the check met, until MPI_Request_free; each MPI_Start runs the
// call anew, checked again, in the order the ranks start their requests, as MPI requires of them.
MPI_Request* check_only();
int persistent_init(const char* fn, MPI_Comm comm, MPI_Info info, MPI_Request* request,
                    std::function<int(MPI_Request*)> call);

// MPI is up, comm is a communicator, and a nonblocking call (fn is "MPI_I...") has its request.
// Inline: every collective starts here, small calls included; check_call_failed says what is
// wrong.
int check_call_failed(const char* fn, MPI_Comm comm, MPI_Request* request, Comm** c);
inline int check_call(const char* fn, MPI_Comm comm, MPI_Request* request, Comm** c) {
  if (runtime().phase == Phase::kActive && (*c = comm_impl(comm)) != nullptr &&
      (fn[4] != 'I' || request != nullptr)) {
    return MPI_SUCCESS;
  }
  return check_call_failed(fn, comm, request, c);
}

// count elements of a checked type: their packed bytes, or MPI_ERR_COUNT for a negative count.
int check_count(const char* fn, MPI_Comm comm, const char* what, int count, const TypeArg& t,
                size_t* bytes);
// A send and a receive description of one block must move the same bytes (MPI_ERR_TRUNCATE).
int check_same(const char* fn, MPI_Comm comm, size_t send_bytes, size_t recv_bytes);
// count elements of t at p (the argument `what`): not NULL when they have bytes to move, and all
// the bytes they span host memory or live device memory of this job (MPI_ERR_BUFFER).
int check_span(const char* fn, MPI_Comm comm, const void* p, const char* what, const TypeArg& t,
               size_t count);
// The same for the blocks of a v-collective's side: from the lowest to the highest byte they name.
int check_side(const char* fn, MPI_Comm comm, const char* what, const Side& s);
// An array of n ints is there, and with counts = true none is negative.
int check_counts(const char* fn, MPI_Comm comm, const int* v, int n, const char* what, bool counts);
// One side of an alltoallv/w to or from n ranks: checks its counts, displacements and types (one,
// or one per rank with w) into *targs, and lays its blocks out in *s. `what` is "send" or "recv".
int vector_side(const char* fn, MPI_Comm comm, const void* buf, const int* counts,
                const int* displs, const MPI_Datatype* types, const char* what, bool w, int n,
                std::vector<TypeArg>* targs, Side* s);

// A reduction of count elements of type with op, for the engine: sets call->a.count, a.elem,
// a.commutative, r.reduce and r.elem, *t (the datatype as the engine sees it: a predefined one's
// extent is its element, used in place) and *per (engine elements per element of the datatype).
int check_reduction(const char* fn, MPI_Comm comm, int count, MPI_Datatype type, MPI_Op op,
                    CollCall* call, TypeArg* t, size_t* per);

// Intercommunicator collectives (intercomm.cc) that group.h does not list with the others: the
// v and w forms and reduce_scatter. The arrays have one entry per rank of the remote group
// (reduce_scatter's recvcounts: per rank of the local group, as MPI has it).
int inter_allgatherv(const char* fn, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     void* recvbuf, const int* recvcounts, const int* displs, MPI_Datatype recvtype,
                     MPI_Comm comm, Comm* c, MPI_Request* request);
// recvcounts == nullptr: the block form, blockcount elements each.
int inter_reduce_scatter(const char* fn, const void* sendbuf, void* recvbuf, const int* recvcounts,
                         int blockcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm, Comm* c,
                         MPI_Request* request);
// sendtypes/recvtypes: one type (v) or one per remote rank (w, displacements in bytes).
int inter_alltoall_vw(const char* fn, bool w, const void* sendbuf, const int* sendcounts,
                      const int* sdispls, const MPI_Datatype* sendtypes, void* recvbuf,
                      const int* recvcounts, const int* rdispls, const MPI_Datatype* recvtypes,
                      MPI_Comm comm, Comm* c, MPI_Request* request);
// kind: kGatherv (counts and displs: the root's receive layout) or kScatterv (its send layout);
// owncount and owntype: the other group's own block.
int inter_rooted_vector(const char* fn, coll::Coll kind, const void* sendbuf, const int* counts,
                        const int* displs, int owncount, MPI_Datatype owntype,
                        MPI_Datatype roottype, void* recvbuf, int root, MPI_Comm comm, Comm* c,
                        MPI_Request* request);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_COLL_CALL_H_
