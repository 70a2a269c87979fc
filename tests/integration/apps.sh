#!/usr/bin/env bash
# Applications nobody wrote for torusmpi: Debian's own packages, built with Debian's Open MPI, as
# their users run them, with small inputs. C++ on Open MPI's C++ bindings (libmpi_cxx): ParFORM,
# MUSIC (which calls MPI:: itself), MPQC, IQ-TREE. Fortran: Quantum ESPRESSO's pw.x, Elk and the
# MUMPS examples on mpif.h (libmpi_mpifh), mpgrafic on use mpi_f08 (libmpi_usempif08). LAMMPS
# (C++ on the C API) writes and reads its restart file through MPI-IO. Each runs on Open MPI
# first; its result (an energy, a solution, a file) is then the one torusmpi must give
# by LD_LIBRARY_PATH and by LD_PRELOAD. With 2 ranks every reduction adds two numbers, so the
# results are the same to the last digit. Then MPICH's example programs, built by torusmpi's own
# wrappers. scripts/run-tests installs the packages (scripts/install-deps --apps); without them,
# each application is a skip.
. "$(dirname "$0")/lib.sh"

np=2
export OMP_NUM_THREADS=1  # pw.x and Elk would start a thread a core otherwise
examples=/usr/share/doc

# Each application: a function app_<name> <directory> <mpirun arguments...> that runs it in the
# (empty) directory and writes what must not change to <directory>/result; and the program it
# needs, to know whether it is installed.
apps=(parform music mpqc iqtree pwx elk mpgrafic mumps lammps)
declare -A need=(
  [parform]=parform [music]=music [mpqc]=mpqc [iqtree]=iqtree2-mpi [pwx]=pw.x [elk]=elk-lapw
  [mpgrafic]=mpgrafic [mumps]=/usr/lib/mumps/dsimpletest [lammps]=lmp
)

# mpi <directory> <mpirun arguments...> -- <command...>: one job of np ranks in the directory (its
# standard input this function's), what it printed in <directory>/out.
mpi() {
  local dir=$1 args=()
  shift
  while [ "$1" != -- ]; do
    args+=("$1")
    shift
  done
  shift
  run_job 300 env -C "$dir" "${mpirun[@]}" -np "$np" -x OMP_NUM_THREADS "${args[@]}" "$@"
  cat "$job_out" "$job_err" >"$dir/out"
}

# FORM's parallel version: a polynomial expanded and evaluated on the ranks.
app_parform() {
  local dir=$1
  shift
  cat >"$dir/t.frm" <<'EOF'
#-
Symbols x,y,z,w;
Local F = (x+y+z+w)^24;
.sort
Local G = F*(x-y+2*z-3*w)^6;
.sort
Drop F;
id x = 2;
id y = 3;
id z = 5;
id w = 7;
Print G;
.end
EOF
  mpi "$dir" "$@" -- parform t.frm
  grep -A1 '^ *G =' "$dir/out" >"$dir/result"
}

# MUSIC: a producer and a consumer of a wave, one rank each, joined by MUSIC's ports.
app_music() {
  local dir=$1 bin
  shift
  bin=$(dirname "$(ls /usr/lib/*/music-*/waveproducer | head -n 1)")
  cat >"$dir/wave.music" <<EOF
stoptime=1.0
[producer]
  binary=$bin/waveproducer
  args=120
  np=1
[consumer]
  binary=$bin/waveconsumer
  args=dumpfile
  np=1
  producer.wavedata -> consumer.wavedata [120]
EOF
  mpi "$dir" "$@" -- music wave.music
  [ -s "$dir/dumpfile0.out" ] && md5sum <"$dir/dumpfile0.out" >"$dir/result"
}

# MPQC: density functional theory and a Hartree-Fock frequency calculation on water. Its default
# memory group starts a thread that calls MPI in a job that asked for one thread: not with this.
app_mpqc() {
  local dir=$1 input
  shift
  for input in ksh2o hfh2ofreq; do
    cp "$examples/mpqc/examples/$input.in" "$dir/"
    mpi "$dir" "$@" -- mpqc -memorygrp '<ProcMemoryGrp>:()' "$input.in"
    grep 'Value of the MolecularEnergy' "$dir/out" >>"$dir/result"
  done
}

