// Completing requests: the Wait and Test families, persistent requests (Start, Startall),
// Request_free, Request_get_status, Cancel, generalized requests (Grequest_start, _complete), and
// what a status tells (Get_count, Get_elements).
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include "core/progress.h"
#include "mpi/datatype.h"
#include "mpi/errors.h"
#include "mpi/fortran.h"
#include "mpi/group.h"
#include "mpi/p2p.h"
#include "mpi/reduction.h"

using torusmpi::mpi::Buffer;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::Request;
using torusmpi::mpi::request_impl;
using torusmpi::mpi::require_active;
namespace mpi = torusmpi::mpi;
namespace pml = torusmpi::pml;
namespace progress = torusmpi::progress;
namespace flight = torusmpi::flight;

namespace torusmpi::mpi {
namespace {
// Never destroyed: requests released after static destructors have run (an atexit handler calling
// MPI) must still find it, and memory checkers see the pooled requests as reachable.
std::vector<Request*>& g_free_requests = *new std::vector<Request*>;

Request* make_sent_request() {
  auto* r = new Request;
  r->immediate = true;
  r->shared = true;
  return r;
}
Request* const g_sent_request = make_sent_request();
}  // namespace

Request* Request::make() {
  progress::Lock lock;  // the progress thread may release requests (Request_free of active ones)
  if (g_free_requests.empty()) return new Request;
  Request* r = g_free_requests.back();
  g_free_requests.pop_back();
  r->~Request();
  return new (r) Request;  // every field back to its initial value
}

void Request::release(Request* r) {
  if (r->shared) return;
  progress::Lock lock;
  r->handle.magic = kMagicFreed;  // a stale handle is reported, not misread
  fortran_forget(HandleKind::kRequest, &r->handle);
  if (r->exec != nullptr) coll::Exec::release(r->exec);
  r->exec = nullptr;
  r->start_coll = nullptr;
  for (MPI_Datatype t : r->kept_types) release_type(t);
  r->kept_types.clear();
  for (MPI_Op op : r->kept_ops) release_op(op);
  r->kept_ops.clear();
  if (r->kept_comm != nullptr) comm_release(r->kept_comm);
  r->kept_comm = nullptr;
  r->staging.reset();  // a pooled request holds no message memory and keeps no datatype
  r->type_ref.reset();
  g_free_requests.push_back(r);
}

Request* Request::sent() { return g_sent_request; }

}  // namespace torusmpi::mpi

