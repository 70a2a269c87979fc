! fortran_usempi: the Fortran bindings reached through the mpi module (use mpi).
!
!   fortran_usempi      any number of ranks, 1 included
!
! A program built against Open MPI's mpi module must run unchanged: its handles are the compiled
! integer constants of the module, MPI_BOTTOM / MPI_IN_PLACE / MPI_STATUS(ES)_IGNORE are the
! addresses of common blocks, callbacks are Fortran subroutines taking every argument by
! reference, and attribute values are INTEGER(KIND=MPI_ADDRESS_KIND). The module's interfaces
! take a buffer of any type and rank, so data of other types than INTEGER is passed as it is:
! arrays of REAL, DOUBLE PRECISION, LOGICAL, COMPLEX, CHARACTER, derived types, and scalars.
! The checks are those of fortran_common.inc (see there). The tests that hold handles in
! variables are in fortran_int_handles.inc, which fortran_mpifh.f90 runs too, and those passing
! typed data in fortran_typed_buffers.inc, which fortran_f08.f90 runs too; here are the rest of
! the latter.

module usempi_tests
  use, intrinsic :: iso_fortran_env, only: output_unit, error_unit
  use mpi
  implicit none
  private
  public :: run_tests, finish

  character(len=*), parameter :: BINDING = 'the mpi module'
  integer, parameter :: REDUCE_TYPES(3) = [MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION]
  integer, parameter :: REDUCE_OPS(3) = [MPI_SUM, MPI_MAX, MPI_PROD]
  integer :: report_comm

  ! fortran_common.inc ends the declarations with its `contains`: procedures follow.
  include 'fortran_common.inc'
  include 'fortran_int_handles.inc'
  include 'fortran_typed_buffers.inc'

  ! A datatype made of the absolute addresses of two variables, so MPI_BOTTOM is the buffer.
  subroutine test_bottom()
    integer :: iarr(5), riarr(5), t_send, t_recv, req, status(MPI_STATUS_SIZE)
    double precision :: dval, rdval
    integer(kind=MPI_ADDRESS_KIND) :: addr(2)

    call bottom_values(iarr, dval, riarr, rdval)
    call MPI_Get_address(iarr, addr(1), ierr)
    call MPI_Get_address(dval, addr(2), ierr)
    call MPI_Type_create_struct(2, [5, 1], addr, [MPI_INTEGER, MPI_DOUBLE_PRECISION], t_send, ierr)
    call MPI_Type_commit(t_send, ierr)
    call MPI_Bcast(MPI_BOTTOM, 1, t_send, 0, MPI_COMM_WORLD, ierr)
    ! The compiler cannot see MPI_Bcast write these variables.
    call MPI_F_sync_reg(iarr)
    call MPI_F_sync_reg(dval)
    call check_bottom_bcast(iarr, dval)
    call MPI_Get_address(riarr, addr(1), ierr)
    call MPI_Get_address(rdval, addr(2), ierr)
    call MPI_Type_create_struct(2, [5, 1], addr, [MPI_INTEGER, MPI_DOUBLE_PRECISION], t_recv, ierr)
    call MPI_Type_commit(t_recv, ierr)
    call MPI_Irecv(MPI_BOTTOM, 1, t_recv, left, 600, MPI_COMM_WORLD, req, ierr)
    call MPI_Send(MPI_BOTTOM, 1, t_send, right, 600, MPI_COMM_WORLD, ierr)
    call MPI_Wait(req, status, ierr)
    call MPI_F_sync_reg(riarr)
    call MPI_F_sync_reg(rdval)
    call check(all(riarr == bottom_sent(left)) .and. rdval == left + 0.25d0, &
               'MPI_Send/MPI_Irecv of MPI_BOTTOM', 'first element '//str(riarr(1)))
    call MPI_Type_free(t_send, ierr)
    call MPI_Type_free(t_recv, ierr)
  end subroutine test_bottom

  ! Struct of two integers and a double, resized to the spacing of the array elements. The
  ! last record is a guard that must not be written.
  subroutine test_struct_records()
    integer, parameter :: nrec = 3
    type(record) :: recs(nrec + 1), rrecs(nrec + 1)
    integer :: structt, recst, status(MPI_STATUS_SIZE)
    integer(kind=MPI_ADDRESS_KIND) :: base, disp(2), rext

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
    call fill_records(recs, rrecs)
    call MPI_Sendrecv(recs, nrec, recst, right, 704, rrecs, nrec, recst, left, 704, &
                      MPI_COMM_WORLD, status, ierr)
    call check(records_arrived(rrecs), 'MPI_Type_create_struct array of records')
    call MPI_Type_free(structt, ierr)
    call MPI_Type_free(recst, ierr)
  end subroutine test_struct_records

  ! MPI_Allreduce on the MPI_Type_create_f90_* types, on arrays of the kinds they stand for.
  subroutine f90_reductions(treal, tint, tcplx)
    integer, intent(in) :: treal, tint, tcplx
    real(kind=dp) :: x(5), y(5)
    integer(kind=ik) :: ix(5), iy(5)
    complex(kind=dp) :: z(3), w(3)
    integer :: i

    x = [(rank + i * 0.25_dp, i = 1, 5)]
    call MPI_Allreduce(x, y, 5, treal, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(all(y == [(nprocs * (nprocs - 1) / 2 + nprocs * i * 0.25_dp, i = 1, 5)]), &
               'MPI_Allreduce on the f90 real type')

    ix = [(rank * 10 + i, i = 1, 5)]
    call MPI_Allreduce(ix, iy, 5, tint, MPI_MAX, MPI_COMM_WORLD, ierr)
    call check_ints(int(iy), [((nprocs - 1) * 10 + i, i = 1, 5)], &
                    'MPI_Allreduce on the f90 integer type')

    z = [(cmplx(rank, i, kind=dp), i = 1, 3)]
    call MPI_Allreduce(z, w, 3, tcplx, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(all(w == [(cmplx(nprocs * (nprocs - 1) / 2, nprocs * i, kind=dp), i = 1, 3)]), &
               'MPI_Allreduce on the f90 complex type')
  end subroutine f90_reductions

end module usempi_tests

program fortran_usempi
  use usempi_tests
  implicit none
  call run_tests()
  call finish()
end program fortran_usempi