# IQ-TREE: a maximum-likelihood tree of its example alignment, from a fixed seed.
app_iqtree() {
  local dir=$1
  shift
  cp "$examples/iqtree/examples/example.phy" "$dir/"
  mpi "$dir" "$@" -- iqtree2-mpi -s example.phy -m GTR+G -seed 12345 -redo -pre t
  grep 'BEST SCORE FOUND' "$dir/out" >"$dir/result"
  [ -s "$dir/t.treefile" ] && cat "$dir/t.treefile" >>"$dir/result"
}

# pw.x: silicon, self-consistent, with forces and stress; the plane waves shared by the ranks,
# then the k-points in two pools.
app_pwx() {
  local dir=$1 pools
  shift
  mkdir -p "$dir/pseudo"
  zcat "$examples/quantum-espresso/examples/EPW/sic/pp/Si.pz-vbc.UPF.gz" >"$dir/pseudo/Si.pz-vbc.UPF"
  cat >"$dir/si.in" <<'EOF'
&control
  calculation = 'scf', prefix = 'si', pseudo_dir = './pseudo', outdir = './tmp'
  tprnfor = .true., tstress = .true.
/
&system
  ibrav = 2, celldm(1) = 10.20, nat = 2, ntyp = 1, ecutwfc = 18.0
/
&electrons
  conv_thr = 1.0d-10
/
ATOMIC_SPECIES
 Si  28.086  Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
 Si 0.00 0.00 0.00
 Si 0.25 0.25 0.25
K_POINTS automatic
 4 4 4 1 1 1
EOF
  for pools in 1 2; do
    rm -rf "$dir/tmp"
    mpi "$dir" "$@" -- pw.x -nk "$pools" -in si.in
    grep -E '^!    total energy|P= ' "$dir/out" >>"$dir/result"
  done
}

# Elk: the ground state of silicon (its basic example, without the band structure).
app_elk() {
  local dir=$1
  shift
  sed -e "s#'../../../species/'#'/usr/share/elk-lapw/species/'#" -e '/^  20$/d' \
    "$examples/elk-lapw/examples/basic/Si/elk.in" >"$dir/elk.in"
  mpi "$dir" "$@" -- elk-lapw
  [ -s "$dir/TOTENERGY.OUT" ] && tail -n 1 "$dir/TOTENERGY.OUT" >"$dir/result"
}

# mpgrafic: initial conditions of a cosmological simulation, the density and one velocity field.
app_mpgrafic() {
  local dir=$1
  shift
  mpi "$dir" "$@" -- mpgrafic --np=64 <"$examples/mpgrafic/examples/Input.stdin"
  [ -s "$dir/ic_deltab" ] && md5sum <"$dir/ic_deltab" >"$dir/result"
  [ -s "$dir/ic_velcx" ] && md5sum <"$dir/ic_velcx" >>"$dir/result"
}

# MUMPS: its examples solve a small real and a small complex system.
app_mumps() {
  local dir=$1 kind
  shift
  for kind in d:real z:cmplx; do
    mpi "$dir" "$@" -- "/usr/lib/mumps/${kind%%:*}simpletest" \
      <"/usr/lib/mumps/input_simpletest_${kind#*:}"
    grep -A1 'Solution is' "$dir/out" >>"$dir/result"
  done
}

# LAMMPS: Lennard-Jones atoms run 100 steps, written to a restart file through MPI-IO (its MPIIO
# package: collective writes at explicit offsets), read back and run 50 more: the thermodynamic
# output and the restart file's bytes.
app_lammps() {
  local dir=$1
  shift
  cat >"$dir/in.lj" <<'EOF'
units           lj
atom_style      atomic
lattice         fcc 0.8442
region          box block 0 10 0 10 0 10
create_box      1 box
create_atoms    1 box
mass            1 1.0
velocity        all create 1.44 87287 loop geom
pair_style      lj/cut 2.5
pair_coeff      1 1 1.0 1.0 2.5
neighbor        0.3 bin
neigh_modify    delay 0 every 20 check no
fix             1 all nve
thermo          50
run             100
write_restart   file.mpiio
clear
read_restart    file.mpiio
pair_style      lj/cut 2.5
pair_coeff      1 1 1.0 1.0 2.5
fix             1 all nve
thermo          50
run             50
EOF
  mpi "$dir" "$@" -- lmp -in in.lj -log none
  grep -E '^ +[0-9]+ +[-0-9.]' "$dir/out" >"$dir/result"
  [ -s "$dir/file.mpiio" ] && md5sum <"$dir/file.mpiio" >>"$dir/result"
}