namespace {

// A request that takes part in a completion call: not MPI_REQUEST_NULL, not an inactive
// persistent request.
bool active(const Request* r) { return r != nullptr && r->active; }

// The flight recorder's record of a completion call that has to wait: on one request, its
// communicator and peer (a collective's request names its call's communicator only).
flight::Scope wait_record(const char* fn, const Request* r) {
  const mpi::Comm* c = r->comm != nullptr ? mpi::comm_impl(r->comm) : nullptr;
  if (c == nullptr) return {fn, 0, "", 0, -1, flight::kNoPeer};
  const bool p2p = r->kind != Request::Kind::kColl;
  return {fn, c->context, c->name.c_str(), 0, -1, p2p ? c->flight_peer(r->peer) : flight::kNoPeer};
}
// On many: how many they are, as its size.
flight::Scope many_record(const char* fn, int count) {
  return {fn, 0, "", 0, count, flight::kNoPeer};
}

// Every handle must be a request or MPI_REQUEST_NULL.
int check_handles(const char* fn, int count, const MPI_Request* requests) {
  if (count < 0) return raise_error(nullptr, MPI_ERR_COUNT, fn, "count argument is %d", count);
  if (count > 0 && requests == nullptr)
    return raise_error(nullptr, MPI_ERR_REQUEST, fn, "array_of_requests argument is NULL");
  for (int i = 0; i < count; ++i) {
    if (requests[i] != MPI_REQUEST_NULL && request_impl(requests[i]) == nullptr)
      return raise_error(nullptr, MPI_ERR_REQUEST, fn, "array_of_requests[%d] is not a request", i);
  }
  return MPI_SUCCESS;
}

int check_handle(const char* fn, const MPI_Request* request) {
  if (request == nullptr)
    return raise_error(nullptr, MPI_ERR_REQUEST, fn, "request argument is NULL");
  return check_handles(fn, 1, request);
}

// The error class of a finished request, without raising it.
int error_class(const Request& r) {
  if (r.exec != nullptr) {
    return r.exec->error() == torusmpi::Status::kOk ? MPI_SUCCESS
                                                    : mpi::error_class_of(r.exec->error());
  }
  if (r.immediate || r.pml.error == torusmpi::Status::kOk) return MPI_SUCCESS;
  if (r.pml.error == torusmpi::Status::kErrTruncate) return MPI_ERR_TRUNCATE;
  return mpi::error_class_of(r.pml.error);
}

void fill_status(const Request& r, MPI_Status* st) {
  if (r.kind == Request::Kind::kRecv) {
    if (r.immediate) {
      mpi::set_proc_null_status(st);
    } else {
      mpi::set_status(st, r.pml.source, r.pml.tag, r.pml.bytes, r.pml.cancelled);
    }
  } else {
    // A send's status says only whether it was cancelled.
    mpi::set_empty_status(st);
    if (st != MPI_STATUS_IGNORE) st->_cancelled = r.kind == Request::Kind::kSend && r.pml.cancelled;
  }
}

// The callbacks of a generalized request, in the convention they were written in: C, or Fortran
// (started through Open MPI's Fortran binding: see Request::grequest_funcs_are_c). A Fortran
// subroutine takes everything by reference, extra_state being the address of the application's
// INTEGER(MPI_ADDRESS_KIND), which is what the binding passed us; its error comes back in IERROR.
using FortranQuery = void(void* extra_state, MPI_Fint* status, MPI_Fint* ierror);
using FortranFree = void(void* extra_state, MPI_Fint* ierror);
using FortranCancel = void(void* extra_state, MPI_Fint* complete, MPI_Fint* ierror);

// The same function as what it really is (through void (*)(), the cast every compiler allows).
template <class F, class G>
F* as_fortran(G* fn) {
  return reinterpret_cast<F*>(reinterpret_cast<void (*)()>(fn));
}

int call_query(Request* r, MPI_Status* st) {
  if (r->query_fn == nullptr) return MPI_SUCCESS;
  if (r->grequest_funcs_are_c()) return r->query_fn(r->extra_state, st);
  // Open MPI's Fortran status is the C one, word for word (MPI_STATUS_SIZE = 6).
  static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "a status is a whole number of Fints");
  MPI_Fint fstatus[sizeof(MPI_Status) / sizeof(MPI_Fint)];
  std::memcpy(fstatus, st, sizeof fstatus);
  MPI_Fint ierror = MPI_SUCCESS;
  as_fortran<FortranQuery>(r->query_fn)(r->extra_state, fstatus, &ierror);
  std::memcpy(st, fstatus, sizeof fstatus);
  return ierror;
}

int call_free(Request* r) {
  if (r->free_fn == nullptr) return MPI_SUCCESS;
  if (r->grequest_funcs_are_c()) return r->free_fn(r->extra_state);
  MPI_Fint ierror = MPI_SUCCESS;
  as_fortran<FortranFree>(r->free_fn)(r->extra_state, &ierror);
  return ierror;
}

int call_cancel(Request* r, bool complete) {
  if (r->cancel_fn == nullptr) return MPI_SUCCESS;
  if (r->grequest_funcs_are_c()) return r->cancel_fn(r->extra_state, complete);
  MPI_Fint logical = complete ? mpi::kFortranTrue : mpi::kFortranFalse, ierror = MPI_SUCCESS;
  as_fortran<FortranCancel>(r->cancel_fn)(r->extra_state, &logical, &ierror);
  return ierror;
}

