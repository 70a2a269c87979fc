#include "mpi/coll_call.h"

#include "mpi/errors.h"

namespace torusmpi::mpi {
namespace {

int coll_failed(const char* fn, MPI_Comm comm, Status s, const std::string& why) {
  if (!why.empty()) return raise_error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", why.c_str());
  return raise_error(comm, error_class_of(s), fn, "failed: %s", status_string(s));
}

void request_done(coll::Exec*, void*) {}

}  // namespace

int run_collective(const char* fn, MPI_Comm comm, Comm* c, CollCall& call, MPI_Request* request) {
  std::string why;
  if (request == nullptr) {
    Status s = c->team.run(call.a, call.r, &why);
    return s == Status::kOk ? MPI_SUCCESS : coll_failed(fn, comm, s, why);
  }
  coll::Exec* e = nullptr;
  Status s = c->team.start(call.a, call.r, &e, &why);
  if (s != Status::kOk) return coll_failed(fn, comm, s, why);
  Request* req = Request::make();
  req->kind = Request::Kind::kColl;
  req->comm = comm;
  req->exec = e;
  req->fn = fn;
  e->set_on_complete(request_done, nullptr);
  e->start_nonblocking();
  *request = &req->handle;
  return MPI_SUCCESS;
}

int check_call(const char* fn, MPI_Comm comm, MPI_Request* request, Comm** c) {
  if (int err = require_active(fn)) return err;
  if (int err = check_comm(fn, comm, c)) return err;
  // "MPI_Ibarrier", "MPI_Ineighbor_allgather": the nonblocking forms.
  if (fn[4] == 'I' && request == nullptr)
    return raise_error(comm, MPI_ERR_REQUEST, fn, "request argument is NULL");
  return MPI_SUCCESS;
}

int check_data(const char* fn, MPI_Comm comm, const char* what, int count, MPI_Datatype type,
               Buffer* b) {
  if (count < 0) return raise_error(comm, MPI_ERR_COUNT, fn, "%scount argument is %d", what, count);
  const BuiltinTypeInfo* info = nullptr;
  if (int err = check_type(fn, comm, type, what, &info)) return err;
  b->bytes = static_cast<size_t>(count) * static_cast<size_t>(info->extent);
  b->type_size = info->size;
  b->type_extent = info->extent;
  return MPI_SUCCESS;
}

int check_same(const char* fn, MPI_Comm comm, const Buffer& s, const Buffer& r) {
  if (s.bytes == r.bytes) return MPI_SUCCESS;
  return raise_error(comm, MPI_ERR_TRUNCATE, fn,
                     "sendcount and sendtype give %zu B, recvcount and recvtype %zu B: a "
                     "collective's send and receive blocks must match",
                     s.bytes, r.bytes);
}

int check_nonnull(const char* fn, MPI_Comm comm, const void* p, const char* what, size_t bytes) {
  if (p != nullptr || bytes == 0) return MPI_SUCCESS;
  return raise_error(comm, MPI_ERR_BUFFER, fn, "%s argument is NULL with %zu B to move", what,
                     bytes);
}

int check_counts(const char* fn, MPI_Comm comm, const int* v, int n, const char* what,
                 bool counts) {
  if (v == nullptr && n > 0) return raise_error(comm, MPI_ERR_ARG, fn, "%s argument is NULL", what);
  for (int i = 0; counts && i < n; ++i) {
    if (v[i] < 0) return raise_error(comm, MPI_ERR_COUNT, fn, "%s[%d] is %d", what, i, v[i]);
  }
  return MPI_SUCCESS;
}

}  // namespace torusmpi::mpi