# --- Sources: MPICH's example programs (mpich-doc), built by Open MPI's wrappers and run on Open MPI
# (the reference), then built by torusmpi's and run on torusmpi: the third way, in which C++ (the
# MPI:: bindings of cxxpi.cxx) and Fortran (mpif.h in fpi.f, use mpi in pi3f90.f90) reach
# torusmpi through Open MPI's binding libraries that the wrappers link. Each computes pi from the
# number of intervals it reads, a double MPI_Reduce: at 2 and 3 ranks both libraries add in the same
# order (at 4 the last digits differ: another legal order).
build_and_run() {
  local wrapper=$1 src=$2 bin=$3 np=$4
  shift 4
  local flags=()
  case $src in *.cxx) flags=(-DHAVE_CXX_IOSTREAM -DHAVE_NAMESPACE_STD) ;; *) flags=("-J$work") ;; esac
  [ -x "$bin" ] || run_job 120 "$wrapper" "${flags[@]}" -o "$bin" "$src"
  run_job 60 "${mpirun[@]}" -np "$np" "$@" "$bin" <"$work/intervals"
  grep 'pi is approximately' "$job_out"
}

# What the programs read: the number of intervals, then 0 to stop.
printf '100000\n0\n' >"$work/intervals"

mpich_examples=$examples/mpich/examples
for src in cxx/cxxpi.cxx f77/fpi.f f90/pi3f90.f90; do
  name=${src##*/}
  name=${name%.*}
  if [ ! -e "$mpich_examples/$src" ]; then
    skip "MPICH's $name built by torusmpi's wrappers" "mpich-doc is not installed (scripts/install-deps --apps)"
    continue
  fi
  case $src in *.cxx) ompi=$TM_OMPI_MPICXX ours=$TM_BINDIR/mpicxx ;; *) ompi=$TM_OMPI_MPIFORT ours=$TM_BINDIR/mpifort ;; esac
  for ranks in 2 3; do
    build_and_run "$ompi" "$mpich_examples/$src" "$work/$name.ompi" $ranks >"$work/$name.$ranks.ompi"
    check "MPICH's $name, Open MPI's build on Open MPI, np=$ranks (the reference)" \
      test -s "$work/$name.$ranks.ompi" || diag_job
    build_and_run "$ours" "$mpich_examples/$src" "$work/$name.torusmpi" $ranks >"$work/$name.$ranks.tm"
    check "MPICH's $name, torusmpi's build, np=$ranks: Open MPI's result" \
      cmp -s "$work/$name.$ranks.ompi" "$work/$name.$ranks.tm" ||
      { diag "$(cat "$work/$name.$ranks.tm")"; diag_job; }
  done
  check "MPICH's $name built by torusmpi's wrapper loads torusmpi's libmpi.so.40" \
    grep -q "libmpi.so.40 => $TM_LIBDIR/libmpi.so.40" <(ldd "$work/$name.torusmpi")
done

for app in "${apps[@]}"; do
  if ! command -v "${need[$app]}" >/dev/null; then
    skip "$app on Open MPI and torusmpi" "${need[$app]} is not installed (scripts/install-deps --apps)"
    continue
  fi
  ref=$work/$app.ompi
  mkdir -p "$ref"
  "app_$app" "$ref"
  check "$app on Open MPI (the reference) gives a result" test -s "$ref/result" ||
    { diag_file "$ref/out"; continue; }
  diag "$app: $(head -n 1 "$ref/result")"
  for route in path preload; do
    dir=$work/$app.$route
    mkdir -p "$dir"
    if [ $route = path ]; then args=("${via_path[@]}"); else args=("${via_preload[@]}"); fi
    "app_$app" "$dir" "${args[@]}"
    check "$app on torusmpi ($route) gives Open MPI's result" cmp -s "$ref/result" "$dir/result" ||
      { diff "$ref/result" "$dir/result" | head -n 10 | sed 's/^/# /'; diag_file "$dir/out"; }
  done
done

check_shm
tap_done