// A generalized request's status comes from its query_fn (MPI 3.1, section 13.2), which may say
// anything of it; it starts empty. Returns what query_fn returned: the completion's error.
int query_status(Request* r, MPI_Status* st) {
  MPI_Status scratch;
  if (st == MPI_STATUS_IGNORE) st = &scratch;
  mpi::set_empty_status(st);
  return call_query(r, st);
}

// Ends a complete generalized request: its status from query_fn, then free_fn (once, here or at
// MPI_Grequest_complete after MPI_Request_free). query_fn's error wins, free_fn's follows.
int finish_grequest(const char* fn, MPI_Request* handle, MPI_Status* st, bool in_status) {
  Request* r = request_impl(*handle);
  int err = query_status(r, st);
  int free_err = call_free(r);
  const char* which = "query_fn";
  if (err == MPI_SUCCESS && free_err != MPI_SUCCESS) {
    err = free_err;
    which = "free_fn";
  }
  const bool raised = r->graises_own;
  Request::release(r);
  *handle = MPI_REQUEST_NULL;
  if (err != MPI_SUCCESS && !in_status && !raised) {
    err =
        raise_error(nullptr, err, fn, "the generalized request's %s returned error %d", which, err);
  }
  return err;
}

// Ends a complete request: fills its status, frees it (or makes a persistent one inactive) and
// gives its error. Single-completion calls raise the error on the request's communicator;
// multiple-completion calls (in_status) put it in the status and raise MPI_ERR_IN_STATUS later.
int finish_request(const char* fn, MPI_Request* handle, MPI_Status* st, bool in_status) {
  Request* r = request_impl(*handle);
  if (r->kind == Request::Kind::kGrequest) return finish_grequest(fn, handle, st, in_status);
  if (r->buffer.staged()) mpi::drain_request(r);
  fill_status(*r, st);
  int err = error_class(*r);
  if (in_status) {
    // The caller puts it in the status, if the call returns MPI_ERR_IN_STATUS.
  } else if (err != MPI_SUCCESS && r->exec != nullptr) {
    err = raise_error(r->comm, err, fn, "%s failed: %s", r->fn,
                      torusmpi::status_string(r->exec->error()));
  } else if (err != MPI_SUCCESS) {
    err = mpi::request_error(fn, r->comm, r->pml, r->buffer);
  }
  if (r->persistent) {
    r->active = false;
    if (r->exec != nullptr)
      torusmpi::coll::Exec::release(r->exec);  // a persistent collective's run
    r->exec = nullptr;
  } else {
    Request::release(r);
    *handle = MPI_REQUEST_NULL;
  }
  return err;
}

// Request::sent(), a send that completed in its call, has nothing to free: a window of small
// sends costs its Waitall about as much as a loop over handles.
inline int finish(const char* fn, MPI_Request* handle, MPI_Status* st, bool in_status) {
  if (request_impl(*handle)->shared) {
    mpi::set_empty_status(st);
    *handle = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
  }
  return finish_request(fn, handle, st, in_status);
}

MPI_Status* status_at(MPI_Status* statuses, int i) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

// After a multiple-completion call finished requests: MPI_ERR_IN_STATUS if any failed. Only then
// does each status get its MPI_ERROR (errors[i] for status i; MPI_SUCCESS for the others): MPI 3.1
// section 3.7.5 leaves the error fields alone otherwise.
int raise_in_status(const char* fn, int failed, MPI_Comm comm, MPI_Status* statuses,
                    const std::vector<int>& errors) {
  if (failed == 0) return MPI_SUCCESS;
  if (statuses != MPI_STATUSES_IGNORE) {
    for (size_t i = 0; i < errors.size(); ++i) statuses[i].MPI_ERROR = errors[i];
  }
  return raise_error(comm, MPI_ERR_IN_STATUS, fn, "%d request(s) failed: see their statuses",
                     failed);
}

