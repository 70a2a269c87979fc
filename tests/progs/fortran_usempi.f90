! fortran_usempi: the Fortran bindings reached through the mpi module (use mpi).
!
!   fortran_usempi      any number of ranks, 1 included
!
! A program built against Open MPI's mpi module must run unchanged: its handles are the compiled
! integer constants of the module, MPI_BOTTOM / MPI_IN_PLACE / MPI_STATUS(ES)_IGNORE are the
! addresses of common blocks, callbacks are Fortran subroutines taking every argument by
! reference, and attribute values are INTEGER(KIND=MPI_ADDRESS_KIND). The module's interfaces
! take a buffer of any type and rank, so data is passed here as it is: whole arrays of INTEGER,
! REAL, DOUBLE PRECISION, LOGICAL, COMPLEX, derived types, and scalars.
! Checked, one "ok/FAIL <rank> <check>" line per case, then "done <rank> of <size> ...":
! - point-to-point: statuses, MPI_STATUS(ES)_IGNORE, nonblocking, MPI_ANY_SOURCE, MPI_Probe,
!   MPI_PROC_NULL, persistent requests and MPI_REQUEST_NULL;
! - every collective at counts 0, 1, size-1, size, size+1 and 1009, from every root, in place
!   where MPI allows it, and the nonblocking MPI_Iallreduce / MPI_Ibcast;
! - MPI_BOTTOM with a datatype of absolute addresses;
! - attributes with Fortran copy and delete callbacks, 64-bit values;
! - error handlers written in Fortran, user error classes and codes;
! - derived datatypes, the MPI_Type_create_f90_* types, MPI_Type_match_size, MPI_Sizeof;
! - MPI_Comm_split, MPI_Comm_compare, groups;
! - reduction ops written in Fortran, commutative and not.
! Every value is an integer (or a real holding one), so every result is compared exactly. Rank 0
! prints the lines of every rank (see say). Buffers have one spare element at the end, kept at
! -1, which catches writes past the end.

! The reporting, and the callbacks with the state they share with the program: procedures handed
! to MPI cannot be internal ones of the program.
module usempi_support
  use, intrinsic :: iso_fortran_env, only: output_unit, error_unit
  use mpi
  implicit none
  private

  public :: start, say, check, check_ints, expect, str, finish
  public :: copy_add_one, delete_count, copy_calls, copy_extra, copy_oldcomm, delete_calls, &
      delete_last
  public :: record_error, eh_calls, eh_comm, eh_code
  public :: matmul_op, sum_mod_op, mulmod, op_last_type, SUM_MODULUS

  integer, parameter :: MATRIX_MODULUS = 9973, SUM_MODULUS = 7919

  integer :: my_rank = -1, report_comm
  integer :: n_checks = 0, n_failed = 0
  character(len=:), allocatable :: report

  integer :: copy_calls = 0, delete_calls = 0, copy_oldcomm = -1, delete_comm = -1
  integer(kind=MPI_ADDRESS_KIND) :: copy_extra = -1, delete_last = -1
  integer :: eh_calls = 0, eh_comm = -1, eh_code = -1
  integer :: op_last_type = -1

  interface str
    module procedure str_int, str_aint
  end interface

