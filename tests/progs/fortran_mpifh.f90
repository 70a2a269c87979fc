! fortran_mpifh: the Fortran bindings reached through include 'mpif.h'.
!
!   fortran_mpifh       any number of ranks, 1 included
!
! A program built against Open MPI's mpif.h must run unchanged: its handles are the compiled
! integer constants of mpif.h, MPI_BOTTOM / MPI_IN_PLACE / MPI_STATUS(ES)_IGNORE are the addresses
! of common blocks, callbacks are Fortran subroutines taking every argument by reference, and
! attribute values are INTEGER(KIND=MPI_ADDRESS_KIND) (or INTEGER for the MPI-1 calls).
! The checks are those of fortran_common.inc (see there), and the MPI-1 attribute calls. The tests
! that hold handles in variables are in fortran_int_handles.inc, which fortran_usempi.f90 runs
! too; here are the MPI-1 calls and the tests whose data is of other types than INTEGER.
!
! mpif.h declares no interfaces, and gfortran (10 and later) rejects, without
! -fallow-argument-mismatch, one file calling the same external routine with arguments of
! different types or ranks. So every buffer handed to MPI here is a default INTEGER scalar: the
! first element of an array (sequence association gives MPI the whole array) or MPI_BOTTOM /
! MPI_IN_PLACE, and data of other types travels as its bits in integer arrays (TRANSFER) or
! through EQUIVALENCE.