// Finishes every complete active request among requests[0..count); returns how many failed and
// fills indices/outcount when given (Waitsome, Testsome), the first failure's comm, and, once one
// has failed, each status's error in *errors (indexed as the statuses are: by request, or by
// completion when indices are given; MPI_SUCCESS where nothing completed). No failure, no vector:
// the usual Waitall allocates nothing. Without indices (Waitall), null and inactive entries get
// an empty status in the same pass.
int finish_complete(const char* fn, int count, MPI_Request* requests, MPI_Status* statuses,
                    int* outcount, int* indices, MPI_Comm* failed_comm, std::vector<int>* errors) {
  int failed = 0, done = 0;
  for (int i = 0; i < count; ++i) {
    Request* r = request_impl(requests[i]);
    if (!active(r)) {
      if (indices == nullptr) mpi::set_empty_status(status_at(statuses, i));
      continue;
    }
    if (!r->complete()) continue;
    // A generalized request has no communicator: its errors go to MPI_COMM_WORLD's handler.
    MPI_Comm comm = r->comm;
    MPI_Status* st = indices != nullptr ? status_at(statuses, done) : status_at(statuses, i);
    int err = finish(fn, &requests[i], st, true);
    if (err != MPI_SUCCESS && failed++ == 0) {
      *failed_comm = comm;
      errors->assign(indices != nullptr ? done : count, MPI_SUCCESS);
    }
    if (indices != nullptr) {
      indices[done] = i;
      if (failed > 0) errors->push_back(err);
    } else if (failed > 0) {
      (*errors)[i] = err;
    }
    ++done;
  }
  if (outcount != nullptr) *outcount = done;
  return failed;
}

bool any_active(int count, const MPI_Request* requests) {
  for (int i = 0; i < count; ++i) {
    if (active(request_impl(requests[i]))) return true;
  }
  return false;
}

int first_complete(int count, const MPI_Request* requests) {
  for (int i = 0; i < count; ++i) {
    Request* r = request_impl(requests[i]);
    if (active(r) && r->complete()) return i;
  }
  return -1;
}

// From *first on: requests before it are known to be complete, so a wait over a window of
// requests that complete in order costs O(count), not O(count) per poll.
bool all_complete(int count, const MPI_Request* requests, int* first) {
  for (; *first < count; ++*first) {
    Request* r = request_impl(requests[*first]);
    if (active(r) && !r->complete()) return false;
  }
  return true;
}

// A freed request's operation is over: a staged receive's data still goes to the user's buffer.
void delete_on_completion(pml::Request* p) {
  auto* r = static_cast<Request*>(p->user);
  mpi::drain_request(r);
  Request::release(r);
}

}  // namespace

int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Wait";
  if (int err = require_active(kFn)) return err;
  if (int err = check_handle(kFn, request)) return err;
  Request* r = request_impl(*request);
  if (!active(r)) {
    mpi::set_empty_status(status);
    return MPI_SUCCESS;
  }
  if (!r->complete()) {
    flight::Scope record = wait_record(kFn, r);
    progress::wait_until([r] { return r->complete(); });
  }
  return finish(kFn, request, status, false);
}
TORUSMPI_WEAK_ALIAS(MPI_Wait);

int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Test";
  if (int err = require_active(kFn)) return err;
  if (int err = check_handle(kFn, request)) return err;
  if (flag == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "flag argument is NULL");
  Request* r = request_impl(*request);
  if (!active(r)) {
    *flag = 1;
    mpi::set_empty_status(status);
    return MPI_SUCCESS;
  }
  if (!r->complete()) {
    flight::Scope record = wait_record(kFn, r);
    progress::poll();
  }
  *flag = r->complete();
  return *flag ? finish(kFn, request, status, false) : MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Test);

