! fortran_f08: the Fortran 2008 bindings, use mpi_f08.
!
!   fortran_f08         any number of ranks, 1 included
!
! A program built against Open MPI's mpi_f08 module must run unchanged: handles are derived types
! (TYPE(MPI_Comm), TYPE(MPI_Datatype), ...) holding the same integers as in mpif.h, statuses are
! TYPE(MPI_Status), ierror is optional, callbacks follow the module's abstract interfaces (a user
! op gets its vectors as TYPE(C_PTR) by value), and attribute values are
! INTEGER(KIND=MPI_ADDRESS_KIND). Buffers of any type and rank are passed as they are.
! The checks are those of fortran_common.inc (see there), and handles compared with == and /=,
! which mpi_f08 defines. Open MPI 4.1's mpi_f08 has no MPI_Status_f2f08 / MPI_Status_f082f (they
! came with MPI-4), so they are not used. The tests of fortran_common.inc and
! fortran_typed_buffers.inc are shared with the other bindings; those here hold handles in
! variables of mpi_f08's types, and call MPI without ierror unless they check it.

module f08_tests
  use, intrinsic :: iso_fortran_env, only: output_unit, error_unit
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  use mpi_f08
  implicit none
  private
  public :: run_tests, finish

  character(len=*), parameter :: BINDING = 'mpi_f08'
  type(MPI_Datatype), parameter :: REDUCE_TYPES(3) = [MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION]
  type(MPI_Op), parameter :: REDUCE_OPS(3) = [MPI_SUM, MPI_MAX, MPI_PROD]
  type(MPI_Comm) :: report_comm

  ! fortran_common.inc ends the declarations with its `contains`: procedures follow.
  include 'fortran_common.inc'
  include 'fortran_typed_buffers.inc'

  ! The integer a handle holds, as the callbacks of fortran_common.inc keep it.
  elemental integer function hval(h)
    type(MPI_Datatype), intent(in) :: h
    hval = h%MPI_VAL
  end function hval

  ! mpi_f08's callbacks, with its handle types, hand over to those of fortran_common.inc.
  subroutine f08_copy_add_one(oldcomm, keyval, extra_state, val_in, val_out, flag, ierr)
    type(MPI_Comm) :: oldcomm
    integer :: keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, val_in, val_out
    logical :: flag
    call copy_add_one(oldcomm%MPI_VAL, keyval, extra_state, val_in, val_out, flag, ierr)
  end subroutine f08_copy_add_one

  subroutine f08_delete_count(comm, keyval, val, extra_state, ierr)
    type(MPI_Comm) :: comm
    integer :: keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: val, extra_state
    call delete_count(comm%MPI_VAL, keyval, val, extra_state, ierr)
  end subroutine f08_delete_count

  subroutine f08_record_error(comm, code)
    type(MPI_Comm) :: comm
    integer :: code
    call record_error(comm%MPI_VAL, code)
  end subroutine f08_record_error

  ! mpi_f08 hands a user op its vectors as C pointers.
  subroutine f08_matmul_op(invec_ptr, inoutvec_ptr, len, dtype)
    type(c_ptr), value :: invec_ptr, inoutvec_ptr
    integer :: len
    type(MPI_Datatype) :: dtype
    integer, pointer :: invec(:, :), inoutvec(:, :)
    call c_f_pointer(invec_ptr, invec, [4, len])
    call c_f_pointer(inoutvec_ptr, inoutvec, [4, len])
    call matmul_op(invec, inoutvec, len, dtype%MPI_VAL)
  end subroutine f08_matmul_op

  subroutine f08_sum_mod_op(invec_ptr, inoutvec_ptr, len, dtype)
    type(c_ptr), value :: invec_ptr, inoutvec_ptr
    integer :: len
    type(MPI_Datatype) :: dtype
    integer, pointer :: invec(:), inoutvec(:)
    call c_f_pointer(invec_ptr, invec, [len])
    call c_f_pointer(inoutvec_ptr, inoutvec, [len])
    call sum_mod_op(invec, inoutvec, len, dtype%MPI_VAL)
  end subroutine f08_sum_mod_op

  ! Handles are compiled into the program: Open MPI's mpi_f08 puts the mpif.h integers in them.
  subroutine check_compiled_handles()
    call say('info '//str(rank)//' MPI_COMM_WORLD/SELF/NULL are '// &
             str(MPI_COMM_WORLD%MPI_VAL)//' '//str(MPI_COMM_SELF%MPI_VAL)//' '// &
             str(MPI_COMM_NULL%MPI_VAL))
    call check(MPI_COMM_WORLD%MPI_VAL == 0 .and. MPI_COMM_SELF%MPI_VAL == 1 .and. &
               MPI_COMM_NULL%MPI_VAL == 2, 'compiled communicator handles hold 0, 1, 2')
    call check(MPI_COMM_WORLD == MPI_COMM_WORLD .and. MPI_COMM_WORLD /= MPI_COMM_SELF .and. &
               .not. (MPI_INTEGER == MPI_REAL) .and. MPI_SUM /= MPI_MAX, &
               'operator == and /= on predefined handles')
  end subroutine check_compiled_handles

  subroutine receive_report(pass, rbuf, src, cnt, probe_tag, probe_count)
    integer, intent(in) :: pass
    integer, intent(out) :: rbuf(nprocs + 2), src, cnt, probe_tag, probe_count
    type(MPI_Status) :: status

    rbuf = -1
    probe_tag = -1
    probe_count = -1
    if (pass == 1) then
      call MPI_Recv(rbuf, nprocs + 1, MPI_INTEGER, MPI_ANY_SOURCE, 400, MPI_COMM_WORLD, status)
    else
      call MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status)
      call MPI_Get_count(status, MPI_INTEGER, probe_count)
      probe_tag = status%MPI_TAG
      call MPI_Recv(rbuf, probe_count, MPI_INTEGER, status%MPI_SOURCE, probe_tag, &
                    MPI_COMM_WORLD, status)
    end if
    src = status%MPI_SOURCE
    call MPI_Get_count(status, MPI_INTEGER, cnt)
  end subroutine receive_report

  subroutine test_point_to_point()
    type(MPI_Status) :: status, stats(2 * nprocs)
    type(MPI_Request) :: reqs(2 * nprocs)
    integer :: cnt, p, pass, src, dst
    integer :: sbuf(nprocs + 2), rbuf(nprocs + 2), pair(3), rpair(3)
    integer, asynchronous :: sall(3, 0:nprocs - 1), rall(3, 0:nprocs - 1)

    ! A ring where even ranks send first, so it cannot deadlock even with an odd size.
    sbuf = sent_by(rank, nprocs + 2)
    do pass = 1, 2
      rbuf = -1
      status%MPI_SOURCE = -99
      status%MPI_TAG = -99
      cnt = -1
      if (mod(rank, 2) == 0) then
        call MPI_Send(sbuf, rank + 1, MPI_INTEGER, right, 100 + rank, MPI_COMM_WORLD)
      end if
      if (pass == 1) then
        call MPI_Recv(rbuf, nprocs + 1, MPI_INTEGER, left, MPI_ANY_TAG, MPI_COMM_WORLD, status)
        call MPI_Get_count(status, MPI_INTEGER, cnt)
      else
        call MPI_Recv(rbuf, nprocs + 1, MPI_INTEGER, left, 100 + left, MPI_COMM_WORLD, &
                      MPI_STATUS_IGNORE)
      end if
      if (mod(rank, 2) /= 0) then
        call MPI_Send(sbuf, rank + 1, MPI_INTEGER, right, 100 + rank, MPI_COMM_WORLD)
      end if
      call check_ring(pass, status%MPI_SOURCE, status%MPI_TAG, cnt, rbuf)
    end do

    ! Everyone to everyone, self included, with an array of TYPE(MPI_Status) in the second pass.
    do pass = 1, 2
      rall = -1
      do p = 0, nprocs - 1
        sall(:, p) = [rank, p, pass]
        call MPI_Irecv(rall(1, p), 3, MPI_INTEGER, p, 200 + pass, MPI_COMM_WORLD, reqs(p + 1))
      end do
      do p = 0, nprocs - 1
        call MPI_Isend(sall(1, p), 3, MPI_INTEGER, p, 200 + pass, MPI_COMM_WORLD, &
                       reqs(nprocs + p + 1))
      end do
      stats%MPI_SOURCE = -99
      stats%MPI_TAG = -99
      if (pass == 1) then
        call MPI_Waitall(2 * nprocs, reqs, MPI_STATUSES_IGNORE, ierror=ierr)
      else
        call MPI_Waitall(2 * nprocs, reqs, stats, ierror=ierr)
      end if
      call check_all_to_all(pass, ierr, all(reqs == MPI_REQUEST_NULL), rall, &
                            stats(1:nprocs)%MPI_SOURCE, stats(1:nprocs)%MPI_TAG)
    end do

    pair = [rank, 7, -1]
    rpair = -1
    call MPI_Sendrecv(pair, 2, MPI_INTEGER, right, 300, rpair, 2, MPI_INTEGER, left, 300, &
                      MPI_COMM_WORLD, status)
    call check(all(rpair == [left, 7, -1]) .and. status%MPI_SOURCE == left .and. &
               status%MPI_TAG == 300, &
               'MPI_Sendrecv around the ring', &
               'got '//str(rpair(1))//' from '//str(status%MPI_SOURCE))

    call test_reports(sbuf)

    ! MPI_PROC_NULL: sends vanish, receives complete at once with an empty status.
    call MPI_Send(sbuf, 3, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, ierror=ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Send to MPI_PROC_NULL')
    rbuf = -1
    call MPI_Recv(rbuf, 3, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, status)
    call MPI_Get_count(status, MPI_INTEGER, cnt)
    call check(status%MPI_SOURCE == MPI_PROC_NULL .and. status%MPI_TAG == MPI_ANY_TAG .and. &
               cnt == 0 .and. all(rbuf == -1), 'MPI_Recv from MPI_PROC_NULL', &
               'source '//str(status%MPI_SOURCE)//' tag '//str(status%MPI_TAG)//' count '//str(cnt))
    call line_neighbours(src, dst)
    pair = [rank, 8, -1]
    rpair = -1
    call MPI_Sendrecv(pair, 2, MPI_INTEGER, dst, 301, rpair, 2, MPI_INTEGER, src, 301, &
                      MPI_COMM_WORLD, status)
    if (rank == 0) then
      call check(all(rpair == -1) .and. status%MPI_SOURCE == MPI_PROC_NULL, &
                 'MPI_Sendrecv with MPI_PROC_NULL ends', 'source '//str(status%MPI_SOURCE))
    else
      call check(all(rpair == [rank - 1, 8, -1]) .and. status%MPI_SOURCE == rank - 1, &
                 'MPI_Sendrecv with MPI_PROC_NULL ends', 'got '//str(rpair(1)))
    end if
  end subroutine test_point_to_point

  subroutine test_requests()
    integer, asynchronous :: sbuf(2), rbuf(2), one, got
    type(MPI_Request) :: sreq, rreq, req
    type(MPI_Status) :: status
    integer :: it
    logical :: ok
    character(len=200) :: why

    ok = .true.
    why = ''
    call MPI_Send_init(sbuf, 2, MPI_INTEGER, right, 500, MPI_COMM_WORLD, sreq)
    call MPI_Recv_init(rbuf, 2, MPI_INTEGER, left, 500, MPI_COMM_WORLD, rreq)
    do it = 1, 2
      sbuf = [rank, it]
      rbuf = -1
      call MPI_Start(rreq)
      call MPI_Start(sreq)
      call MPI_Wait(rreq, status)
      call MPI_Wait(sreq, MPI_STATUS_IGNORE)
      call expect(ok, why, all(rbuf == [left, it]), &
                  'round '//str(it)//' got '//str(rbuf(1))//','//str(rbuf(2)))
      call expect(ok, why, status%MPI_SOURCE == left, &
                  'round '//str(it)//' status source '//str(status%MPI_SOURCE))
      call expect(ok, why, sreq /= MPI_REQUEST_NULL .and. rreq /= MPI_REQUEST_NULL, &
                  'persistent request became MPI_REQUEST_NULL after MPI_Wait')
    end do
    call check(ok, 'persistent MPI_Send_init/MPI_Recv_init started twice', why)
    call MPI_Request_free(sreq)
    call MPI_Request_free(rreq)
    call check(sreq == MPI_REQUEST_NULL .and. rreq == MPI_REQUEST_NULL, &
               'MPI_Request_free sets MPI_REQUEST_NULL')

    one = 42
    got = -1
    call MPI_Irecv(got, 1, MPI_INTEGER, rank, 501, MPI_COMM_WORLD, rreq)
    call MPI_Isend(one, 1, MPI_INTEGER, rank, 501, MPI_COMM_WORLD, sreq)
    call MPI_Wait(sreq, MPI_STATUS_IGNORE)
    call MPI_Wait(rreq, MPI_STATUS_IGNORE)
    call check(sreq == MPI_REQUEST_NULL .and. rreq == MPI_REQUEST_NULL .and. got == 42, &
               'MPI_Wait on a nonpersistent request sets MPI_REQUEST_NULL')
    req = MPI_REQUEST_NULL
    status%MPI_SOURCE = -99
    status%MPI_TAG = -99
    call MPI_Wait(req, status, ierror=ierr)
    call check(ierr == MPI_SUCCESS .and. status%MPI_SOURCE == MPI_ANY_SOURCE .and. &
               status%MPI_TAG == MPI_ANY_TAG, &
               'MPI_Wait on MPI_REQUEST_NULL gives an empty status', &
               'source '//str(status%MPI_SOURCE)//' tag '//str(status%MPI_TAG))
  end subroutine test_requests

  subroutine alltoallw_case(c)
    integer, intent(in) :: c
    type(MPI_Datatype) :: pairt, stypes(0:nprocs - 1), rtypes(0:nprocs - 1)
    integer :: scnt(0:nprocs - 1), sdis(0:nprocs - 1), rcnt(0:nprocs - 1), rdis(0:nprocs - 1)
    integer :: i, isz
    logical :: send_pairs(0:nprocs - 1), recv_pairs
    integer, allocatable :: sbuf(:), rbuf(:), want(:)

    call MPI_Type_contiguous(2, MPI_INTEGER, pairt)
    call MPI_Type_commit(pairt)
    call MPI_Type_size(MPI_INTEGER, isz)
    call alltoallw_layout(c, isz, scnt, sdis, send_pairs, rcnt, rdis, recv_pairs, sbuf, want)
    stypes = merge(pairt, MPI_INTEGER, send_pairs)
    rtypes = merge(pairt, MPI_INTEGER, recv_pairs)
    rbuf = [(-1, i = 0, 2 * c * nprocs)]
    call MPI_Alltoallw(sbuf, scnt, sdis, stypes, rbuf, rcnt, rdis, rtypes, MPI_COMM_WORLD)
    call check_ints(rbuf, want, 'MPI_Alltoallw mixed types count '//str(2 * c))
    call MPI_Type_free(pairt)
  end subroutine alltoallw_case

  subroutine test_nonblocking_collectives()
    integer, parameter :: c = 1009
    integer, asynchronous :: sbuf(c), rbuf(c), buf(c)
    type(MPI_Request) :: req
    logical :: flag

    sbuf = vals(rank, 0, c)
    rbuf = -1
    call MPI_Iallreduce(sbuf, rbuf, c, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req)
    call MPI_Wait(req, MPI_STATUS_IGNORE)
    call check_ints(rbuf, sums(0, c), 'MPI_Iallreduce + MPI_Wait')
    call check(req == MPI_REQUEST_NULL, 'MPI_Wait frees the MPI_Iallreduce request')

    rbuf = -1
    call MPI_Iallreduce(sbuf, rbuf, c, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, req)
    flag = .false.
    do while (.not. flag)
      call MPI_Test(req, flag, MPI_STATUS_IGNORE)
    end do
    call check_ints(rbuf, vals(nprocs - 1, 0, c), 'MPI_Iallreduce MPI_MAX + MPI_Test loop')

    buf = -1
    if (rank == nprocs - 1) buf = vals(rank, 0, c)
    call MPI_Ibcast(buf, c, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD, req)
    flag = .false.
    do while (.not. flag)
      call MPI_Test(req, flag, MPI_STATUS_IGNORE)
    end do
    call check_ints(buf, vals(nprocs - 1, 0, c), 'MPI_Ibcast + MPI_Test loop')
    call check(req == MPI_REQUEST_NULL, 'MPI_Test frees the completed request')
  end subroutine test_nonblocking_collectives

  ! A datatype made of the absolute addresses of two variables, so MPI_BOTTOM is the buffer.
  subroutine test_bottom()
    integer :: iarr(5), riarr(5)
    type(MPI_Datatype) :: t_send, t_recv
    type(MPI_Request) :: req
    type(MPI_Status) :: status
    double precision :: dval, rdval
    integer(kind=MPI_ADDRESS_KIND) :: addr(2)

    call bottom_values(iarr, dval, riarr, rdval)
    call MPI_Get_address(iarr, addr(1))
    call MPI_Get_address(dval, addr(2))
    call MPI_Type_create_struct(2, [5, 1], addr, [MPI_INTEGER, MPI_DOUBLE_PRECISION], t_send)
    call MPI_Type_commit(t_send)
    call MPI_Bcast(MPI_BOTTOM, 1, t_send, 0, MPI_COMM_WORLD)
    ! The compiler cannot see MPI_Bcast write these variables.
    call MPI_F_sync_reg(iarr)
    call MPI_F_sync_reg(dval)
    call check_bottom_bcast(iarr, dval)
    call MPI_Get_address(riarr, addr(1))
    call MPI_Get_address(rdval, addr(2))
    call MPI_Type_create_struct(2, [5, 1], addr, [MPI_INTEGER, MPI_DOUBLE_PRECISION], t_recv)
    call MPI_Type_commit(t_recv)
    call MPI_Irecv(MPI_BOTTOM, 1, t_recv, left, 600, MPI_COMM_WORLD, req)
    call MPI_Send(MPI_BOTTOM, 1, t_send, right, 600, MPI_COMM_WORLD)
    call MPI_Wait(req, status)
    call MPI_F_sync_reg(riarr)
    call MPI_F_sync_reg(rdval)
    call check(all(riarr == bottom_sent(left)) .and. rdval == left + 0.25d0, &
               'MPI_Send/MPI_Irecv of MPI_BOTTOM', 'first element '//str(riarr(1)))
    call MPI_Type_free(t_send)
    call MPI_Type_free(t_recv)
  end subroutine test_bottom

  subroutine test_attributes()
    integer(kind=MPI_ADDRESS_KIND), parameter :: big = 2_MPI_ADDRESS_KIND**33 + 5
    integer(kind=MPI_ADDRESS_KIND) :: v, extra
    integer :: kv_dup, kv_add, kv_none, deletes, allflags(2)
    type(MPI_Comm) :: c1, c2
    logical :: flag, flag2

    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, v, flag)
    call check(flag .and. v >= 32767, 'MPI_TAG_UB attribute is at least 32767', 'value '//str(v))
    ! Whether these are set depends on how the job was started; every rank must agree.
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, v, flag)
    if (flag) call check(v >= 0, 'MPI_APPNUM is not negative', 'value '//str(v))
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, v, flag2)
    if (flag2) call check(v >= 1, 'MPI_UNIVERSE_SIZE is positive', 'value '//str(v))
    allflags = merge(1, 0, [flag, flag2])
    call MPI_Allreduce(MPI_IN_PLACE, allflags, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    call check(all(allflags == 0 .or. allflags == nprocs), &
               'MPI_APPNUM and MPI_UNIVERSE_SIZE flags agree on every rank')

    extra = 4242
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, f08_delete_count, kv_dup, 0_MPI_ADDRESS_KIND)
    call MPI_Comm_create_keyval(f08_copy_add_one, f08_delete_count, kv_add, extra)
    call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv_none, &
                                0_MPI_ADDRESS_KIND)
    call MPI_Comm_dup(MPI_COMM_WORLD, c1)
    call MPI_Comm_set_attr(c1, kv_dup, big)
    call MPI_Comm_set_attr(c1, kv_add, 41_MPI_ADDRESS_KIND)
    call MPI_Comm_set_attr(c1, kv_none, -7_MPI_ADDRESS_KIND)
    call MPI_Comm_get_attr(c1, kv_dup, v, flag)
    call check(flag .and. v == big, 'MPI_Comm_set_attr/get_attr keeps a value above 2**32', &
               'value '//str(v))
    call MPI_Comm_get_attr(c1, kv_none, v, flag)
    call check(flag .and. v == -7, 'MPI_Comm_get_attr of a negative value', 'value '//str(v))

    copy_calls = 0
    call MPI_Comm_dup(c1, c2)
    call check(copy_calls == 1 .and. copy_extra == extra .and. copy_oldcomm == c1%MPI_VAL, &
               'MPI_Comm_dup calls the copy callback once, with the old communicator', &
               str(copy_calls)//' calls, extra_state '//str(copy_extra)// &
               ', comm '//str(copy_oldcomm))
    call MPI_Comm_get_attr(c2, kv_dup, v, flag)
    call check(flag .and. v == big, 'MPI_COMM_DUP_FN copies the value', 'value '//str(v))
    call MPI_Comm_get_attr(c2, kv_add, v, flag)
    call check(flag .and. v == 42, 'user copy callback gives the copy value+1', 'value '//str(v))
    call MPI_Comm_get_attr(c2, kv_none, v, flag)
    call check(.not. flag, 'MPI_COMM_NULL_COPY_FN leaves the attribute out of the copy')

    deletes = delete_calls
    call MPI_Comm_delete_attr(c2, kv_add)
    call check(delete_calls == deletes + 1 .and. delete_last == 42, &
               'MPI_Comm_delete_attr calls the delete callback', 'last value '//str(delete_last))
    call MPI_Comm_get_attr(c2, kv_add, v, flag)
    call check(.not. flag, 'deleted attribute is gone')
    call MPI_Comm_set_attr(c1, kv_add, 50_MPI_ADDRESS_KIND)
    call check(delete_calls == deletes + 2 .and. delete_last == 41, &
               'replacing a value calls the delete callback on the old one', &
               'last value '//str(delete_last))
    call MPI_Comm_free(c2)
    call check(delete_calls == deletes + 3 .and. delete_last == big .and. c2 == MPI_COMM_NULL, &
               'MPI_Comm_free calls the delete callback', str(delete_calls - deletes)//' calls')
    call MPI_Comm_free(c1)
    call check(delete_calls == deletes + 5, 'MPI_Comm_free deletes every attribute', &
               str(delete_calls - deletes)//' calls')
    call MPI_Comm_free_keyval(kv_dup)
    call MPI_Comm_free_keyval(kv_add)
    call MPI_Comm_free_keyval(kv_none)
    call check(kv_dup == MPI_KEYVAL_INVALID .and. kv_add == MPI_KEYVAL_INVALID .and. &
               kv_none == MPI_KEYVAL_INVALID, 'MPI_Comm_free_keyval sets MPI_KEYVAL_INVALID')
  end subroutine test_attributes

  subroutine test_type_attributes()
    type(MPI_Datatype) :: t, t2
    integer(kind=MPI_ADDRESS_KIND), parameter :: big = 2_MPI_ADDRESS_KIND**40 + 3
    integer(kind=MPI_ADDRESS_KIND) :: v
    integer :: tk
    logical :: flag

    call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, tk, 0_MPI_ADDRESS_KIND)
    call MPI_Type_contiguous(2, MPI_INTEGER, t)
    call MPI_Type_set_attr(t, tk, big)
    call MPI_Type_get_attr(t, tk, v, flag)
    call check(flag .and. v == big, 'MPI_Type_set_attr/get_attr 64-bit value', 'value '//str(v))
    call MPI_Type_dup(t, t2)
    call MPI_Type_get_attr(t2, tk, v, flag)
    call check(flag .and. v == big, 'MPI_Type_dup copies the attribute with MPI_TYPE_DUP_FN', &
               'value '//str(v))
    call MPI_Type_delete_attr(t, tk)
    call MPI_Type_get_attr(t, tk, v, flag)
    call check(.not. flag, 'MPI_Type_delete_attr removes the attribute')
    call MPI_Type_free(t)
    call MPI_Type_free(t2)
    call MPI_Type_free_keyval(tk)
    call check(tk == MPI_KEYVAL_INVALID .and. t == MPI_DATATYPE_NULL &
               .and. t2 == MPI_DATATYPE_NULL, &
               'MPI_Type_free_keyval and MPI_Type_free reset the handles')
  end subroutine test_type_attributes

  subroutine test_errhandlers()
    type(MPI_Comm) :: wdup, edup
    type(MPI_Errhandler) :: eh, eh2
    integer :: cls, code, errclass, slen, rc, buf(1)
    integer(kind=MPI_ADDRESS_KIND) :: lastused
    logical :: flag
    character(len=MPI_MAX_ERROR_STRING) :: msg

    buf = 0
    call MPI_Comm_dup(MPI_COMM_WORLD, wdup)
    call MPI_Comm_set_errhandler(wdup, MPI_ERRORS_RETURN)
    call MPI_Send(buf, 1, MPI_INTEGER, nprocs, 0, wdup, rc)
    call MPI_Error_class(rc, errclass)
    call check(rc /= MPI_SUCCESS .and. errclass == MPI_ERR_RANK, &
               'MPI_ERRORS_RETURN: send to rank size is MPI_ERR_RANK', &
               'code '//str(rc)//' class '//str(errclass))
    msg = ''
    call MPI_Error_string(rc, msg, slen, ierror=ierr)
    call check(ierr == MPI_SUCCESS .and. slen > 0 .and. len_trim(msg(1:max(slen, 1))) > 0, &
               'MPI_Error_string of that error is not empty')
    ! To itself, so that a count wrongly accepted would still not hang.
    call MPI_Send(buf, -1, MPI_INTEGER, rank, 0, wdup, rc)
    call MPI_Error_class(rc, errclass)
    call check(rc /= MPI_SUCCESS .and. errclass == MPI_ERR_COUNT, &
               'MPI_ERRORS_RETURN: negative count is MPI_ERR_COUNT', &
               'code '//str(rc)//' class '//str(errclass))

    call MPI_Comm_create_errhandler(f08_record_error, eh)
    call MPI_Comm_dup(MPI_COMM_WORLD, edup)
    call MPI_Comm_set_errhandler(edup, eh)
    call MPI_Comm_get_errhandler(edup, eh2)
    call check(eh2 == eh, 'MPI_Comm_get_errhandler returns the user handler', &
               str(eh2%MPI_VAL)//' vs '//str(eh%MPI_VAL))
    call MPI_Errhandler_free(eh2)
    call check(eh2 == MPI_ERRHANDLER_NULL, 'MPI_Errhandler_free sets MPI_ERRHANDLER_NULL')

    eh_calls = 0
    call MPI_Send(buf, 1, MPI_INTEGER, nprocs, 0, edup, rc)
    call MPI_Error_class(eh_code, errclass)
    call check(eh_calls == 1 .and. eh_comm == edup%MPI_VAL .and. errclass == MPI_ERR_RANK, &
               'Fortran error handler called once with the communicator and MPI_ERR_RANK', &
               str(eh_calls)//' calls, comm '//str(eh_comm)//' class '//str(errclass))
    call check(rc /= MPI_SUCCESS, 'the failing call still returns its error code', str(rc))

    call MPI_Add_error_class(cls)
    call MPI_Add_error_code(cls, code)
    call MPI_Add_error_string(code, 'user-defined error of the Fortran test')
    eh_calls = 0
    call MPI_Comm_call_errhandler(edup, code, rc)
    call check(eh_calls == 1 .and. eh_code == code .and. eh_comm == edup%MPI_VAL, &
               'MPI_Comm_call_errhandler with a user error code', &
               str(eh_calls)//' calls, code '//str(eh_code)//' wanted '//str(code))
    call MPI_Error_class(code, errclass)
    call check(errclass == cls, 'MPI_Error_class of a user code is its user class', &
               str(errclass)//' vs '//str(cls))
    msg = ''
    call MPI_Error_string(code, msg, slen)
    call check(msg(1:max(slen, 1)) == 'user-defined error of the Fortran test', &
               'MPI_Error_string of a user code', msg(1:max(slen, 1)))
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, lastused, flag)
    call check(flag .and. lastused >= code, 'MPI_LASTUSEDCODE covers the new code', str(lastused))

    call MPI_Errhandler_free(eh)
    call check(eh == MPI_ERRHANDLER_NULL, 'MPI_Errhandler_free of the user handler')
    call MPI_Comm_free(edup)
    call MPI_Comm_free(wdup)
  end subroutine test_errhandlers

  subroutine check_shape(t, want_size, want_lb, want_extent, what)
    type(MPI_Datatype), intent(in) :: t
    integer, intent(in) :: want_size
    integer(kind=MPI_ADDRESS_KIND), intent(in) :: want_lb, want_extent
    character(len=*), intent(in) :: what
    integer :: sz
    integer(kind=MPI_ADDRESS_KIND) :: lb, extent
    call MPI_Type_size(t, sz)
    call MPI_Type_get_extent(t, lb, extent)
    call check(sz == want_size .and. lb == want_lb .and. extent == want_extent, &
               what//' size and extent', &
               'size '//str(sz)//' lb '//str(lb)//' extent '//str(extent))
  end subroutine check_shape

  subroutine test_datatypes()
    integer, parameter :: nrec = 3
    type(MPI_Datatype) :: t3, rowt, rowr, subt, structt, recst
    type(MPI_Status) :: status
    integer :: i, j
    integer :: a(4, 5), b(5, 4), s(6, 5), sbuf(7), rbuf(7), rrow(6), la(4, 5)
    type(record) :: recs(nrec + 1), rrecs(nrec + 1)
    integer(kind=MPI_ADDRESS_KIND) :: base, disp(2), rext

    ! Contiguous: 2 x 3 integers arrive as 6 plain integers.
    call MPI_Type_contiguous(3, MPI_INTEGER, t3)
    call MPI_Type_commit(t3)
    call check_shape(t3, 12, 0_MPI_ADDRESS_KIND, 12_MPI_ADDRESS_KIND, 'MPI_Type_contiguous')
    sbuf = [(rank * 10 + i, i = 1, 7)]
    rbuf = -1
    call MPI_Sendrecv(sbuf, 2, t3, right, 700, rbuf, 6, MPI_INTEGER, left, 700, &
                      MPI_COMM_WORLD, status)
    call check_ints(rbuf, [(left * 10 + i, i = 1, 6), -1], 'MPI_Type_contiguous data')

    ! Vector: Fortran stores matrices by column, so the strided slice is a row.
    a = reshape([((rank * 100 + 10 * i + j, i = 1, 4), j = 1, 5)], [4, 5])
    la = reshape([((left * 100 + 10 * i + j, i = 1, 4), j = 1, 5)], [4, 5])
    call MPI_Type_vector(5, 1, 4, MPI_INTEGER, rowt)
    call MPI_Type_commit(rowt)
    call check_shape(rowt, 20, 0_MPI_ADDRESS_KIND, 68_MPI_ADDRESS_KIND, 'MPI_Type_vector')
    rrow = -1
    call MPI_Sendrecv(a(2, 1), 1, rowt, right, 701, rrow, 5, MPI_INTEGER, left, 701, &
                      MPI_COMM_WORLD, status)
    call check_ints(rrow, [la(2, :), -1], 'MPI_Type_vector sends a strided matrix row')

    ! Resized to one integer, consecutive rows follow each other: the matrix goes transposed.
    call MPI_Type_create_resized(rowt, 0_MPI_ADDRESS_KIND, 4_MPI_ADDRESS_KIND, rowr)
    call MPI_Type_commit(rowr)
    call check_shape(rowr, 20, 0_MPI_ADDRESS_KIND, 4_MPI_ADDRESS_KIND, 'MPI_Type_create_resized')
    b = -1
    call MPI_Sendrecv(a, 4, rowr, right, 702, b, 20, MPI_INTEGER, left, 702, &
                      MPI_COMM_WORLD, status)
    call check_ints(reshape(b, [20]), reshape(transpose(la), [20]), &
                    'MPI_Type_create_resized transposes')

    ! Subarray: rows 2-3, columns 3-5 of a 6x5 array, in Fortran order.
    s = reshape([((rank * 100 + 10 * i + j, i = 1, 6), j = 1, 5)], [6, 5])
    call MPI_Type_create_subarray(2, [6, 5], [2, 3], [1, 2], MPI_ORDER_FORTRAN, MPI_INTEGER, subt)
    call MPI_Type_commit(subt)
    call check_shape(subt, 24, 0_MPI_ADDRESS_KIND, 120_MPI_ADDRESS_KIND, 'MPI_Type_create_subarray')
    rbuf = -1
    call MPI_Sendrecv(s, 1, subt, right, 703, rbuf, 6, MPI_INTEGER, left, 703, &
                      MPI_COMM_WORLD, status)
    call check_ints(rbuf, [((left * 100 + 10 * i + j, i = 2, 3), j = 3, 5), -1], &
                    'MPI_Type_create_subarray data')

    ! Struct of two integers and a double, resized to the spacing of the array elements. The
    ! last record is a guard that must not be written.
    call MPI_Get_address(recs(1), base)
    call MPI_Get_address(recs(1)%i, disp(1))
    call MPI_Get_address(recs(1)%d, disp(2))
    call MPI_Get_address(recs(2), rext)
    disp = disp - base
    rext = rext - base
    call MPI_Type_create_struct(2, [2, 1], disp, [MPI_INTEGER, MPI_DOUBLE_PRECISION], structt)
    call MPI_Type_create_resized(structt, 0_MPI_ADDRESS_KIND, rext, recst)
    call MPI_Type_commit(recst)
    call check_shape(recst, 16, 0_MPI_ADDRESS_KIND, rext, 'MPI_Type_create_struct')
    call fill_records(recs, rrecs)
    call MPI_Sendrecv(recs, nrec, recst, right, 704, rrecs, nrec, recst, left, 704, &
                      MPI_COMM_WORLD, status)
    call check(records_arrived(rrecs), 'MPI_Type_create_struct array of records')

    call MPI_Type_free(t3)
    call MPI_Type_free(rowt)
    call MPI_Type_free(rowr)
    call MPI_Type_free(subt)
    call MPI_Type_free(structt)
    call MPI_Type_free(recst)
  end subroutine test_datatypes

  subroutine test_f90_types()
    type(MPI_Datatype) :: treal, tint, tcplx, tmatch
    integer :: sz, i, dsz
    real(kind=dp) :: x(5), y(5)
    integer(kind=ik) :: ix(5), iy(5)
    complex(kind=dp) :: z(3), w(3)
    integer :: iscalar
    double precision :: dscalar
    logical :: lscalar

    call MPI_Type_create_f90_real(15, 300, treal)
    call MPI_Type_size(treal, sz)
    call MPI_Type_size(MPI_DOUBLE_PRECISION, dsz)
    call check(sz == 8 .and. dsz == 8, &
               'MPI_Type_create_f90_real(15,300) has the size of MPI_DOUBLE_PRECISION', &
               str(sz))
    x = [(rank + i * 0.25_dp, i = 1, 5)]
    call MPI_Allreduce(x, y, 5, treal, MPI_SUM, MPI_COMM_WORLD)
    call check(all(y == [(nprocs * (nprocs - 1) / 2 + nprocs * i * 0.25_dp, i = 1, 5)]), &
               'MPI_Allreduce on the f90 real type')

    call MPI_Type_create_f90_integer(9, tint)
    call MPI_Type_size(tint, sz)
    call check(sz == storage_size(ix(1)) / 8, 'MPI_Type_create_f90_integer(9) size', str(sz))
    ix = [(rank * 10 + i, i = 1, 5)]
    call MPI_Allreduce(ix, iy, 5, tint, MPI_MAX, MPI_COMM_WORLD)
    call check_ints(int(iy), [((nprocs - 1) * 10 + i, i = 1, 5)], &
                    'MPI_Allreduce on the f90 integer type')

    call MPI_Type_create_f90_complex(15, 300, tcplx)
    call MPI_Type_size(tcplx, sz)
    call check(sz == 16, 'MPI_Type_create_f90_complex(15,300) size', str(sz))
    z = [(cmplx(rank, i, kind=dp), i = 1, 3)]
    call MPI_Allreduce(z, w, 3, tcplx, MPI_SUM, MPI_COMM_WORLD)
    call check(all(w == [(cmplx(nprocs * (nprocs - 1) / 2, nprocs * i, kind=dp), i = 1, 3)]), &
               'MPI_Allreduce on the f90 complex type')

    call MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, tmatch, ierror=ierr)
    call MPI_Type_size(tmatch, sz)
    call check(ierr == MPI_SUCCESS .and. sz == 8, 'MPI_Type_match_size(MPI_TYPECLASS_REAL, 8)', &
               str(sz))
    call MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, tmatch, ierror=ierr)
    call MPI_Type_size(tmatch, sz)
    call check(ierr == MPI_SUCCESS .and. sz == 4, &
               'MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4)', str(sz))
    call MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, tmatch, ierror=ierr)
    call MPI_Type_size(tmatch, sz)
    call check(ierr == MPI_SUCCESS .and. sz == 16, &
               'MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16)', str(sz))

    iscalar = 0
    dscalar = 0d0
    lscalar = .false.
    call MPI_Sizeof(iscalar, sz)
    call check(sz == 4, 'MPI_Sizeof(INTEGER)', str(sz))
    call MPI_Sizeof(dscalar, sz)
    call check(sz == 8, 'MPI_Sizeof(DOUBLE PRECISION)', str(sz))
    call MPI_Sizeof(z, sz)
    call check(sz == 16, 'MPI_Sizeof(COMPLEX(dp) array) is the element size', str(sz))
    call MPI_Sizeof(lscalar, sz)
    call check(sz == 4, 'MPI_Sizeof(LOGICAL)', str(sz))
  end subroutine test_f90_types

  subroutine test_comm_split()
    type(MPI_Comm) :: sc, rc, dup
    type(MPI_Group) :: gw, gs
    integer :: color, ssize, srank, result, i, want_cmp
    integer :: sranks(nprocs), wranks(nprocs), other(1), tr(1)

    ! Split by parity, ordered by descending world rank.
    color = mod(rank, 2)
    call MPI_Comm_split(MPI_COMM_WORLD, color, -rank, sc)
    call MPI_Comm_size(sc, ssize)
    call MPI_Comm_rank(sc, srank)
    call check(ssize == (nprocs - color + 1) / 2 .and. srank == (nprocs - 1 - rank) / 2, &
               'MPI_Comm_split by parity, key -rank', 'size '//str(ssize)//' rank '//str(srank))

    call MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, result)
    call check(result == MPI_IDENT, 'MPI_Comm_compare of a communicator with itself is MPI_IDENT')
    call MPI_Comm_dup(MPI_COMM_WORLD, dup)
    call MPI_Comm_compare(MPI_COMM_WORLD, dup, result)
    call check(result == MPI_CONGRUENT, 'MPI_Comm_compare with a dup is MPI_CONGRUENT')
    want_cmp = MPI_UNEQUAL
    if (nprocs == 1) want_cmp = MPI_CONGRUENT
    call MPI_Comm_compare(MPI_COMM_WORLD, sc, result)
    call check(result == want_cmp, 'MPI_Comm_compare with the parity split', str(result))
    call MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, rc)
    want_cmp = MPI_SIMILAR
    if (nprocs == 1) want_cmp = MPI_CONGRUENT
    call MPI_Comm_compare(MPI_COMM_WORLD, rc, result)
    call check(result == want_cmp, 'MPI_Comm_compare with the reversed order is MPI_SIMILAR', &
               str(result))

    call MPI_Comm_group(MPI_COMM_WORLD, gw)
    call MPI_Comm_group(sc, gs)
    sranks = [(i, i = 0, nprocs - 1)]
    wranks = -1
    call MPI_Group_translate_ranks(gs, ssize, sranks, gw, wranks)
    call check_split_ranks(wranks(1:ssize), color)
    if (nprocs > 1) then
      ! A neighbour, which has the other parity.
      other = rank + 1
      if (rank == nprocs - 1) other = rank - 1
      call MPI_Group_translate_ranks(gw, 1, other, gs, tr)
      call check(tr(1) == MPI_UNDEFINED, &
                 'MPI_Group_translate_ranks of a rank outside is MPI_UNDEFINED', &
                 str(tr(1)))
    end if
    call MPI_Group_free(gw)
    call MPI_Group_free(gs)
    call check(gw == MPI_GROUP_NULL .and. gs == MPI_GROUP_NULL, &
               'MPI_Group_free sets MPI_GROUP_NULL')
    call MPI_Comm_free(sc)
    call MPI_Comm_free(rc)
    call MPI_Comm_free(dup)
  end subroutine test_comm_split

  subroutine test_user_ops()
    integer, parameter :: nmat = 3, c = 1009
    type(MPI_Datatype) :: matt
    type(MPI_Op) :: opm, ops
    integer :: root
    integer :: mine(4, nmat), res(4, nmat), want(4, nmat)
    integer :: sbuf(c), rbuf(c), wsum(c)
    logical :: commute, ok
    character(len=200) :: why

    call MPI_Type_contiguous(4, MPI_INTEGER, matt)
    call MPI_Type_commit(matt)
    call MPI_Op_create(f08_matmul_op, .false., opm)
    call MPI_Op_create(f08_sum_mod_op, .true., ops)
    call MPI_Op_commutative(opm, commute)
    call check(.not. commute, 'MPI_Op_commutative of a non-commutative Fortran op')
    call MPI_Op_commutative(ops, commute)
    call check(commute, 'MPI_Op_commutative of a commutative Fortran op')

    call matrix_operands(mine, want)
    res = -1
    op_last_type = -1
    call MPI_Allreduce(mine, res, nmat, matt, opm, MPI_COMM_WORLD)
    call check_ints(reshape(res, [4 * nmat]), reshape(want, [4 * nmat]), &
                    'MPI_Allreduce with a non-commutative Fortran op keeps rank order')
    call check_op_datatype(matt%MPI_VAL)
    ok = .true.
    why = ''
    do root = 0, nprocs - 1
      res = -1
      call MPI_Reduce(mine, res, nmat, matt, opm, root, MPI_COMM_WORLD)
      if (rank == root) call expect(ok, why, all(res == want), 'wrong product at root '//str(root))
    end do
    call check(ok, 'MPI_Reduce with a non-commutative Fortran op to every root', why)

    call sum_mod_operands(sbuf, wsum)
    rbuf = -1
    call MPI_Allreduce(sbuf, rbuf, c, MPI_INTEGER, ops, MPI_COMM_WORLD)
    call check_ints(rbuf, wsum, 'MPI_Allreduce with a commutative Fortran op count 1009')
    rbuf = -1
    call MPI_Reduce(sbuf, rbuf, c, MPI_INTEGER, ops, nprocs - 1, MPI_COMM_WORLD)
    if (rank == nprocs - 1) call check_ints(rbuf, wsum, 'MPI_Reduce with a commutative Fortran op')

    call MPI_Op_free(opm)
    call MPI_Op_free(ops)
    call check(opm == MPI_OP_NULL .and. ops == MPI_OP_NULL, 'MPI_Op_free sets MPI_OP_NULL')
    call MPI_Type_free(matt)
  end subroutine test_user_ops

end module f08_tests

program fortran_f08
  use f08_tests
  implicit none
  call run_tests()
  call finish()
end program fortran_f08