contains

  ! Open MPI's mpirun forwards each rank's output in 4096-byte pieces, so lines printed by several
  ! ranks at once can be cut into each other. Only rank 0 prints: the other ranks keep their lines
  ! and send them to it at the end (finish). A failure is also written to stderr at once, so that
  ! it is seen even if the rank dies before the end.
  subroutine say(line)
    character(len=*), intent(in) :: line
    if (my_rank == 0) then
      write (output_unit, '(a)') line
      flush (output_unit)
    else
      report = report//line//new_line('a')
      if (line(1:min(4, len(line))) == 'FAIL') then
        write (error_unit, '(a)') line
        flush (error_unit)
      end if
    end if
  end subroutine say

  subroutine start(rank, nprocs)
    integer, intent(out) :: rank, nprocs
    integer :: ierr
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    my_rank = rank
    report = ''
    ! The reports travel on their own communicator, apart from every tested message.
    call MPI_Comm_dup(MPI_COMM_WORLD, report_comm, ierr)
  end subroutine start

  subroutine check(cond, what, detail)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    character(len=*), intent(in), optional :: detail
    n_checks = n_checks + 1
    if (cond) then
      call say('ok '//str(my_rank)//' '//what)
      return
    end if
    n_failed = n_failed + 1
    if (present(detail)) then
      call say('FAIL '//str(my_rank)//' '//what//': '//trim(detail))
    else
      call say('FAIL '//str(my_rank)//' '//what//': condition false')
    end if
  end subroutine check

  ! One check over a whole buffer; the detail names the first element that differs.
  subroutine check_ints(got, want, what)
    integer, intent(in) :: got(:), want(:)
    character(len=*), intent(in) :: what
    integer :: i
    if (size(got) /= size(want)) then
      call check(.false., what, 'size '//str(size(got))//', expected '//str(size(want)))
      return
    end if
    do i = 1, size(got)
      if (got(i) /= want(i)) then
        call check(.false., what, &
                   'element '//str(i)//' is '//str(got(i))//', expected '//str(want(i)))
        return
      end if
    end do
    call check(.true., what)
  end subroutine check_ints

  ! Accumulates a check made of many cases: keeps the first failure's reason.
  subroutine expect(ok, why, cond, reason)
    logical, intent(inout) :: ok
    character(len=*), intent(inout) :: why
    logical, intent(in) :: cond
    character(len=*), intent(in) :: reason
    if (cond .or. .not. ok) return
    ok = .false.
    why = reason
  end subroutine expect

  function str_int(i) result(s)
    integer, intent(in) :: i
    character(len=:), allocatable :: s
    character(len=24) :: buf
    write (buf, '(i0)') i
    s = trim(buf)
  end function str_int

  function str_aint(i) result(s)
    integer(kind=MPI_ADDRESS_KIND), intent(in) :: i
    character(len=:), allocatable :: s
    character(len=24) :: buf
    write (buf, '(i0)') i
    s = trim(buf)
  end function str_aint

  ! Prints the summary line (rank 0 prints every rank's report, in rank order), ends MPI, and
  ! makes the exit status say whether anything failed.
  subroutine finish(nprocs)
    integer, intent(in) :: nprocs
    integer :: ierr, r, n
    character(len=:), allocatable :: text

    call say('done '//str(my_rank)//' of '//str(nprocs)//': '//str(n_checks)//' checks, '// &
             str(n_failed)//' failed')
    if (my_rank == 0) then
      do r = 1, nprocs - 1
        call MPI_Recv(n, 1, MPI_INTEGER, r, 1, report_comm, MPI_STATUS_IGNORE, ierr)
        allocate (character(len=n) :: text)
        call MPI_Recv(text, n, MPI_CHARACTER, r, 2, report_comm, MPI_STATUS_IGNORE, ierr)
        write (output_unit, '(a)', advance='no') text
        flush (output_unit)
        deallocate (text)
      end do
    else
      n = len(report)
      call MPI_Send(n, 1, MPI_INTEGER, 0, 1, report_comm, ierr)
      call MPI_Send(report, n, MPI_CHARACTER, 0, 2, report_comm, ierr)
    end if
    call MPI_Comm_free(report_comm, ierr)
    call MPI_Finalize(ierr)
    if (n_failed /= 0) stop 1
  end subroutine finish

  ! Communicator copy callback: the copy gets the value plus one, so the test can see it ran.
  subroutine copy_add_one(oldcomm, keyval, extra_state, val_in, val_out, flag, ierr)
    integer :: oldcomm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, val_in, val_out
    logical :: flag
    copy_calls = copy_calls + 1
    copy_extra = extra_state
    copy_oldcomm = oldcomm
    val_out = val_in + 1
    flag = .true.
    ierr = MPI_SUCCESS
    if (keyval == MPI_KEYVAL_INVALID) ierr = MPI_ERR_OTHER
  end subroutine copy_add_one

  ! The communicator is kept but never checked: Open MPI 4.1 hands Fortran delete callbacks a
  ! value read from the keyval object instead of the communicator's handle.
  subroutine delete_count(comm, keyval, val, extra_state, ierr)
    integer :: comm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: val, extra_state
    delete_calls = delete_calls + 1
    delete_last = val
    delete_comm = comm
    ierr = MPI_SUCCESS
    if (keyval == MPI_KEYVAL_INVALID .or. extra_state < 0) ierr = MPI_ERR_OTHER
  end subroutine delete_count

  subroutine record_error(comm, code)
    integer :: comm, code
    eh_calls = eh_calls + 1
    eh_comm = comm
    eh_code = code
  end subroutine record_error

  pure function mulmod(a, b) result(c)
    integer, intent(in) :: a(2, 2), b(2, 2)
    integer :: c(2, 2)
    c = mod(matmul(a, b), MATRIX_MODULUS)
  end function mulmod

  ! Not commutative: each element is a 2x2 matrix; the lower rank's operand is on the left.
  subroutine matmul_op(invec, inoutvec, len, dtype)
    integer :: len, dtype
    integer :: invec(4, len), inoutvec(4, len)
    integer :: k
    op_last_type = dtype
    do k = 1, len
      inoutvec(:, k) = reshape(mulmod(reshape(invec(:, k), [2, 2]), &
                                      reshape(inoutvec(:, k), [2, 2])), [4])
    end do
  end subroutine matmul_op

  subroutine sum_mod_op(invec, inoutvec, len, dtype)
    integer :: len, dtype
    integer :: invec(len), inoutvec(len)
    if (dtype /= MPI_INTEGER) then
      inoutvec = -1
      return
    end if
    inoutvec = mod(invec + inoutvec, SUM_MODULUS)
  end subroutine sum_mod_op

end module usempi_support

program fortran_usempi
  use mpi
  use usempi_support
  implicit none

  integer :: ierr, rank, nprocs, right, left
  integer :: counts(6)

  call MPI_Init(ierr)
  call start(rank, nprocs)
  right = mod(rank + 1, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)
  ! The counts every collective is tried with: empty, one, around the number of ranks, a prime.
  counts = [0, 1, nprocs - 1, nprocs, nprocs + 1, 1009]

  call test_environment()
  call test_point_to_point()
  call test_requests()
  call test_bcast_reduce()
  call test_allreduce()
  call test_gathers()
  call test_scatters()
  call test_reduce_scatter()
  call test_alltoall()
  call test_scans()
  call test_nonblocking_collectives()
  call test_bottom()
  call test_attributes()
  call test_type_attributes()
  call test_errhandlers()
  call test_datatypes()
  call test_f90_types()
  call test_comm_split()
  call test_user_ops()

  call finish(nprocs)

contains

  ! What rank r contributes at index i, and its sum over all ranks.
  pure integer function val(r, i)
    integer, intent(in) :: r, i
    val = 100000 * r + i
  end function val

  pure integer function val_sum(i)
    integer, intent(in) :: i
    val_sum = 100000 * (nprocs * (nprocs - 1) / 2) + nprocs * i
  end function val_sum

  ! val(r, first+1 .. first+n), and the same summed over the ranks.
  pure function vals(r, first, n) result(v)
    integer, intent(in) :: r, first, n
    integer :: v(n), i
    v = [(val(r, first + i), i = 1, n)]
  end function vals

  pure function sums(first, n) result(v)
    integer, intent(in) :: first, n
    integer :: v(n), i
    v = [(val_sum(first + i), i = 1, n)]
  end function sums

  ! Element i of the block rank s sends to rank d.
  pure integer function enc(s, d, i)
    integer, intent(in) :: s, d, i
    enc = (s * nprocs + d) * 5000 + i
  end function enc

  subroutine test_environment()
    logical :: flag
    integer :: version, subversion, namelen, selfsize
    character(len=MPI_MAX_PROCESSOR_NAME) :: pname
    double precision :: t1, t2, tick

    call MPI_Initialized(flag, ierr)
    call check(flag, 'MPI_Initialized is true')
    call MPI_Finalized(flag, ierr)
    call check(.not. flag, 'MPI_Finalized is false before MPI_Finalize')
    call MPI_Get_version(version, subversion, ierr)
    call check(version == MPI_VERSION .and. subversion == MPI_SUBVERSION, &
               'MPI_Get_version matches the mpi module', str(version)//'.'//str(subversion))
    call MPI_Get_processor_name(pname, namelen, ierr)
    call check(namelen > 0 .and. namelen <= MPI_MAX_PROCESSOR_NAME .and. &
               len_trim(pname(1:max(namelen, 1))) > 0, 'MPI_Get_processor_name', &
               'length '//str(namelen))
    t1 = MPI_Wtime()
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Barrier')
    t2 = MPI_Wtime()
    tick = MPI_Wtick()
    ! Open MPI counts MPI_Wtime from MPI_Init, so only the order is checked.
    call check(t2 >= t1, 'MPI_Wtime does not go back')
    call check(tick > 0d0 .and. tick < 1d0, 'MPI_Wtick is a fraction of a second')
    ! Handles are compiled into the program; Open MPI's mpi module makes them 0, 1, 2.
    call say('info '//str(rank)//' MPI_COMM_WORLD/SELF/NULL are '//str(MPI_COMM_WORLD)//' '// &
             str(MPI_COMM_SELF)//' '//str(MPI_COMM_NULL))
    call check(MPI_COMM_WORLD == 0 .and. MPI_COMM_SELF == 1 .and. MPI_COMM_NULL == 2, &
               'compiled communicator handles are 0, 1, 2')
    call MPI_Comm_size(MPI_COMM_SELF, selfsize, ierr)
    call check(selfsize == 1, 'MPI_COMM_SELF has one rank')
  end subroutine test_environment

  subroutine test_point_to_point()
    integer :: status(MPI_STATUS_SIZE), cnt, i, p, pass, src, dst
    integer :: sbuf(nprocs + 2), rbuf(nprocs + 2), pair(3), rpair(3)
    integer :: reqs(2 * nprocs), stats(MPI_STATUS_SIZE, 2 * nprocs)
    integer, asynchronous :: sall(3, 0:nprocs - 1), rall(3, 0:nprocs - 1)
    logical :: ok, seen(0:nprocs - 1)
    character(len=200) :: why

    ! A ring where even ranks send first, so it cannot deadlock even with an odd size.
    sbuf = [(rank * 1000 + i, i = 1, nprocs + 2)]
    do pass = 1, 2
      rbuf = -1
      status = -99
      if (mod(rank, 2) == 0) then
        call MPI_Send(sbuf, rank + 1, MPI_INTEGER, right, 100 + rank, MPI_COMM_WORLD, ierr)
      end if
      if (pass == 1) then
        call MPI_Recv(rbuf, nprocs + 1, MPI_INTEGER, left, MPI_ANY_TAG, MPI_COMM_WORLD, status, &
                      ierr)
      else
        call MPI_Recv(rbuf, nprocs + 1, MPI_INTEGER, left, 100 + left, MPI_COMM_WORLD, &
                      MPI_STATUS_IGNORE, ierr)
      end if
      if (mod(rank, 2) /= 0) then
        call MPI_Send(sbuf, rank + 1, MPI_INTEGER, right, 100 + rank, MPI_COMM_WORLD, ierr)
      end if
      if (pass == 1) then
        call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
        call check(status(MPI_SOURCE) == left .and. status(MPI_TAG) == 100 + left, &
                   'MPI_Recv status source and tag', &
                   'source '//str(status(MPI_SOURCE))//' tag '//str(status(MPI_TAG)))
        call check(cnt == left + 1, 'MPI_Get_count after MPI_Recv', str(cnt))
        call check_ints(rbuf(1:left + 2), [(left * 1000 + i, i = 1, left + 1), -1], &
                        'MPI_Send/MPI_Recv data')
      else
        call check_ints(rbuf(1:left + 2), [(left * 1000 + i, i = 1, left + 1), -1], &
                        'MPI_Recv with MPI_STATUS_IGNORE data')
      end if
    end do

    ! Everyone to everyone, self included; the second pass asks for the statuses.
    do pass = 1, 2
      rall = -1
      do p = 0, nprocs - 1
        sall(:, p) = [rank, p, pass]
        call MPI_Irecv(rall(1, p), 3, MPI_INTEGER, p, 200 + pass, MPI_COMM_WORLD, reqs(p + 1), ierr)
      end do
      do p = 0, nprocs - 1
        call MPI_Isend(sall(1, p), 3, MPI_INTEGER, p, 200 + pass, MPI_COMM_WORLD, &
                       reqs(nprocs + p + 1), ierr)
      end do
      ok = .true.
      why = ''
      if (pass == 1) then
        call MPI_Waitall(2 * nprocs, reqs, MPI_STATUSES_IGNORE, ierr)
      else
        stats = -99
        call MPI_Waitall(2 * nprocs, reqs, stats, ierr)
        do p = 0, nprocs - 1
          call expect(ok, why, stats(MPI_SOURCE, p + 1) == p .and. stats(MPI_TAG, p + 1) == 202, &
                      'status of receive from '//str(p)//' says source '// &
                      str(stats(MPI_SOURCE, p + 1))//' tag '//str(stats(MPI_TAG, p + 1)))
        end do
      end if
      call expect(ok, why, ierr == MPI_SUCCESS, 'MPI_Waitall returned '//str(ierr))
      call expect(ok, why, all(reqs == MPI_REQUEST_NULL), &
                  'requests not MPI_REQUEST_NULL after MPI_Waitall')
      do p = 0, nprocs - 1
        call expect(ok, why, all(rall(:, p) == [p, rank, pass]), 'wrong data from '//str(p))
      end do
      if (pass == 1) then
        call check(ok, 'MPI_Isend/MPI_Irecv all to all, MPI_Waitall with MPI_STATUSES_IGNORE', why)
      else
        call check(ok, 'MPI_Isend/MPI_Irecv all to all, MPI_Waitall with statuses', why)
      end if
    end do

    pair = [rank, 7, -1]
    rpair = -1
    call MPI_Sendrecv(pair, 2, MPI_INTEGER, right, 300, rpair, 2, MPI_INTEGER, left, 300, &
                      MPI_COMM_WORLD, status, ierr)
    call check(all(rpair == [left, 7, -1]) .and. status(MPI_SOURCE) == left .and. &
               status(MPI_TAG) == 300, &
               'MPI_Sendrecv around the ring', &
               'got '//str(rpair(1))//' from '//str(status(MPI_SOURCE)))

    ! Everyone reports to rank 0, which takes the messages in whatever order they come:
    ! first by MPI_ANY_SOURCE receives, then by MPI_Probe and a receive sized from its status.
    if (rank /= 0) then
      call MPI_Send(sbuf, rank + 1, MPI_INTEGER, 0, 400, MPI_COMM_WORLD, ierr)
      call MPI_Send(sbuf, rank + 1, MPI_INTEGER, 0, 401, MPI_COMM_WORLD, ierr)
    else
      do pass = 1, 2
        ok = .true.
        why = ''
        seen = .false.
        seen(0) = .true.
        do p = 1, nprocs - 1
          rbuf = -1
          if (pass == 1) then
            call MPI_Recv(rbuf, nprocs + 1, MPI_INTEGER, MPI_ANY_SOURCE, 400, MPI_COMM_WORLD, &
                          status, ierr)
            src = status(MPI_SOURCE)
          else
            call MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
            src = status(MPI_SOURCE)
            call expect(ok, why, status(MPI_TAG) == 401, 'probe saw tag '//str(status(MPI_TAG)))
            call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
            call expect(ok, why, cnt == src + 1, 'probe count '//str(cnt)//' from '//str(src))
            call MPI_Recv(rbuf, cnt, MPI_INTEGER, src, status(MPI_TAG), MPI_COMM_WORLD, status, &
                          ierr)
          end if
          if (src < 1 .or. src >= nprocs) then
            call expect(ok, why, .false., 'message from bad source '//str(src))
            cycle
          end if
          call expect(ok, why, .not. seen(src), 'two messages from '//str(src))
          seen(src) = .true.
          call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
          call expect(ok, why, cnt == src + 1, 'count '//str(cnt)//' from '//str(src))
          call expect(ok, why, all(rbuf(1:src + 2) == [(src * 1000 + i, i = 1, src + 1), -1]), &
                      'wrong data from '//str(src))
        end do
        call expect(ok, why, all(seen), 'a sender was never seen')
        if (pass == 1) then
          call check(ok, 'MPI_Recv from MPI_ANY_SOURCE gets every sender once', why)
        else
          call check(ok, 'MPI_Probe then MPI_Recv of the probed size', why)
        end if
      end do
    end if
    ! Nobody goes on to the next test's messages while rank 0 still probes with wildcards.
    call MPI_Barrier(MPI_COMM_WORLD, ierr)

    ! MPI_PROC_NULL: sends vanish, receives complete at once with an empty status.
    call MPI_Send(sbuf, 3, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Send to MPI_PROC_NULL')
    rbuf = -1
    call MPI_Recv(rbuf, 3, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, status, ierr)
    call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
    call check(status(MPI_SOURCE) == MPI_PROC_NULL .and. status(MPI_TAG) == MPI_ANY_TAG .and. &
               cnt == 0 .and. all(rbuf == -1), 'MPI_Recv from MPI_PROC_NULL', &
               'source '//str(status(MPI_SOURCE))//' tag '//str(status(MPI_TAG))// &
               ' count '//str(cnt))
    ! A line, not a ring: the ends talk to MPI_PROC_NULL.
    src = rank - 1
    if (rank == 0) src = MPI_PROC_NULL
    dst = rank + 1
    if (rank == nprocs - 1) dst = MPI_PROC_NULL
    pair = [rank, 8, -1]
    rpair = -1
    call MPI_Sendrecv(pair, 2, MPI_INTEGER, dst, 301, rpair, 2, MPI_INTEGER, src, 301, &
                      MPI_COMM_WORLD, status, ierr)
    if (rank == 0) then
      call check(all(rpair == -1) .and. status(MPI_SOURCE) == MPI_PROC_NULL, &
                 'MPI_Sendrecv with MPI_PROC_NULL ends', 'source '//str(status(MPI_SOURCE)))
    else
      call check(all(rpair == [rank - 1, 8, -1]) .and. status(MPI_SOURCE) == rank - 1, &
                 'MPI_Sendrecv with MPI_PROC_NULL ends', 'got '//str(rpair(1)))
    end if
  end subroutine test_point_to_point

  subroutine test_requests()
    integer, asynchronous :: sbuf(2), rbuf(2), one, got
    integer :: sreq, rreq, req, it, status(MPI_STATUS_SIZE)
    logical :: ok
    character(len=200) :: why

    ok = .true.
    why = ''
    call MPI_Send_init(sbuf, 2, MPI_INTEGER, right, 500, MPI_COMM_WORLD, sreq, ierr)
    call MPI_Recv_init(rbuf, 2, MPI_INTEGER, left, 500, MPI_COMM_WORLD, rreq, ierr)
    do it = 1, 2
      sbuf = [rank, it]
      rbuf = -1
      call MPI_Start(rreq, ierr)
      call MPI_Start(sreq, ierr)
      call MPI_Wait(rreq, status, ierr)
      call MPI_Wait(sreq, MPI_STATUS_IGNORE, ierr)
      call expect(ok, why, all(rbuf == [left, it]), &
                  'round '//str(it)//' got '//str(rbuf(1))//','//str(rbuf(2)))
      call expect(ok, why, status(MPI_SOURCE) == left, &
                  'round '//str(it)//' status source '//str(status(MPI_SOURCE)))
      call expect(ok, why, sreq /= MPI_REQUEST_NULL .and. rreq /= MPI_REQUEST_NULL, &
                  'persistent request became MPI_REQUEST_NULL after MPI_Wait')
    end do
    call check(ok, 'persistent MPI_Send_init/MPI_Recv_init started twice', why)
    call MPI_Request_free(sreq, ierr)
    call MPI_Request_free(rreq, ierr)
    call check(sreq == MPI_REQUEST_NULL .and. rreq == MPI_REQUEST_NULL, &
               'MPI_Request_free sets MPI_REQUEST_NULL')

    one = 42
    got = -1
    call MPI_Irecv(got, 1, MPI_INTEGER, rank, 501, MPI_COMM_WORLD, rreq, ierr)
    call MPI_Isend(one, 1, MPI_INTEGER, rank, 501, MPI_COMM_WORLD, sreq, ierr)
    call MPI_Wait(sreq, MPI_STATUS_IGNORE, ierr)
    call MPI_Wait(rreq, MPI_STATUS_IGNORE, ierr)
    call check(sreq == MPI_REQUEST_NULL .and. rreq == MPI_REQUEST_NULL .and. got == 42, &
               'MPI_Wait on a nonpersistent request sets MPI_REQUEST_NULL')
    req = MPI_REQUEST_NULL
    status = -99
    call MPI_Wait(req, status, ierr)
    call check(ierr == MPI_SUCCESS .and. status(MPI_SOURCE) == MPI_ANY_SOURCE .and. &
               status(MPI_TAG) == MPI_ANY_TAG, &
               'MPI_Wait on MPI_REQUEST_NULL gives an empty status', &
               'source '//str(status(MPI_SOURCE))//' tag '//str(status(MPI_TAG)))
  end subroutine test_requests

  subroutine test_bcast_reduce()
    integer :: k, c, root
    integer, allocatable :: buf(:), rbuf(:)
    logical :: ok
    character(len=200) :: why

    do k = 1, size(counts)
      c = counts(k)
      ok = .true.
      why = ''
      do root = 0, nprocs - 1
        buf = [(-1, root = 0, c)]
        if (rank == root) buf = [vals(root, 0, c), -1]
        call MPI_Bcast(buf, c, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
        call expect(ok, why, all(buf == [vals(root, 0, c), -1]), 'wrong data from root '//str(root))
      end do
      call check(ok, 'MPI_Bcast count '//str(c)//' from every root', why)

      ok = .true.
      why = ''
      buf = [vals(rank, 0, c), -1]
      do root = 0, nprocs - 1
        rbuf = [(-1, root = 0, c)]
        call MPI_Reduce(buf, rbuf, c, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
        if (rank == root) call expect(ok, why, all(rbuf == [sums(0, c), -1]), &
                                      'wrong sum at root '//str(root))
      end do
      call check(ok, 'MPI_Reduce MPI_SUM count '//str(c)//' to every root', why)
    end do
  end subroutine test_bcast_reduce

  ! Rank r's element i for an op: products stay small, sums and maxima mix signs.
  pure integer function contrib(r, i, op)
    integer, intent(in) :: r, i, op
    if (op == MPI_PROD) then
      contrib = 1 + mod(r + i, 2)
    else
      contrib = mod(37 * r + i, 1000) - 500
    end if
  end function contrib

  ! MPI_Allreduce of contrib() with one predefined op on one Fortran type; the result, whatever
  ! its type, is compared as integers.
  subroutine allreduce_case(dtype, tname, op, oname, c)
    integer, intent(in) :: dtype, op, c
    character(len=*), intent(in) :: tname, oname
    integer :: i, r, want(c), got(c), mine(c), ib(c + 1), ir(c + 1)
    real :: rb(c + 1), rr(c + 1)
    double precision :: db(c + 1), dr(c + 1)
    logical :: guard_ok

    mine = [(contrib(rank, i, op), i = 1, c)]
    want = [(contrib(0, i, op), i = 1, c)]
    do r = 1, nprocs - 1
      do i = 1, c
        if (op == MPI_SUM) want(i) = want(i) + contrib(r, i, op)
        if (op == MPI_MAX) want(i) = max(want(i), contrib(r, i, op))
        if (op == MPI_PROD) want(i) = want(i) * contrib(r, i, op)
      end do
    end do
    if (dtype == MPI_INTEGER) then
      ib = [mine, -1]
      ir = -1
      call MPI_Allreduce(ib, ir, c, dtype, op, MPI_COMM_WORLD, ierr)
      got = ir(1:c)
      guard_ok = ir(c + 1) == -1
    else if (dtype == MPI_REAL) then
      rb = [real(mine), -1.0]
      rr = -1
      call MPI_Allreduce(rb, rr, c, dtype, op, MPI_COMM_WORLD, ierr)
      got = nint(rr(1:c))
      where (real(got) /= rr(1:c)) got = huge(0)
      guard_ok = rr(c + 1) == -1
    else
      db = [dble(mine), -1d0]
      dr = -1
      call MPI_Allreduce(db, dr, c, dtype, op, MPI_COMM_WORLD, ierr)
      got = nint(dr(1:c))
      where (dble(got) /= dr(1:c)) got = huge(0)
      guard_ok = dr(c + 1) == -1
    end if
    if (.not. guard_ok) got = huge(0)
    call check_ints(got, want, 'MPI_Allreduce '//oname//' '//tname//' count '//str(c))
  end subroutine allreduce_case

  subroutine test_allreduce()
    integer, parameter :: ntypes = 3, nops = 3
    integer :: types(ntypes), ops(nops), k, c, t, o, i, r
    character(len=20) :: tnames(ntypes), onames(nops)
    logical, allocatable :: lmine(:), lres(:), land(:), lor(:)
    integer, allocatable :: buf(:)

    types = [MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION]
    tnames = [character(len=20) :: 'MPI_INTEGER', 'MPI_REAL', 'MPI_DOUBLE_PRECISION']
    ops = [MPI_SUM, MPI_MAX, MPI_PROD]
    onames = [character(len=20) :: 'MPI_SUM', 'MPI_MAX', 'MPI_PROD']
    do k = 1, size(counts)
      c = counts(k)
      do t = 1, ntypes
        do o = 1, nops
          call allreduce_case(types(t), trim(tnames(t)), ops(o), trim(onames(o)), c)
        end do
      end do

      ! Fortran LOGICAL is its own type. The results are compared bit for bit with the
      ! compiler's own .true. and .false.: any other nonzero value would not be .true. to it.
      lmine = [(mod(rank + i, 3) /= 0, i = 1, c), .false.]
      land = [(.true., i = 1, c), .true.]
      lor = [(.false., i = 1, c), .true.]
      do r = 0, nprocs - 1
        land(1:c) = land(1:c) .and. [(mod(r + i, 3) /= 0, i = 1, c)]
        lor(1:c) = lor(1:c) .or. [(mod(r + i, 3) /= 0, i = 1, c)]
      end do
      lres = [(.true., i = 0, c)]
      call MPI_Allreduce(lmine, lres, c, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
      call check_ints(transfer(lres, [0]), transfer(land, [0]), &
                      'MPI_Allreduce MPI_LAND MPI_LOGICAL count '//str(c))
      lres = [(.true., i = 0, c)]
      call MPI_Allreduce(lmine, lres, c, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
      call check_ints(transfer(lres, [0]), transfer(lor, [0]), &
                      'MPI_Allreduce MPI_LOR MPI_LOGICAL count '//str(c))

      buf = [vals(rank, 0, c), -1]
      call MPI_Allreduce(MPI_IN_PLACE, buf, c, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
      call check_ints(buf, [sums(0, c), -1], 'MPI_Allreduce MPI_IN_PLACE count '//str(c))
    end do
  end subroutine test_allreduce

  ! Per-rank counts that shrink with the rank (so some are zero) and displacements that leave a
  ! one-element gap after every block, which must stay untouched.
  subroutine ragged(c, cnt, displs, total)
    integer, intent(in) :: c
    integer, intent(out) :: cnt(0:nprocs - 1), displs(0:nprocs - 1), total
    integer :: r
    total = 0
    do r = 0, nprocs - 1
      cnt(r) = max(0, c - r)
      displs(r) = total
      total = total + cnt(r) + 1
    end do
  end subroutine ragged

  subroutine test_gathers()
    integer :: k, c, r, root, total
    integer :: cnt(0:nprocs - 1), displs(0:nprocs - 1)
    integer, allocatable :: sbuf(:), rbuf(:), want(:)
    logical :: ok
    character(len=200) :: why

    do k = 1, size(counts)
      c = counts(k)
      sbuf = [vals(rank, 0, c), -1]
      want = [(vals(r, 0, c), r = 0, nprocs - 1), -1]
      rbuf = [(-1, r = 0, c * nprocs)]
      call MPI_Allgather(sbuf, c, MPI_INTEGER, rbuf, c, MPI_INTEGER, MPI_COMM_WORLD, ierr)
      call check_ints(rbuf, want, 'MPI_Allgather count '//str(c))
      rbuf = -1
      rbuf(rank * c + 1:rank * c + c) = sbuf(1:c)
      call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, c, MPI_INTEGER, &
                         MPI_COMM_WORLD, ierr)
      call check_ints(rbuf, want, 'MPI_Allgather MPI_IN_PLACE count '//str(c))

      ok = .true.
      why = ''
      do root = 0, nprocs - 1
        rbuf = -1
        call MPI_Gather(sbuf, c, MPI_INTEGER, rbuf, c, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
        if (rank == root) call expect(ok, why, all(rbuf == want), 'wrong data at root '//str(root))
      end do
      call check(ok, 'MPI_Gather count '//str(c)//' to every root', why)

      call ragged(c, cnt, displs, total)
      sbuf = [vals(rank, 0, cnt(rank)), -1]
      want = [(-1, r = 0, total)]
      do r = 0, nprocs - 1
        want(displs(r) + 1:displs(r) + cnt(r)) = vals(r, 0, cnt(r))
      end do
      rbuf = [(-1, r = 0, total)]
      call MPI_Allgatherv(sbuf, cnt(rank), MPI_INTEGER, rbuf, cnt, displs, MPI_INTEGER, &
                          MPI_COMM_WORLD, ierr)
      call check_ints(rbuf, want, 'MPI_Allgatherv ragged counts up to '//str(c))
      ok = .true.
      why = ''
      do root = 0, nprocs - 1
        rbuf = -1
        call MPI_Gatherv(sbuf, cnt(rank), MPI_INTEGER, rbuf, cnt, displs, MPI_INTEGER, root, &
                         MPI_COMM_WORLD, ierr)
        if (rank == root) call expect(ok, why, all(rbuf == want), 'wrong data at root '//str(root))
      end do
      call check(ok, 'MPI_Gatherv ragged counts up to '//str(c)//' to every root', why)
    end do
  end subroutine test_gathers

  subroutine test_scatters()
    integer :: k, c, r, root, total
    integer :: cnt(0:nprocs - 1), displs(0:nprocs - 1)
    integer, allocatable :: sbuf(:), rbuf(:)
    logical :: ok
    character(len=200) :: why

    do k = 1, size(counts)
      c = counts(k)
      ok = .true.
      why = ''
      do root = 0, nprocs - 1
        ! The root's block for rank r is what val() gives r, shifted by the root.
        sbuf = [(vals(r, root, c), r = 0, nprocs - 1), -1]
        rbuf = [(-1, r = 0, c)]
        call MPI_Scatter(sbuf, c, MPI_INTEGER, rbuf, c, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
        call expect(ok, why, all(rbuf == [vals(rank, root, c), -1]), &
                    'wrong data from root '//str(root))
      end do
      call check(ok, 'MPI_Scatter count '//str(c)//' from every root', why)

      call ragged(c, cnt, displs, total)
      ok = .true.
      why = ''
      do root = 0, nprocs - 1
        sbuf = [(-1, r = 0, total)]
        do r = 0, nprocs - 1
          sbuf(displs(r) + 1:displs(r) + cnt(r)) = vals(r, root, cnt(r))
        end do
        rbuf = [(-1, r = 0, cnt(rank))]
        call MPI_Scatterv(sbuf, cnt, displs, MPI_INTEGER, rbuf, cnt(rank), MPI_INTEGER, root, &
                          MPI_COMM_WORLD, ierr)
        call expect(ok, why, all(rbuf == [vals(rank, root, cnt(rank)), -1]), &
                    'wrong data from root '//str(root))
      end do
      call check(ok, 'MPI_Scatterv ragged counts up to '//str(c)//' from every root', why)
    end do
  end subroutine test_scatters

  subroutine test_reduce_scatter()
    integer :: k, c, r, total, off
    integer :: cnt(0:nprocs - 1)
    integer, allocatable :: sbuf(:), rbuf(:), want(:)

    do k = 1, size(counts)
      c = counts(k)
      ! MPI_Reduce_scatter: rank r keeps max(0, c-r) elements of the sum.
      do r = 0, nprocs - 1
        cnt(r) = max(0, c - r)
      end do
      total = sum(cnt)
      off = sum(cnt(0:rank - 1))
      sbuf = [vals(rank, 0, total), -1]
      want = [sums(off, cnt(rank)), -1]
      rbuf = [(-1, r = 0, cnt(rank))]
      call MPI_Reduce_scatter(sbuf, rbuf, cnt, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
      call check_ints(rbuf, want, 'MPI_Reduce_scatter counts up to '//str(c))
      call MPI_Reduce_scatter(MPI_IN_PLACE, sbuf, cnt, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
      call check_ints(sbuf(1:cnt(rank)), want(1:cnt(rank)), &
                      'MPI_Reduce_scatter MPI_IN_PLACE counts up to '//str(c))

      sbuf = [vals(rank, 0, c * nprocs), -1]
      want = [sums(rank * c, c), -1]
      rbuf = [(-1, r = 0, c)]
      call MPI_Reduce_scatter_block(sbuf, rbuf, c, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
      call check_ints(rbuf, want, 'MPI_Reduce_scatter_block count '//str(c))
      call MPI_Reduce_scatter_block(MPI_IN_PLACE, sbuf, c, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                                    ierr)
      call check_ints(sbuf(1:c), want(1:c), 'MPI_Reduce_scatter_block MPI_IN_PLACE count '//str(c))
    end do
  end subroutine test_reduce_scatter

  ! How many elements rank s sends rank d in MPI_Alltoallv: up to c, sometimes fewer.
  pure integer function pair_count(c, s, d)
    integer, intent(in) :: c, s, d
    pair_count = max(0, c - mod(s + 2 * d, 3))
  end function pair_count

  subroutine test_alltoall()
    integer :: k, c, d, s, i, isz, pairt
    integer :: scnt(0:nprocs - 1), sdis(0:nprocs - 1), rcnt(0:nprocs - 1), rdis(0:nprocs - 1)
    integer :: stypes(0:nprocs - 1), rtypes(0:nprocs - 1)
    integer, allocatable :: sbuf(:), rbuf(:), want(:)

    call MPI_Type_contiguous(2, MPI_INTEGER, pairt, ierr)
    call MPI_Type_commit(pairt, ierr)
    call MPI_Type_size(MPI_INTEGER, isz, ierr)
    do k = 1, size(counts)
      c = counts(k)
      sbuf = [((enc(rank, d, i), i = 1, c), d = 0, nprocs - 1), -1]
      want = [((enc(s, rank, i), i = 1, c), s = 0, nprocs - 1), -1]
      rbuf = [(-1, i = 0, c * nprocs)]
      call MPI_Alltoall(sbuf, c, MPI_INTEGER, rbuf, c, MPI_INTEGER, MPI_COMM_WORLD, ierr)
      call check_ints(rbuf, want, 'MPI_Alltoall count '//str(c))
      rbuf = sbuf
      call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, c, MPI_INTEGER, MPI_COMM_WORLD, &
                        ierr)
      call check_ints(rbuf, want, 'MPI_Alltoall MPI_IN_PLACE count '//str(c))

      ! Blocks c+1 apart when sent, c+2 apart when received: the gaps must stay -1.
      sbuf = [(-1, i = 0, (c + 1) * nprocs)]
      want = [(-1, i = 0, (c + 2) * nprocs)]
      do d = 0, nprocs - 1
        scnt(d) = pair_count(c, rank, d)
        sdis(d) = d * (c + 1)
        sbuf(sdis(d) + 1:sdis(d) + scnt(d)) = [(enc(rank, d, i), i = 1, scnt(d))]
        rcnt(d) = pair_count(c, d, rank)
        rdis(d) = d * (c + 2)
        want(rdis(d) + 1:rdis(d) + rcnt(d)) = [(enc(d, rank, i), i = 1, rcnt(d))]
      end do
      rbuf = [(-1, i = 0, (c + 2) * nprocs)]
      call MPI_Alltoallv(sbuf, scnt, sdis, MPI_INTEGER, rbuf, rcnt, rdis, MPI_INTEGER, &
                         MPI_COMM_WORLD, ierr)
      call check_ints(rbuf, want, 'MPI_Alltoallv counts up to '//str(c))

      ! Alltoallw: even ranks are sent plain integers and receive pairs, odd ranks the other way
      ! round, so the type maps differ and only the signatures agree. Displacements are in bytes.
      sbuf = [((enc(rank, d, i), i = 1, 2 * c), d = 0, nprocs - 1), -1]
      want = [((enc(s, rank, i), i = 1, 2 * c), s = 0, nprocs - 1), -1]
      do d = 0, nprocs - 1
        sdis(d) = d * 2 * c * isz
        rdis(d) = sdis(d)
        if (mod(d, 2) == 0) then
          stypes(d) = MPI_INTEGER
          scnt(d) = 2 * c
        else
          stypes(d) = pairt
          scnt(d) = c
        end if
        if (mod(rank, 2) == 0) then
          rtypes(d) = pairt
          rcnt(d) = c
        else
          rtypes(d) = MPI_INTEGER
          rcnt(d) = 2 * c
        end if
      end do
      rbuf = [(-1, i = 0, 2 * c * nprocs)]
      call MPI_Alltoallw(sbuf, scnt, sdis, stypes, rbuf, rcnt, rdis, rtypes, MPI_COMM_WORLD, ierr)
      call check_ints(rbuf, want, 'MPI_Alltoallw mixed types count '//str(2 * c))
    end do
    call MPI_Type_free(pairt, ierr)
  end subroutine test_alltoall

  subroutine test_scans()
    integer :: k, c, i, r
    integer, allocatable :: sbuf(:), rbuf(:), want(:)

    do k = 1, size(counts)
      c = counts(k)
      sbuf = [vals(rank, 0, c), -1]
      want = [(sum([(val(r, i), r = 0, rank)]), i = 1, c), -1]
      rbuf = [(-1, i = 0, c)]
      call MPI_Scan(sbuf, rbuf, c, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
      call check_ints(rbuf, want, 'MPI_Scan count '//str(c))
      ! MPI_Exscan leaves rank 0's buffer undefined.
      want = [(sum([(val(r, i), r = 0, rank - 1)]), i = 1, c), -1]
      rbuf = -1
      call MPI_Exscan(sbuf, rbuf, c, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
      if (rank > 0) call check_ints(rbuf, want, 'MPI_Exscan count '//str(c))
    end do
  end subroutine test_scans

  subroutine test_nonblocking_collectives()
    integer, parameter :: c = 1009
    integer, asynchronous :: sbuf(c), rbuf(c), buf(c)
    integer :: req
    logical :: flag

    sbuf = vals(rank, 0, c)
    rbuf = -1
    call MPI_Iallreduce(sbuf, rbuf, c, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check_ints(rbuf, sums(0, c), 'MPI_Iallreduce + MPI_Wait')
    call check(req == MPI_REQUEST_NULL, 'MPI_Wait frees the MPI_Iallreduce request')

    rbuf = -1
    call MPI_Iallreduce(sbuf, rbuf, c, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, req, ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
    end do
    call check_ints(rbuf, vals(nprocs - 1, 0, c), 'MPI_Iallreduce MPI_MAX + MPI_Test loop')

    buf = -1
    if (rank == nprocs - 1) buf = vals(rank, 0, c)
    call MPI_Ibcast(buf, c, MPI_INTEGER, nprocs - 1, MPI_COMM_WORLD, req, ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
    end do
    call check_ints(buf, vals(nprocs - 1, 0, c), 'MPI_Ibcast + MPI_Test loop')
    call check(req == MPI_REQUEST_NULL, 'MPI_Test frees the completed request')
  end subroutine test_nonblocking_collectives

  ! A datatype made of the absolute addresses of two variables, so MPI_BOTTOM is the buffer.
  subroutine test_bottom()
    integer :: iarr(5), riarr(5), t_send, t_recv, req, i, status(MPI_STATUS_SIZE)
    double precision :: dval, rdval
    integer(kind=MPI_ADDRESS_KIND) :: addr(2)

    iarr = -1
    dval = -1d0
    if (rank == 0) then
      iarr = [(10 * i, i = 1, 5)]
      dval = 2.5d0
    end if
    call MPI_Get_address(iarr, addr(1), ierr)
    call MPI_Get_address(dval, addr(2), ierr)
    call MPI_Type_create_struct(2, [5, 1], addr, [MPI_INTEGER, MPI_DOUBLE_PRECISION], t_send, ierr)
    call MPI_Type_commit(t_send, ierr)
    call MPI_Bcast(MPI_BOTTOM, 1, t_send, 0, MPI_COMM_WORLD, ierr)
    ! The compiler cannot see MPI_Bcast write these variables.
    call MPI_F_sync_reg(iarr)
    call MPI_F_sync_reg(dval)
    call check(all(iarr == [(10 * i, i = 1, 5)]) .and. dval == 2.5d0, 'MPI_Bcast of MPI_BOTTOM', &
               'first element '//str(iarr(1)))

    iarr = [(rank * 100 + i, i = 1, 5)]
    dval = rank + 0.25d0
    riarr = -1
    rdval = -1d0
    call MPI_Get_address(riarr, addr(1), ierr)
    call MPI_Get_address(rdval, addr(2), ierr)
    call MPI_Type_create_struct(2, [5, 1], addr, [MPI_INTEGER, MPI_DOUBLE_PRECISION], t_recv, ierr)
    call MPI_Type_commit(t_recv, ierr)
    call MPI_Irecv(MPI_BOTTOM, 1, t_recv, left, 600, MPI_COMM_WORLD, req, ierr)
    call MPI_Send(MPI_BOTTOM, 1, t_send, right, 600, MPI_COMM_WORLD, ierr)
    call MPI_Wait(req, status, ierr)
    call MPI_F_sync_reg(riarr)
    call MPI_F_sync_reg(rdval)
    call check(all(riarr == [(left * 100 + i, i = 1, 5)]) .and. rdval == left + 0.25d0, &
               'MPI_Send/MPI_Irecv of MPI_BOTTOM', 'first element '//str(riarr(1)))
    call MPI_Type_free(t_send, ierr)
    call MPI_Type_free(t_recv, ierr)
  end subroutine test_bottom

  subroutine test_attributes()
    integer(kind=MPI_ADDRESS_KIND), parameter :: big = 2_MPI_ADDRESS_KIND**33 + 5
    integer(kind=MPI_ADDRESS_KIND) :: v, extra
    integer :: kv_dup, kv_add, kv_none, c1, c2, deletes, allflags(2)
    logical :: flag, flag2

    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, v, flag, ierr)
    call check(flag .and. v >= 32767, 'MPI_TAG_UB attribute is at least 32767', 'value '//str(v))
    ! Whether these are set depends on how the job was started; every rank must agree.
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, v, flag, ierr)
    if (flag) call check(v >= 0, 'MPI_APPNUM is not negative', 'value '//str(v))
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, v, flag2, ierr)
    if (flag2) call check(v >= 1, 'MPI_UNIVERSE_SIZE is positive', 'value '//str(v))
    allflags = merge(1, 0, [flag, flag2])
    call MPI_Allreduce(MPI_IN_PLACE, allflags, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(all(allflags == 0 .or. allflags == nprocs), &
               'MPI_APPNUM and MPI_UNIVERSE_SIZE flags agree on every rank')

    extra = 4242
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, delete_count, kv_dup, 0_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_create_keyval(copy_add_one, delete_count, kv_add, extra, ierr)
    call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv_none, &
                                0_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, c1, ierr)
    call MPI_Comm_set_attr(c1, kv_dup, big, ierr)
    call MPI_Comm_set_attr(c1, kv_add, 41_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_set_attr(c1, kv_none, -7_MPI_ADDRESS_KIND, ierr)
    call MPI_Comm_get_attr(c1, kv_dup, v, flag, ierr)
    call check(flag .and. v == big, 'MPI_Comm_set_attr/get_attr keeps a value above 2**32', &
               'value '//str(v))
    call MPI_Comm_get_attr(c1, kv_none, v, flag, ierr)
    call check(flag .and. v == -7, 'MPI_Comm_get_attr of a negative value', 'value '//str(v))

    copy_calls = 0
    call MPI_Comm_dup(c1, c2, ierr)
    call check(copy_calls == 1 .and. copy_extra == extra .and. copy_oldcomm == c1, &
               'MPI_Comm_dup calls the copy callback once, with the old communicator', &
               str(copy_calls)//' calls, extra_state '//str(copy_extra)// &
               ', comm '//str(copy_oldcomm))
    call MPI_Comm_get_attr(c2, kv_dup, v, flag, ierr)
    call check(flag .and. v == big, 'MPI_COMM_DUP_FN copies the value', 'value '//str(v))
    call MPI_Comm_get_attr(c2, kv_add, v, flag, ierr)
    call check(flag .and. v == 42, 'user copy callback gives the copy value+1', 'value '//str(v))
    call MPI_Comm_get_attr(c2, kv_none, v, flag, ierr)
    call check(.not. flag, 'MPI_COMM_NULL_COPY_FN leaves the attribute out of the copy')

    deletes = delete_calls
    call MPI_Comm_delete_attr(c2, kv_add, ierr)
    call check(delete_calls == deletes + 1 .and. delete_last == 42, &
               'MPI_Comm_delete_attr calls the delete callback', 'last value '//str(delete_last))
    call MPI_Comm_get_attr(c2, kv_add, v, flag, ierr)
    call check(.not. flag, 'deleted attribute is gone')
    call MPI_Comm_set_attr(c1, kv_add, 50_MPI_ADDRESS_KIND, ierr)
    call check(delete_calls == deletes + 2 .and. delete_last == 41, &
               'replacing a value calls the delete callback on the old one', &
               'last value '//str(delete_last))
    call MPI_Comm_free(c2, ierr)
    call check(delete_calls == deletes + 3 .and. delete_last == big .and. c2 == MPI_COMM_NULL, &
               'MPI_Comm_free calls the delete callback', str(delete_calls - deletes)//' calls')
    call MPI_Comm_free(c1, ierr)
    call check(delete_calls == deletes + 5, 'MPI_Comm_free deletes every attribute', &
               str(delete_calls - deletes)//' calls')
    call MPI_Comm_free_keyval(kv_dup, ierr)
    call MPI_Comm_free_keyval(kv_add, ierr)
    call MPI_Comm_free_keyval(kv_none, ierr)
    call check(kv_dup == MPI_KEYVAL_INVALID .and. kv_add == MPI_KEYVAL_INVALID .and. &
               kv_none == MPI_KEYVAL_INVALID, 'MPI_Comm_free_keyval sets MPI_KEYVAL_INVALID')
  end subroutine test_attributes

  subroutine test_type_attributes()
    integer(kind=MPI_ADDRESS_KIND), parameter :: big = 2_MPI_ADDRESS_KIND**40 + 3
    integer(kind=MPI_ADDRESS_KIND) :: v
    integer :: tk, t, t2
    logical :: flag

    call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, tk, 0_MPI_ADDRESS_KIND, &
                                ierr)
    call MPI_Type_contiguous(2, MPI_INTEGER, t, ierr)
    call MPI_Type_set_attr(t, tk, big, ierr)
    call MPI_Type_get_attr(t, tk, v, flag, ierr)
    call check(flag .and. v == big, 'MPI_Type_set_attr/get_attr 64-bit value', 'value '//str(v))
    call MPI_Type_dup(t, t2, ierr)
    call MPI_Type_get_attr(t2, tk, v, flag, ierr)
    call check(flag .and. v == big, 'MPI_Type_dup copies the attribute with MPI_TYPE_DUP_FN', &
               'value '//str(v))
    call MPI_Type_delete_attr(t, tk, ierr)
    call MPI_Type_get_attr(t, tk, v, flag, ierr)
    call check(.not. flag, 'MPI_Type_delete_attr removes the attribute')
    call MPI_Type_free(t, ierr)
    call MPI_Type_free(t2, ierr)
    call MPI_Type_free_keyval(tk, ierr)
    call check(tk == MPI_KEYVAL_INVALID .and. t == MPI_DATATYPE_NULL &
               .and. t2 == MPI_DATATYPE_NULL, &
               'MPI_Type_free_keyval and MPI_Type_free reset the handles')
  end subroutine test_type_attributes

  subroutine test_errhandlers()
    integer :: wdup, edup, eh, eh2, cls, code, errclass, slen, rc, buf(1)
    integer(kind=MPI_ADDRESS_KIND) :: lastused
    logical :: flag
    character(len=MPI_MAX_ERROR_STRING) :: msg

    buf = 0
    call MPI_Comm_dup(MPI_COMM_WORLD, wdup, ierr)
    call MPI_Comm_set_errhandler(wdup, MPI_ERRORS_RETURN, ierr)
    call MPI_Send(buf, 1, MPI_INTEGER, nprocs, 0, wdup, rc)
    call MPI_Error_class(rc, errclass, ierr)
    call check(rc /= MPI_SUCCESS .and. errclass == MPI_ERR_RANK, &
               'MPI_ERRORS_RETURN: send to rank size is MPI_ERR_RANK', &
               'code '//str(rc)//' class '//str(errclass))
    msg = ''
    call MPI_Error_string(rc, msg, slen, ierr)
    call check(ierr == MPI_SUCCESS .and. slen > 0 .and. len_trim(msg(1:max(slen, 1))) > 0, &
               'MPI_Error_string of that error is not empty')
    ! To itself, so that a count wrongly accepted would still not hang.
    call MPI_Send(buf, -1, MPI_INTEGER, rank, 0, wdup, rc)
    call MPI_Error_class(rc, errclass, ierr)
    call check(rc /= MPI_SUCCESS .and. errclass == MPI_ERR_COUNT, &
               'MPI_ERRORS_RETURN: negative count is MPI_ERR_COUNT', &
               'code '//str(rc)//' class '//str(errclass))

    call MPI_Comm_create_errhandler(record_error, eh, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, edup, ierr)
    call MPI_Comm_set_errhandler(edup, eh, ierr)
    call MPI_Comm_get_errhandler(edup, eh2, ierr)
    call check(eh2 == eh, 'MPI_Comm_get_errhandler returns the user handler', &
               str(eh2)//' vs '//str(eh))
    call MPI_Errhandler_free(eh2, ierr)
    call check(eh2 == MPI_ERRHANDLER_NULL, 'MPI_Errhandler_free sets MPI_ERRHANDLER_NULL')

    eh_calls = 0
    call MPI_Send(buf, 1, MPI_INTEGER, nprocs, 0, edup, rc)
    call MPI_Error_class(eh_code, errclass, ierr)
    call check(eh_calls == 1 .and. eh_comm == edup .and. errclass == MPI_ERR_RANK, &
               'Fortran error handler called once with the communicator and MPI_ERR_RANK', &
               str(eh_calls)//' calls, comm '//str(eh_comm)//' class '//str(errclass))
    call check(rc /= MPI_SUCCESS, 'the failing call still returns its error code', str(rc))

    call MPI_Add_error_class(cls, ierr)
    call MPI_Add_error_code(cls, code, ierr)
    call MPI_Add_error_string(code, 'user-defined error of the Fortran test', ierr)
    eh_calls = 0
    call MPI_Comm_call_errhandler(edup, code, rc)
    call check(eh_calls == 1 .and. eh_code == code .and. eh_comm == edup, &
               'MPI_Comm_call_errhandler with a user error code', &
               str(eh_calls)//' calls, code '//str(eh_code)//' wanted '//str(code))
    call MPI_Error_class(code, errclass, ierr)
    call check(errclass == cls, 'MPI_Error_class of a user code is its user class', &
               str(errclass)//' vs '//str(cls))
    msg = ''
    call MPI_Error_string(code, msg, slen, ierr)
    call check(msg(1:max(slen, 1)) == 'user-defined error of the Fortran test', &
               'MPI_Error_string of a user code', msg(1:max(slen, 1)))
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, lastused, flag, ierr)
    call check(flag .and. lastused >= code, 'MPI_LASTUSEDCODE covers the new code', str(lastused))

    call MPI_Errhandler_free(eh, ierr)
    call check(eh == MPI_ERRHANDLER_NULL, 'MPI_Errhandler_free of the user handler')
    call MPI_Comm_free(edup, ierr)
    call MPI_Comm_free(wdup, ierr)
  end subroutine test_errhandlers

  subroutine check_shape(t, want_size, want_lb, want_extent, what)
    integer, intent(in) :: t, want_size
    integer(kind=MPI_ADDRESS_KIND), intent(in) :: want_lb, want_extent
    character(len=*), intent(in) :: what
    integer :: sz
    integer(kind=MPI_ADDRESS_KIND) :: lb, extent
    call MPI_Type_size(t, sz, ierr)
    call MPI_Type_get_extent(t, lb, extent, ierr)
    call check(sz == want_size .and. lb == want_lb .and. extent == want_extent, &
               what//' size and extent', &
               'size '//str(sz)//' lb '//str(lb)//' extent '//str(extent))
  end subroutine check_shape

  subroutine test_datatypes()
    integer, parameter :: nrec = 3
    ! A record, which the struct datatype describes from the addresses of its parts.
    type rec
      integer :: i(2)
      double precision :: d
    end type rec
    integer :: t3, rowt, rowr, subt, structt, recst, i, j, status(MPI_STATUS_SIZE)
    integer :: a(4, 5), b(5, 4), s(6, 5), sbuf(7), rbuf(7), rrow(6), la(4, 5)
    type(rec) :: recs(nrec + 1), rrecs(nrec + 1)
    integer(kind=MPI_ADDRESS_KIND) :: base, disp(2), rext
    logical :: ok

    ! Contiguous: 2 x 3 integers arrive as 6 plain integers.
    call MPI_Type_contiguous(3, MPI_INTEGER, t3, ierr)
    call MPI_Type_commit(t3, ierr)
    call check_shape(t3, 12, 0_MPI_ADDRESS_KIND, 12_MPI_ADDRESS_KIND, 'MPI_Type_contiguous')
    sbuf = [(rank * 10 + i, i = 1, 7)]
    rbuf = -1
    call MPI_Sendrecv(sbuf, 2, t3, right, 700, rbuf, 6, MPI_INTEGER, left, 700, &
                      MPI_COMM_WORLD, status, ierr)
    call check_ints(rbuf, [(left * 10 + i, i = 1, 6), -1], 'MPI_Type_contiguous data')

    ! Vector: Fortran stores matrices by column, so the strided slice is a row.
    a = reshape([((rank * 100 + 10 * i + j, i = 1, 4), j = 1, 5)], [4, 5])
    la = reshape([((left * 100 + 10 * i + j, i = 1, 4), j = 1, 5)], [4, 5])
    call MPI_Type_vector(5, 1, 4, MPI_INTEGER, rowt, ierr)
    call MPI_Type_commit(rowt, ierr)
    call check_shape(rowt, 20, 0_MPI_ADDRESS_KIND, 68_MPI_ADDRESS_KIND, 'MPI_Type_vector')
    rrow = -1
    call MPI_Sendrecv(a(2, 1), 1, rowt, right, 701, rrow, 5, MPI_INTEGER, left, 701, &
                      MPI_COMM_WORLD, status, ierr)
    call check_ints(rrow, [la(2, :), -1], 'MPI_Type_vector sends a strided matrix row')

    ! Resized to one integer, consecutive rows follow each other: the matrix goes transposed.
    call MPI_Type_create_resized(rowt, 0_MPI_ADDRESS_KIND, 4_MPI_ADDRESS_KIND, rowr, ierr)
    call MPI_Type_commit(rowr, ierr)
    call check_shape(rowr, 20, 0_MPI_ADDRESS_KIND, 4_MPI_ADDRESS_KIND, 'MPI_Type_create_resized')
    b = -1
    call MPI_Sendrecv(a, 4, rowr, right, 702, b, 20, MPI_INTEGER, left, 702, &
                      MPI_COMM_WORLD, status, ierr)
    call check_ints(reshape(b, [20]), reshape(transpose(la), [20]), &
                    'MPI_Type_create_resized transposes')

    ! Subarray: rows 2-3, columns 3-5 of a 6x5 array, in Fortran order.
    s = reshape([((rank * 100 + 10 * i + j, i = 1, 6), j = 1, 5)], [6, 5])
    call MPI_Type_create_subarray(2, [6, 5], [2, 3], [1, 2], MPI_ORDER_FORTRAN, MPI_INTEGER, &
                                  subt, ierr)
    call MPI_Type_commit(subt, ierr)
    call check_shape(subt, 24, 0_MPI_ADDRESS_KIND, 120_MPI_ADDRESS_KIND, 'MPI_Type_create_subarray')
    rbuf = -1
    call MPI_Sendrecv(s, 1, subt, right, 703, rbuf, 6, MPI_INTEGER, left, 703, &
                      MPI_COMM_WORLD, status, ierr)
    call check_ints(rbuf, [((left * 100 + 10 * i + j, i = 2, 3), j = 3, 5), -1], &
                    'MPI_Type_create_subarray data')

    ! Struct of two integers and a double, resized to the spacing of the array elements. The
    ! last record is a guard that must not be written.
    call MPI_Get_address(recs(1), base, ierr)
    call MPI_Get_address(recs(1)%i, disp(1), ierr)
    call MPI_Get_address(recs(1)%d, disp(2), ierr)
    call MPI_Get_address(recs(2), rext, ierr)
    disp = disp - base
    rext = rext - base
    call MPI_Type_create_struct(2, [2, 1], disp, [MPI_INTEGER, MPI_DOUBLE_PRECISION], structt, ierr)
    call MPI_Type_create_resized(structt, 0_MPI_ADDRESS_KIND, rext, recst, ierr)
    call MPI_Type_commit(recst, ierr)
    call check_shape(recst, 16, 0_MPI_ADDRESS_KIND, rext, 'MPI_Type_create_struct')
    do j = 1, nrec + 1
      recs(j) = rec([rank, j], rank + j * 0.5d0)
      rrecs(j) = rec([-1, -1], -1d0)
    end do
    call MPI_Sendrecv(recs, nrec, recst, right, 704, rrecs, nrec, recst, left, 704, &
                      MPI_COMM_WORLD, status, ierr)
    ok = all(rrecs(nrec + 1)%i == -1) .and. rrecs(nrec + 1)%d == -1d0
    do j = 1, nrec
      ok = ok .and. all(rrecs(j)%i == [left, j]) .and. rrecs(j)%d == left + j * 0.5d0
    end do
    call check(ok, 'MPI_Type_create_struct array of records')

    call MPI_Type_free(t3, ierr)
    call MPI_Type_free(rowt, ierr)
    call MPI_Type_free(rowr, ierr)
    call MPI_Type_free(subt, ierr)
    call MPI_Type_free(structt, ierr)
    call MPI_Type_free(recst, ierr)
  end subroutine test_datatypes

  subroutine test_f90_types()
    integer, parameter :: dp = selected_real_kind(15, 300), ik = selected_int_kind(9)
    integer :: treal, tint, tcplx, tmatch, sz, i, dsz
    real(kind=dp) :: x(5), y(5)
    integer(kind=ik) :: ix(5), iy(5)
    complex(kind=dp) :: z(3), w(3)
    integer :: iscalar
    double precision :: dscalar
    logical :: lscalar

    call MPI_Type_create_f90_real(15, 300, treal, ierr)
    call MPI_Type_size(treal, sz, ierr)
    call MPI_Type_size(MPI_DOUBLE_PRECISION, dsz, ierr)
    call check(sz == 8 .and. dsz == 8, &
               'MPI_Type_create_f90_real(15,300) has the size of MPI_DOUBLE_PRECISION', &
               str(sz))
    x = [(rank + i * 0.25_dp, i = 1, 5)]
    call MPI_Allreduce(x, y, 5, treal, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(all(y == [(nprocs * (nprocs - 1) / 2 + nprocs * i * 0.25_dp, i = 1, 5)]), &
               'MPI_Allreduce on the f90 real type')

    call MPI_Type_create_f90_integer(9, tint, ierr)
    call MPI_Type_size(tint, sz, ierr)
    call check(sz == storage_size(ix(1)) / 8, 'MPI_Type_create_f90_integer(9) size', str(sz))
    ix = [(rank * 10 + i, i = 1, 5)]
    call MPI_Allreduce(ix, iy, 5, tint, MPI_MAX, MPI_COMM_WORLD, ierr)
    call check_ints(int(iy), [((nprocs - 1) * 10 + i, i = 1, 5)], &
                    'MPI_Allreduce on the f90 integer type')

    call MPI_Type_create_f90_complex(15, 300, tcplx, ierr)
    call MPI_Type_size(tcplx, sz, ierr)
    call check(sz == 16, 'MPI_Type_create_f90_complex(15,300) size', str(sz))
    z = [(cmplx(rank, i, kind=dp), i = 1, 3)]
    call MPI_Allreduce(z, w, 3, tcplx, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(all(w == [(cmplx(nprocs * (nprocs - 1) / 2, nprocs * i, kind=dp), i = 1, 3)]), &
               'MPI_Allreduce on the f90 complex type')

    call MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, tmatch, ierr)
    call MPI_Type_size(tmatch, sz, ierr)
    call check(ierr == MPI_SUCCESS .and. sz == 8, 'MPI_Type_match_size(MPI_TYPECLASS_REAL, 8)', &
               str(sz))
    call MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, tmatch, ierr)
    call MPI_Type_size(tmatch, sz, ierr)
    call check(ierr == MPI_SUCCESS .and. sz == 4, &
               'MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4)', str(sz))
    call MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, tmatch, ierr)
    call MPI_Type_size(tmatch, sz, ierr)
    call check(ierr == MPI_SUCCESS .and. sz == 16, &
               'MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16)', str(sz))

    iscalar = 0
    dscalar = 0d0
    lscalar = .false.
    call MPI_Sizeof(iscalar, sz, ierr)
    call check(sz == 4, 'MPI_Sizeof(INTEGER)', str(sz))
    call MPI_Sizeof(dscalar, sz, ierr)
    call check(sz == 8, 'MPI_Sizeof(DOUBLE PRECISION)', str(sz))
    call MPI_Sizeof(z, sz, ierr)
    call check(sz == 16, 'MPI_Sizeof(COMPLEX(dp) array) is the element size', str(sz))
    call MPI_Sizeof(lscalar, sz, ierr)
    call check(sz == 4, 'MPI_Sizeof(LOGICAL)', str(sz))
  end subroutine test_f90_types

  subroutine test_comm_split()
    integer :: sc, rc, dup, color, ssize, srank, result, gw, gs, i, want_cmp, top
    integer :: sranks(nprocs), wranks(nprocs), other(1), tr(1)

    ! Split by parity, ordered by descending world rank.
    color = mod(rank, 2)
    call MPI_Comm_split(MPI_COMM_WORLD, color, -rank, sc, ierr)
    call MPI_Comm_size(sc, ssize, ierr)
    call MPI_Comm_rank(sc, srank, ierr)
    call check(ssize == (nprocs - color + 1) / 2 .and. srank == (nprocs - 1 - rank) / 2, &
               'MPI_Comm_split by parity, key -rank', 'size '//str(ssize)//' rank '//str(srank))

    call MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, result, ierr)
    call check(result == MPI_IDENT, 'MPI_Comm_compare of a communicator with itself is MPI_IDENT')
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Comm_compare(MPI_COMM_WORLD, dup, result, ierr)
    call check(result == MPI_CONGRUENT, 'MPI_Comm_compare with a dup is MPI_CONGRUENT')
    want_cmp = MPI_UNEQUAL
    if (nprocs == 1) want_cmp = MPI_CONGRUENT
    call MPI_Comm_compare(MPI_COMM_WORLD, sc, result, ierr)
    call check(result == want_cmp, 'MPI_Comm_compare with the parity split', str(result))
    call MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, rc, ierr)
    want_cmp = MPI_SIMILAR
    if (nprocs == 1) want_cmp = MPI_CONGRUENT
    call MPI_Comm_compare(MPI_COMM_WORLD, rc, result, ierr)
    call check(result == want_cmp, 'MPI_Comm_compare with the reversed order is MPI_SIMILAR', &
               str(result))

    call MPI_Comm_group(MPI_COMM_WORLD, gw, ierr)
    call MPI_Comm_group(sc, gs, ierr)
    sranks = [(i, i = 0, nprocs - 1)]
    wranks = -1
    call MPI_Group_translate_ranks(gs, ssize, sranks, gw, wranks, ierr)
    ! The split group's rank 0 is the highest world rank of this parity.
    top = nprocs - 1 - mod(nprocs - 1 - color, 2)
    call check_ints(wranks(1:ssize), [(top - 2 * i, i = 0, ssize - 1)], &
                    'MPI_Group_translate_ranks split to world')
    if (nprocs > 1) then
      ! A neighbour, which has the other parity.
      other = rank + 1
      if (rank == nprocs - 1) other = rank - 1
      call MPI_Group_translate_ranks(gw, 1, other, gs, tr, ierr)
      call check(tr(1) == MPI_UNDEFINED, &
                 'MPI_Group_translate_ranks of a rank outside is MPI_UNDEFINED', &
                 str(tr(1)))
    end if
    call MPI_Group_free(gw, ierr)
    call MPI_Group_free(gs, ierr)
    call check(gw == MPI_GROUP_NULL .and. gs == MPI_GROUP_NULL, &
               'MPI_Group_free sets MPI_GROUP_NULL')
    call MPI_Comm_free(sc, ierr)
    call MPI_Comm_free(rc, ierr)
    call MPI_Comm_free(dup, ierr)
  end subroutine test_comm_split

  ! The matrix rank r contributes as element k of the non-commutative reduction.
  pure function rank_matrix(r, k) result(m)
    integer, intent(in) :: r, k
    integer :: m(2, 2)
    m = reshape([mod(r + k, 5) + 1, 1, 1, 0], [2, 2])
  end function rank_matrix

  subroutine test_user_ops()
    integer, parameter :: nmat = 3, c = 1009
    integer :: matt, opm, ops, k, r, root, applied
    integer :: mine(4, nmat), res(4, nmat), want(4, nmat), acc(2, 2)
    integer :: sbuf(c), rbuf(c), wsum(c)
    logical :: commute, ok
    character(len=200) :: why

    call MPI_Type_contiguous(4, MPI_INTEGER, matt, ierr)
    call MPI_Type_commit(matt, ierr)
    call MPI_Op_create(matmul_op, .false., opm, ierr)
    call MPI_Op_create(sum_mod_op, .true., ops, ierr)
    call MPI_Op_commutative(opm, commute, ierr)
    call check(.not. commute, 'MPI_Op_commutative of a non-commutative Fortran op')
    call MPI_Op_commutative(ops, commute, ierr)
    call check(commute, 'MPI_Op_commutative of a commutative Fortran op')

    ! Matrix products in rank order: M(0) M(1) ... M(size-1).
    do k = 1, nmat
      mine(:, k) = reshape(rank_matrix(rank, k), [4])
      acc = rank_matrix(0, k)
      do r = 1, nprocs - 1
        acc = mulmod(acc, rank_matrix(r, k))
      end do
      want(:, k) = reshape(acc, [4])
    end do
    res = -1
    op_last_type = -1
    call MPI_Allreduce(mine, res, nmat, matt, opm, MPI_COMM_WORLD, ierr)
    call check_ints(reshape(res, [4 * nmat]), reshape(want, [4 * nmat]), &
                    'MPI_Allreduce with a non-commutative Fortran op keeps rank order')
    ! Not every rank has to apply the op, but those that do are given the call's datatype.
    call check(op_last_type == -1 .or. op_last_type == matt, &
               'the Fortran op gets the datatype handle', &
               str(op_last_type)//' vs '//str(matt))
    applied = merge(1, 0, op_last_type /= -1)
    call MPI_Allreduce(MPI_IN_PLACE, applied, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (nprocs > 1) call check(applied > 0, 'some rank applied the Fortran op')
    ok = .true.
    why = ''
    do root = 0, nprocs - 1
      res = -1
      call MPI_Reduce(mine, res, nmat, matt, opm, root, MPI_COMM_WORLD, ierr)
      if (rank == root) call expect(ok, why, all(res == want), 'wrong product at root '//str(root))
    end do
    call check(ok, 'MPI_Reduce with a non-commutative Fortran op to every root', why)

    sbuf = mod(vals(rank, 0, c), SUM_MODULUS)
    wsum = 0
    do r = 0, nprocs - 1
      wsum = mod(wsum + mod(vals(r, 0, c), SUM_MODULUS), SUM_MODULUS)
    end do
    rbuf = -1
    call MPI_Allreduce(sbuf, rbuf, c, MPI_INTEGER, ops, MPI_COMM_WORLD, ierr)
    call check_ints(rbuf, wsum, 'MPI_Allreduce with a commutative Fortran op count 1009')
    rbuf = -1
    call MPI_Reduce(sbuf, rbuf, c, MPI_INTEGER, ops, nprocs - 1, MPI_COMM_WORLD, ierr)
    if (rank == nprocs - 1) call check_ints(rbuf, wsum, 'MPI_Reduce with a commutative Fortran op')

    call MPI_Op_free(opm, ierr)
    call MPI_Op_free(ops, ierr)
    call check(opm == MPI_OP_NULL .and. ops == MPI_OP_NULL, 'MPI_Op_free sets MPI_OP_NULL')
    call MPI_Type_free(matt, ierr)
  end subroutine test_user_ops

end program fortran_usempi