int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Waitall";
  if (int err = require_active(kFn)) return err;
  if (int err = check_handles(kFn, count, array_of_requests)) return err;
  int first = 0;
  if (!all_complete(count, array_of_requests, &first)) {
    flight::Scope record = many_record(kFn, count);
    progress::wait_until([&] { return all_complete(count, array_of_requests, &first); });
  }
  MPI_Comm failed_comm = nullptr;
  std::vector<int> errors;
  int failed = finish_complete(kFn, count, array_of_requests, array_of_statuses, nullptr, nullptr,
                               &failed_comm, &errors);
  return raise_in_status(kFn, failed, failed_comm, array_of_statuses, errors);
}
TORUSMPI_WEAK_ALIAS(MPI_Waitall);

int PMPI_Testall(int count, MPI_Request array_of_requests[], int* flag,
                 MPI_Status array_of_statuses[]) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Testall";
  if (int err = require_active(kFn)) return err;
  if (int err = check_handles(kFn, count, array_of_requests)) return err;
  if (flag == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "flag argument is NULL");
  int first = 0;
  if (!all_complete(count, array_of_requests, &first)) {
    flight::Scope record = many_record(kFn, count);
    progress::poll();
  }
  *flag = all_complete(count, array_of_requests, &first);
  if (!*flag) return MPI_SUCCESS;  // MPI: nothing is completed unless everything is
  return PMPI_Waitall(count, array_of_requests, array_of_statuses);
}
TORUSMPI_WEAK_ALIAS(MPI_Testall);

int PMPI_Waitany(int count, MPI_Request array_of_requests[], int* index, MPI_Status* status) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Waitany";
  if (int err = require_active(kFn)) return err;
  if (int err = check_handles(kFn, count, array_of_requests)) return err;
  if (index == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "index argument is NULL");
  if (!any_active(count, array_of_requests)) {
    *index = MPI_UNDEFINED;
    mpi::set_empty_status(status);
    return MPI_SUCCESS;
  }
  int i = first_complete(count, array_of_requests);
  if (i < 0) {
    flight::Scope record = many_record(kFn, count);
    progress::wait_until([&] { return (i = first_complete(count, array_of_requests)) >= 0; });
  }
  *index = i;
  return finish(kFn, &array_of_requests[i], status, false);
}
TORUSMPI_WEAK_ALIAS(MPI_Waitany);

int PMPI_Testany(int count, MPI_Request array_of_requests[], int* index, int* flag,
                 MPI_Status* status) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Testany";
  if (int err = require_active(kFn)) return err;
  if (int err = check_handles(kFn, count, array_of_requests)) return err;
  if (index == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "index argument is NULL");
  if (flag == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "flag argument is NULL");
  *index = MPI_UNDEFINED;
  if (!any_active(count, array_of_requests)) {
    *flag = 1;
    mpi::set_empty_status(status);
    return MPI_SUCCESS;
  }
  int i = first_complete(count, array_of_requests);
  if (i < 0) {
    flight::Scope record = many_record(kFn, count);
    progress::poll();
    i = first_complete(count, array_of_requests);
  }
  *flag = i >= 0;
  if (i < 0) return MPI_SUCCESS;
  *index = i;
  return finish(kFn, &array_of_requests[i], status, false);
}
TORUSMPI_WEAK_ALIAS(MPI_Testany);

namespace {

int some(const char* fn, bool block, int incount, MPI_Request* requests, int* outcount,
         int* indices, MPI_Status* statuses) {
  if (int err = require_active(fn)) return err;
  if (int err = check_handles(fn, incount, requests)) return err;
  if (outcount == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, fn, "outcount argument is NULL");
  if (incount > 0 && indices == nullptr)
    return raise_error(nullptr, MPI_ERR_ARG, fn, "array_of_indices argument is NULL");
  if (!any_active(incount, requests)) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  if (first_complete(incount, requests) < 0) {
    flight::Scope record = many_record(fn, incount);
    if (block) {
      progress::wait_until([&] { return first_complete(incount, requests) >= 0; });
    } else {
      progress::poll();
    }
  }
  MPI_Comm failed_comm = nullptr;
  std::vector<int> errors;
  int failed =
      finish_complete(fn, incount, requests, statuses, outcount, indices, &failed_comm, &errors);
  return raise_in_status(fn, failed, failed_comm, statuses, errors);
}

}  // namespace

