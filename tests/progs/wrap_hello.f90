! wrap_hello: a Fortran program on Open MPI's mpi_f08 module and, in another program unit, its
! mpif.h, built by torusmpi's mpifort (and mpif90, mpif77) in tests/integration/wrappers.sh. Open
! MPI's Fortran libraries (libmpi_usempif08.so.40, libmpi_mpifh.so.40) run on torusmpi's
! libmpi.so.40; a communicator is the same object through both.
!
!   wrap_hello <expected size>
!
! Prints "ok <rank> <check>" or "FAIL <rank> <check>: why" per check, and a last
! "done <rank> of <size>: N checks, N failed" line, as tests/progs/check.h does for C.

! The mpif.h side: MPI_COMM_WORLD's integer handle, its size, and a sum over it.
subroutine mpifh_checks(f08_world, rank, size, checks, failed)
  implicit none
  include 'mpif.h'
  integer, intent(in) :: f08_world, rank, size
  integer, intent(inout) :: checks, failed
  integer :: fh_size, total, ierr

  call report(f08_world == MPI_COMM_WORLD, 'mpifh handle', rank, checks, failed)
  call MPI_Comm_size(MPI_COMM_WORLD, fh_size, ierr)
  call report(ierr == MPI_SUCCESS .and. fh_size == size, 'mpifh size', rank, checks, failed)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call report(ierr == MPI_SUCCESS .and. total == size * (size - 1) / 2, 'mpifh allreduce', rank, &
              checks, failed)
end subroutine mpifh_checks

subroutine report(passed, what, rank, checks, failed)
  implicit none
  logical, intent(in) :: passed
  character(len=*), intent(in) :: what
  integer, intent(in) :: rank
  integer, intent(inout) :: checks, failed

  checks = checks + 1
  if (passed) then
    print '("ok ", i0, " ", a)', rank, what
  else
    failed = failed + 1
    print '("FAIL ", i0, " ", a, ": wrong result")', rank, what
  end if
end subroutine report

program wrap_hello
  use mpi_f08
  implicit none
  interface
    subroutine mpifh_checks(f08_world, rank, size, checks, failed)
      integer, intent(in) :: f08_world, rank, size
      integer, intent(inout) :: checks, failed
    end subroutine mpifh_checks
    subroutine report(passed, what, rank, checks, failed)
      logical, intent(in) :: passed
      character(len=*), intent(in) :: what
      integer, intent(in) :: rank
      integer, intent(inout) :: checks, failed
    end subroutine report
  end interface
  integer :: rank, size, expected, total, checks, failed
  character(len=16) :: arg

  checks = 0
  failed = 0
  rank = -1
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  expected = size
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) expected
  end if
  call report(size == expected, 'size', rank, checks, failed)

  ! Integer data: the sum of the ranks is exact.
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call report(total == size * (size - 1) / 2, 'f08 allreduce', rank, checks, failed)

  call mpifh_checks(MPI_COMM_WORLD%MPI_VAL, rank, size, checks, failed)

  print '("done ", i0, " of ", i0, ": ", i0, " checks, ", i0, " failed")', rank, size, checks, &
        failed
  call MPI_Finalize()
  if (failed > 0) stop 1
end program wrap_hello