module mpifh_tests
  use, intrinsic :: iso_fortran_env, only: output_unit, error_unit
  implicit none
  private
  include 'mpif.h'
  public :: run_tests, test_mpi1_attributes, test_persistent_allreduce, finish

  character(len=*), parameter :: BINDING = 'mpif.h'
  integer, parameter :: REDUCE_TYPES(3) = [MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION]
  integer, parameter :: REDUCE_OPS(3) = [MPI_SUM, MPI_MAX, MPI_PROD]
  integer :: report_comm
  integer :: mpi1_copy_calls = 0

  ! fortran_common.inc ends the declarations with its `contains`: procedures follow.
  include 'fortran_common.inc'
  include 'fortran_int_handles.inc'

  ! The reports go as character codes, in integers like every buffer of this file.
  subroutine send_text(text)
    character(len=*), intent(in) :: text
    integer :: codes(len(text) + 1), i
    codes = 0
    do i = 1, len(text)
      codes(i) = iachar(text(i:i))
    end do
    call MPI_Send(codes(1), len(text), MPI_INTEGER, 0, 2, report_comm, ierr)
  end subroutine send_text

  subroutine receive_text(text, from)
    character(len=*), intent(out) :: text
    integer, intent(in) :: from
    integer :: codes(len(text) + 1), i
    call MPI_Recv(codes(1), len(text), MPI_INTEGER, from, 2, report_comm, MPI_STATUS_IGNORE, ierr)
    do i = 1, len(text)
      text(i:i) = achar(codes(i))
    end do
  end subroutine receive_text

  ! MPI_Allreduce of the o-th op of REDUCE_OPS on the t-th type of REDUCE_TYPES. The data goes to
  ! MPI as the bits of the typed values.
  subroutine allreduce_case(t, o, c)
    integer, intent(in) :: t, o, c
    integer :: isz, words, mine(c), want(c), got(c)
    integer, allocatable :: sb(:), rb(:)

    call reduce_operands(o, mine, want)
    call MPI_Type_size(REDUCE_TYPES(t), isz, ierr)
    words = c * isz / 4
    allocate (sb(words + 1), rb(words + 1))
    if (REDUCE_TYPES(t) == MPI_INTEGER) then
      sb = [mine, -1]
    else if (REDUCE_TYPES(t) == MPI_REAL) then
      sb = [transfer(real(mine), 0, words), -1]
    else
      sb = [transfer(dble(mine), 0, words), -1]
    end if
    rb = -1
    call MPI_Allreduce(sb(1), rb(1), c, REDUCE_TYPES(t), REDUCE_OPS(o), MPI_COMM_WORLD, ierr)
    if (REDUCE_TYPES(t) == MPI_INTEGER) then
      got = rb(1:c)
    else if (REDUCE_TYPES(t) == MPI_REAL) then
      got = whole(real(transfer(rb, 1.0, c), dp))
    else
      got = whole(transfer(rb, 1d0, c))
    end if
    call check_allreduce(t, o, got, want, rb(words + 1) == -1)
  end subroutine allreduce_case

  ! The results must be the compiler's own .true. and .false., bit for bit.
  subroutine allreduce_logical(c)
    integer, intent(in) :: c
    logical :: mine(c), land(c), lor(c)
    integer :: sb(c + 1), rb(c + 1)

    call logical_operands(c, mine, land, lor)
    sb = [transfer(mine, 0, c), -1]
    rb = -1
    call MPI_Allreduce(sb(1), rb(1), c, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
    call check_ints(rb, [transfer(land, 0, c), -1], &
                    'MPI_Allreduce MPI_LAND MPI_LOGICAL count '//str(c))
    rb = -1
    call MPI_Allreduce(sb(1), rb(1), c, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
    call check_ints(rb, [transfer(lor, 0, c), -1], &
                    'MPI_Allreduce MPI_LOR MPI_LOGICAL count '//str(c))
  end subroutine allreduce_logical

  ! A datatype made of the absolute addresses of two variables, so MPI_BOTTOM is the buffer.
  subroutine test_bottom()
    integer :: iarr(5), riarr(5), t_send, t_recv, req, status(MPI_STATUS_SIZE)
    ! The doubles are reached through integers equivalenced to them (see the top of the file).
    double precision :: dval, rdval
    integer :: dval_at(2), rdval_at(2)
    equivalence (dval, dval_at), (rdval, rdval_at)
    integer(kind=MPI_ADDRESS_KIND) :: addr(2)

    call bottom_values(iarr, dval, riarr, rdval)
    call MPI_Get_address(iarr(1), addr(1), ierr)
    call MPI_Get_address(dval_at(1), addr(2), ierr)
    call MPI_Type_create_struct(2, [5, 1], addr, [MPI_INTEGER, MPI_DOUBLE_PRECISION], t_send, ierr)
    call MPI_Type_commit(t_send, ierr)
    call MPI_Bcast(MPI_BOTTOM, 1, t_send, 0, MPI_COMM_WORLD, ierr)
    ! The compiler cannot see MPI_Bcast write these variables.
    call MPI_F_sync_reg(iarr(1))
    call MPI_F_sync_reg(dval_at(1))
    call check_bottom_bcast(iarr, dval)
    call MPI_Get_address(riarr(1), addr(1), ierr)
    call MPI_Get_address(rdval_at(1), addr(2), ierr)
    call MPI_Type_create_struct(2, [5, 1], addr, [MPI_INTEGER, MPI_DOUBLE_PRECISION], t_recv, ierr)
    call MPI_Type_commit(t_recv, ierr)
    call MPI_Irecv(MPI_BOTTOM, 1, t_recv, left, 600, MPI_COMM_WORLD, req, ierr)
    call MPI_Send(MPI_BOTTOM, 1, t_send, right, 600, MPI_COMM_WORLD, ierr)
    call MPI_Wait(req, status, ierr)
    call MPI_F_sync_reg(riarr(1))
    call MPI_F_sync_reg(rdval_at(1))
    call check(all(riarr == bottom_sent(left)) .and. rdval == left + 0.25d0, &
               'MPI_Send/MPI_Irecv of MPI_BOTTOM', 'first element '//str(riarr(1)))
    call MPI_Type_free(t_send, ierr)
    call MPI_Type_free(t_recv, ierr)
  end subroutine test_bottom

  ! Struct: two integers, then a double in the next two, resized to the record spacing. The
  ! records are kept as four integers each.
  subroutine test_struct_records()
    integer, parameter :: nrec = 3
    integer :: structt, recst, j, status(MPI_STATUS_SIZE)
    integer :: recs(4, nrec), rrecs(4, nrec), want(4, nrec)
    integer(kind=MPI_ADDRESS_KIND) :: base, disp(2), rext

    call MPI_Get_address(recs(1, 1), base, ierr)
    call MPI_Get_address(recs(1, 1), disp(1), ierr)
    call MPI_Get_address(recs(3, 1), disp(2), ierr)
    call MPI_Get_address(recs(1, 2), rext, ierr)
    disp = disp - base
    rext = rext - base
    call MPI_Type_create_struct(2, [2, 1], disp, [MPI_INTEGER, MPI_DOUBLE_PRECISION], structt, ierr)
    call MPI_Type_create_resized(structt, 0_MPI_ADDRESS_KIND, rext, recst, ierr)
    call MPI_Type_commit(recst, ierr)
    call check_shape(recst, 16, 0_MPI_ADDRESS_KIND, 16_MPI_ADDRESS_KIND, 'MPI_Type_create_struct')
    do j = 1, nrec
      recs(:, j) = [rank, j, transfer(rank + j * 0.5d0, 0, 2)]
      want(:, j) = [left, j, transfer(left + j * 0.5d0, 0, 2)]
    end do
    rrecs = -1
    call MPI_Sendrecv(recs(1, 1), nrec, recst, right, 704, rrecs(1, 1), nrec, recst, left, 704, &
                      MPI_COMM_WORLD, status, ierr)
    call check_ints(reshape(rrecs, [4 * nrec]), reshape(want, [4 * nrec]), &
                    'MPI_Type_create_struct array of records')
    call MPI_Type_free(structt, ierr)
    call MPI_Type_free(recst, ierr)
  end subroutine test_struct_records

  ! MPI_Allreduce on the MPI_Type_create_f90_* types, the data as its bits.
  subroutine f90_reductions(treal, tint, tcplx)
    integer, intent(in) :: treal, tint, tcplx
    integer :: sb(13), rb(13), i
    real(kind=dp) :: x(5)
    integer(kind=ik) :: ix(5)
    complex(kind=dp) :: z(3)

    x = [(rank + i * 0.25_dp, i = 1, 5)]
    sb(1:11) = [transfer(x, 0, 10), -1]
    rb = -1
    call MPI_Allreduce(sb(1), rb(1), 5, treal, MPI_SUM, MPI_COMM_WORLD, ierr)
    x = transfer(rb(1:10), x)
    call check(all(x == [(nprocs * (nprocs - 1) / 2 + nprocs * i * 0.25_dp, i = 1, 5)]) .and. &
               rb(11) == -1, 'MPI_Allreduce on the f90 real type')

    ix = [(rank * 10 + i, i = 1, 5)]
    sb(1:5) = ix
    sb(6) = -1
    rb = -1
    call MPI_Allreduce(sb(1), rb(1), 5, tint, MPI_MAX, MPI_COMM_WORLD, ierr)
    call check_ints(rb(1:6), [((nprocs - 1) * 10 + i, i = 1, 5), -1], &
                    'MPI_Allreduce on the f90 integer type')

    z = [(cmplx(rank, i, kind=dp), i = 1, 3)]
    sb = [transfer(z, 0, 12), -1]
    rb = -1
    call MPI_Allreduce(sb(1), rb(1), 3, tcplx, MPI_SUM, MPI_COMM_WORLD, ierr)
    z = transfer(rb(1:12), z)
    call check(all(z == [(cmplx(nprocs * (nprocs - 1) / 2, nprocs * i, kind=dp), i = 1, 3)]) .and. &
               rb(13) == -1, 'MPI_Allreduce on the f90 complex type')
  end subroutine f90_reductions

  ! The MPI-1 copy callback: every argument a default INTEGER.
  subroutine mpi1_copy_add_one(oldcomm, keyval, extra_state, val_in, val_out, flag, ierr)
    integer :: oldcomm, keyval, extra_state, val_in, val_out, ierr
    logical :: flag
    mpi1_copy_calls = mpi1_copy_calls + 1
    val_out = val_in + 1
    flag = .true.
    ierr = MPI_SUCCESS
    if (oldcomm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID .or. extra_state /= 77) &
      ierr = MPI_ERR_OTHER
  end subroutine mpi1_copy_add_one

  ! The MPI-1 attribute calls of mpif.h: INTEGER values and callbacks.
  subroutine test_mpi1_attributes()
    integer :: k_dup, k_null, k_user, c1, c2, v
    integer(kind=MPI_ADDRESS_KIND) :: av
    logical :: flag

    call MPI_ATTR_GET(MPI_COMM_WORLD, MPI_TAG_UB, v, flag, ierr)
    call check(flag .and. v >= 32767, 'MPI_ATTR_GET of MPI_TAG_UB', 'value '//str(v))
    call MPI_KEYVAL_CREATE(MPI_DUP_FN, MPI_NULL_DELETE_FN, k_dup, 0, ierr)
    call MPI_KEYVAL_CREATE(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, k_null, 0, ierr)
    call MPI_KEYVAL_CREATE(mpi1_copy_add_one, MPI_NULL_DELETE_FN, k_user, 77, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, c1, ierr)
    call MPI_ATTR_PUT(c1, k_dup, 123456, ierr)
    call MPI_ATTR_PUT(c1, k_null, -5, ierr)
    call MPI_ATTR_PUT(c1, k_user, 10, ierr)
    call MPI_ATTR_GET(c1, k_null, v, flag, ierr)
    call check(flag .and. v == -5, 'MPI_ATTR_PUT/MPI_ATTR_GET', 'value '//str(v))
    ! An INTEGER value read back through the address-sized call keeps its sign.
    call MPI_Comm_get_attr(c1, k_null, av, flag, ierr)
    call check(flag .and. av == -5, 'MPI_ATTR_PUT value read by MPI_Comm_get_attr', &
               'value '//str(av))
    call MPI_Comm_set_attr(c1, k_dup, 99_MPI_ADDRESS_KIND, ierr)
    call MPI_ATTR_GET(c1, k_dup, v, flag, ierr)
    call check(flag .and. v == 99, 'MPI_Comm_set_attr value read by MPI_ATTR_GET', 'value '//str(v))
    call MPI_ATTR_PUT(c1, k_dup, 123456, ierr)

    mpi1_copy_calls = 0
    call MPI_Comm_dup(c1, c2, ierr)
    call MPI_ATTR_GET(c2, k_dup, v, flag, ierr)
    call check(flag .and. v == 123456, 'MPI_DUP_FN copies the value', 'value '//str(v))
    call MPI_ATTR_GET(c2, k_null, v, flag, ierr)
    call check(.not. flag, 'MPI_NULL_COPY_FN leaves the attribute out')
    call MPI_ATTR_GET(c2, k_user, v, flag, ierr)
    call check(flag .and. v == 11 .and. mpi1_copy_calls == 1, 'MPI-1 user copy callback', &
               'value '//str(v)//', '//str(mpi1_copy_calls)//' calls')
    call MPI_ATTR_DELETE(c2, k_dup, ierr)
    call MPI_ATTR_GET(c2, k_dup, v, flag, ierr)
    call check(.not. flag, 'MPI_ATTR_DELETE removes the attribute')
    call MPI_Comm_free(c2, ierr)
    call MPI_Comm_free(c1, ierr)
    call MPI_KEYVAL_FREE(k_dup, ierr)
    call MPI_KEYVAL_FREE(k_null, ierr)
    call MPI_KEYVAL_FREE(k_user, ierr)
    call check(k_dup == MPI_KEYVAL_INVALID .and. k_null == MPI_KEYVAL_INVALID .and. &
               k_user == MPI_KEYVAL_INVALID, 'MPI_KEYVAL_FREE sets MPI_KEYVAL_INVALID')
  end subroutine test_mpi1_attributes

  ! Open MPI's persistent collectives through its Fortran library (MPIX_ALLREDUCE_INIT calls the C
  ! PMPIX_Allreduce_init): started twice, with new data, and freed.
  subroutine test_persistent_allreduce()
    integer :: sb(3), rb(3), req, k, i, ierr
    integer :: st(MPI_STATUS_SIZE)
    sb = 0
    call MPIX_ALLREDUCE_INIT(sb, rb, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &
                             req, ierr)
    call check(ierr == MPI_SUCCESS .and. req /= MPI_REQUEST_NULL, 'MPIX_ALLREDUCE_INIT', &
               'ierr '//str(ierr))
    do k = 1, 2
      sb = [(rank * 10 + k * 100 + i, i = 1, 3)]
      call MPI_START(req, ierr)
      call MPI_WAIT(req, st, ierr)
      call check_ints(rb, [(nprocs * (nprocs - 1) / 2 * 10 + nprocs * (k * 100 + i), i = 1, 3)], &
                      'persistent allreduce, start '//str(k))
    end do
    call MPI_REQUEST_FREE(req, ierr)
    call check(ierr == MPI_SUCCESS .and. req == MPI_REQUEST_NULL, 'MPI_REQUEST_FREE of it', &
               'ierr '//str(ierr))
  end subroutine test_persistent_allreduce

end module mpifh_tests

program fortran_mpifh
  use mpifh_tests
  implicit none
  call run_tests()
  call test_mpi1_attributes()
  call test_persistent_allreduce()
  call finish()
end program fortran_mpifh