int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[]) {
  torusmpi::progress::Lock lock;
  return some("MPI_Waitsome", true, incount, array_of_requests, outcount, array_of_indices,
              array_of_statuses);
}
TORUSMPI_WEAK_ALIAS(MPI_Waitsome);

int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int* outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[]) {
  torusmpi::progress::Lock lock;
  return some("MPI_Testsome", false, incount, array_of_requests, outcount, array_of_indices,
              array_of_statuses);
}
TORUSMPI_WEAK_ALIAS(MPI_Testsome);

int PMPI_Start(MPI_Request* request) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Start";
  if (int err = require_active(kFn)) return err;
  if (int err = check_handle(kFn, request)) return err;
  Request* r = request_impl(*request);
  if (r == nullptr || !r->persistent)
    return raise_error(nullptr, MPI_ERR_REQUEST, kFn, "request is not a persistent request");
  if (r->active)
    return raise_error(r->comm, MPI_ERR_REQUEST, kFn, "request is active: complete it first");
  return mpi::start_request(kFn, r);
}
TORUSMPI_WEAK_ALIAS(MPI_Start);

int PMPI_Startall(int count, MPI_Request array_of_requests[]) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Startall";
  if (int err = require_active(kFn)) return err;
  if (int err = check_handles(kFn, count, array_of_requests)) return err;
  for (int i = 0; i < count; ++i) {
    Request* r = request_impl(array_of_requests[i]);
    if (r == nullptr || !r->persistent || r->active) {
      return raise_error(r != nullptr ? r->comm : nullptr, MPI_ERR_REQUEST, kFn,
                         "array_of_requests[%d] is not an inactive persistent request", i);
    }
  }
  for (int i = 0; i < count; ++i) {
    if (int err = mpi::start_request(kFn, request_impl(array_of_requests[i]))) return err;
  }
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Startall);

int PMPI_Request_free(MPI_Request* request) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Request_free";
  if (int err = require_active(kFn)) return err;
  if (int err = check_handle(kFn, request)) return err;
  Request* r = request_impl(*request);
  if (r == nullptr)
    return raise_error(nullptr, MPI_ERR_REQUEST, kFn, "request argument is MPI_REQUEST_NULL");
  if (r->kind == Request::Kind::kColl && (!r->persistent || r->active)) {
    return raise_error(r->comm, MPI_ERR_REQUEST, kFn,
                       "request is of %s: a%s collective's request may not be freed, only "
                       "completed",
                       r->fn, r->persistent ? "n active persistent" : " nonblocking");
  }
  if (r->gfreed) {
    return raise_error(nullptr, MPI_ERR_REQUEST, kFn,
                       "request argument is a generalized request freed already");
  }
  *request = MPI_REQUEST_NULL;
  if (r->kind == Request::Kind::kGrequest) {
    // free_fn runs once the request is both complete and freed: now, or at MPI_Grequest_complete.
    if (!r->complete()) {
      r->gfreed = true;
      return MPI_SUCCESS;
    }
    int err = call_free(r);
    Request::release(r);
    if (err != MPI_SUCCESS) {
      return raise_error(nullptr, err, kFn, "the generalized request's free_fn returned error %d",
                         err);
    }
    return MPI_SUCCESS;
  }
  // Under the lock (taken above), so that the progress thread cannot complete the operation
  // between the test and the hand-over (the request would then be left to no one).
  if (!r->active || r->complete()) {
    if (r->active) mpi::drain_request(r);
    Request::release(r);
  } else {
    // The operation goes on; its request goes when the pml is done with it.
    r->pml.user = r;
    r->pml.on_complete = delete_on_completion;
  }
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Request_free);

int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Request_get_status";
  if (int err = require_active(kFn)) return err;
  if (int err = check_handle(kFn, &request)) return err;
  if (flag == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "flag argument is NULL");
  Request* r = request_impl(request);
  if (!active(r)) {
    *flag = 1;
    mpi::set_empty_status(status);
    return MPI_SUCCESS;
  }
  if (!r->complete()) progress::poll();
  *flag = r->complete();
  if (*flag && r->kind == Request::Kind::kGrequest) {
    int err = query_status(r, status);
    if (err != MPI_SUCCESS) {
      return raise_error(nullptr, err, kFn, "the generalized request's query_fn returned error %d",
                         err);
    }
  } else if (*flag) {
    // Complete means the receive buffer holds the message, though the request lives on.
    if (r->buffer.staged()) mpi::drain_request(r);
    fill_status(*r, status);
  }
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Request_get_status);

// Receives that have not matched are cancelled at once. A send is cancelled if its receiver has
// not matched it yet (the pml asks the receiver: see pml::cancel); its completion then says which.
// A buffered send is complete and its copy the library's: never cancelled. A generalized request
// hands the question to its cancel_fn, with whether it is complete already.
int PMPI_Cancel(MPI_Request* request) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Cancel";
  if (int err = require_active(kFn)) return err;
  if (int err = check_handle(kFn, request)) return err;
  Request* r = request_impl(*request);
  if (r == nullptr)
    return raise_error(nullptr, MPI_ERR_REQUEST, kFn, "request argument is MPI_REQUEST_NULL");
  if (!r->active)
    return raise_error(r->comm, MPI_ERR_REQUEST, kFn, "request is an inactive persistent request");
  if (r->kind == Request::Kind::kColl) {
    return raise_error(r->comm, MPI_ERR_REQUEST, kFn,
                       "request is of %s: nonblocking collectives cannot be cancelled", r->fn);
  }
  if (r->kind == Request::Kind::kGrequest) {
    if (r->gfreed) {
      return raise_error(nullptr, MPI_ERR_REQUEST, kFn,
                         "request argument is a generalized request freed already");
    }
    int err = call_cancel(r, r->complete());
    if (err != MPI_SUCCESS) {
      return raise_error(nullptr, err, kFn, "the generalized request's cancel_fn returned error %d",
                         err);
    }
    return MPI_SUCCESS;
  }
  if ((r->kind == Request::Kind::kRecv || r->kind == Request::Kind::kSend) && !r->immediate)
    pml::cancel(&r->pml);
  return MPI_SUCCESS;
}

int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                        MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                        MPI_Request* request) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Grequest_start";
  if (int err = require_active(kFn)) return err;
  if (request == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "request argument is NULL");
  // Open MPI takes NULL callbacks, as doing nothing (query_fn: an empty status): so do we.
  Request* r = Request::make();
  r->kind = Request::Kind::kGrequest;
  r->query_fn = query_fn;
  r->free_fn = free_fn;
  r->cancel_fn = cancel_fn;
  r->extra_state = extra_state;
  r->grequest_funcs_are_c() = 1;  // Open MPI's Fortran binding clears it on return
  *request = &r->handle;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Grequest_start);

int PMPI_Grequest_complete(MPI_Request request) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Grequest_complete";
  if (int err = require_active(kFn)) return err;
  Request* r = request_impl(request);
  if (r == nullptr || r->kind != Request::Kind::kGrequest) {
    return raise_error(
        nullptr, MPI_ERR_REQUEST, kFn, "request argument is %s",
        request == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL" : "not a generalized request");
  }
  if (r->complete()) {
    return raise_error(nullptr, MPI_ERR_REQUEST, kFn,
                       "request argument is a generalized request completed already");
  }
  __atomic_store_n(&r->gcomplete, true, __ATOMIC_RELEASE);
  if (r->gfreed) {
    // MPI_Request_free came first: the request ends here, and nobody will query it.
    int err = call_free(r);
    Request::release(r);
    if (err != MPI_SUCCESS) {
      return raise_error(nullptr, err, kFn, "the generalized request's free_fn returned error %d",
                         err);
    }
  }
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Grequest_complete);
TORUSMPI_WEAK_ALIAS(MPI_Cancel);

int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Test_cancelled";
  if (int err = require_active(kFn)) return err;
  if (status == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "status argument is NULL");
  if (flag == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "flag argument is NULL");
  *flag = status->_cancelled != 0;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Test_cancelled);

namespace {

// How many whole `type`s (or, `elements`, basic elements) a status holds; MPI_UNDEFINED when the
// bytes end inside one, or when the answer does not fit T. A type without data counts 0.
template <class T>
int count_of(const char* fn, const MPI_Status* status, MPI_Datatype type, bool elements, T* count) {
  if (int err = require_active(fn)) return err;
  if (status == nullptr) return raise_error(nullptr, MPI_ERR_ARG, fn, "status argument is NULL");
  if (count == nullptr) return raise_error(nullptr, MPI_ERR_ARG, fn, "count argument is NULL");
  if (const char* why = mpi::bad_datatype(type))
    return raise_error(nullptr, MPI_ERR_TYPE, fn, "datatype argument is %s", why);
  const torusmpi::dtype::Type* t = mpi::engine_type(type);
  int64_t bytes = static_cast<int64_t>(status->_ucount), n;
  if (t->size() == 0) {
    n = 0;
  } else if (elements) {
    n = t->elements_in(bytes);  // a pair type (MPI_DOUBLE_INT) holds two basic elements
  } else {
    n = bytes % t->size() == 0 ? bytes / t->size() : -1;
  }
  *count = n >= 0 && n <= std::numeric_limits<T>::max() ? static_cast<T>(n) : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

// `count` basic elements of a stream of `type`: a derived type's last one may be partial.
template <class T>
int set_elements(const char* fn, MPI_Status* status, MPI_Datatype type, T count) {
  if (int err = require_active(fn)) return err;
  if (status == nullptr) return raise_error(nullptr, MPI_ERR_ARG, fn, "status argument is NULL");
  if (const char* why = mpi::bad_datatype(type))
    return raise_error(nullptr, MPI_ERR_TYPE, fn, "datatype argument is %s", why);
  if (count < 0) {
    return raise_error(nullptr, MPI_ERR_COUNT, fn, "count argument is %lld",
                       static_cast<long long>(count));
  }
  status->_ucount = static_cast<size_t>(mpi::engine_type(type)->bytes_of_elements(count));
  return MPI_SUCCESS;
}

}  // namespace

int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  torusmpi::progress::Lock lock;
  return count_of("MPI_Get_count", status, datatype, false, count);
}
TORUSMPI_WEAK_ALIAS(MPI_Get_count);

// Basic elements: a predefined datatype is one, except the pair types, which are two.
int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  torusmpi::progress::Lock lock;
  return count_of("MPI_Get_elements", status, datatype, true, count);
}
TORUSMPI_WEAK_ALIAS(MPI_Get_elements);

int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  torusmpi::progress::Lock lock;
  return count_of("MPI_Get_elements_x", status, datatype, true, count);
}
TORUSMPI_WEAK_ALIAS(MPI_Get_elements_x);

int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  torusmpi::progress::Lock lock;
  return set_elements("MPI_Status_set_elements", status, datatype, count);
}
TORUSMPI_WEAK_ALIAS(MPI_Status_set_elements);

int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  torusmpi::progress::Lock lock;
  return set_elements("MPI_Status_set_elements_x", status, datatype, count);
}
TORUSMPI_WEAK_ALIAS(MPI_Status_set_elements_x);

int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Status_set_cancelled";
  if (int err = require_active(kFn)) return err;
  if (status == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "status argument is NULL");
  status->_cancelled = flag != 0;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Status_set_cancelled);
