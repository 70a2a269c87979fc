#!/usr/bin/env bash
# torusmpi's installed libmpi.so.40 against Open MPI's: what a binary built with Open MPI can ask
# of it must be there, with the same kind and size, and nothing of torusmpi's insides may show.
. "$(dirname "$0")/../integration/lib.sh"

ours=$tm_libmpi
theirs=$TM_OMPI_LIBMPI
mpi_h=$TM_OMPI_INCDIR/mpi.h
# configure requires Open MPI's headers, whose package brings its library: not finding it is a
# failure, never a reason to compare nothing.
if ! check "Open MPI's libmpi.so.40 is at $theirs" test -e "$theirs"; then
  tap_done
fi

# Defined dynamic symbols as "name type" (nm letters: T function, W weak function, D/B/V data).
"$TM_NM" -D --defined-only "$ours" | awk 'NF == 3 { print $3, $2 }' | sort >"$work/ours.nm"
"$TM_NM" -D --defined-only "$theirs" | awk 'NF == 3 { print $3, $2 }' | sort >"$work/theirs.nm"
# Data objects as "name size" (readelf's st_size), defined ones only.
objects() { readelf -W --dyn-syms "$1" | awk '$4 == "OBJECT" && $7 != "UND" { print $8, $3 }' | sort; }
objects "$ours" >"$work/ours.objects"
objects "$theirs" >"$work/theirs.objects"

# report <file of offenders> <what they are>: the check passes when the file is empty.
report() {
  local n
  n=$(grep -c . "$1")
  [ "$n" -eq 0 ] && return 0
  diag "$n $2:"
  head -n 40 "$1" | sed 's/^/#   /'
  [ "$n" -le 40 ] || diag "... (all in $1)"
  return 1
}

# --- The library as a whole.
check "SONAME is libmpi.so.40" elf_has "$ours" -d '\(SONAME\).*\[libmpi\.so\.40\]'
# Executables hold copies of the predefined objects; symbolic binding would keep the library on
# its own, stale copy.
check "no DT_SYMBOLIC" not elf_has "$ours" -d '\(SYMBOLIC\)'
check "no SYMBOLIC in DT_FLAGS" not elf_has "$ours" -d '\(FLAGS\).*SYMBOLIC'

# --- Every function Open MPI's C API exports.
functions='^(P?MPIX?_[A-Z][a-z]|P?MPI_T_|OMPI_C_MPI_|OMPI_Affinity_str$)'
awk '$2 ~ /^[TWi]$/ { print $1 }' "$work/theirs.nm" | grep -E "$functions" >"$work/their-functions"
awk '$2 ~ /^[TWi]$/ { print $1 }' "$work/ours.nm" >"$work/our-functions"
diag "Open MPI exports $(grep -c . "$work/their-functions") C API functions"
for family in 'MPI_' 'PMPI_' 'MPIX_' 'PMPIX_' 'OMPI_'; do
  grep "^$family" "$work/their-functions" | grep -vE '^P?MPI_T_' |
    comm -23 - "$work/our-functions" >"$work/missing.$family"
  check "every ${family}* function of Open MPI is exported" \
    report "$work/missing.$family" "missing ${family}* functions"
done
grep -E '^P?MPI_T_' "$work/their-functions" | comm -23 - "$work/our-functions" >"$work/missing.T"
check "every MPI_T_*/PMPI_T_* function of Open MPI is exported" \
  report "$work/missing.T" "missing tools interface functions"

# --- MPI_X is a weak alias of a strong PMPI_X, so a profiler's MPI_X can sit on top.
sed -n 's/^P\(MPI[A-Za-z0-9_]*\) [TW]$/\1/p' "$work/theirs.nm" | sort >"$work/their-pairs.tmp"
awk '$2 ~ /^[TW]$/ { print $1 }' "$work/theirs.nm" | grep '^MPI' |
  comm -12 - "$work/their-pairs.tmp" >"$work/pairs"
awk 'NR == FNR { want[$1]; next }
     ($1 in want) && $2 != "W" { print $1 " is " $2 }' "$work/pairs" "$work/ours.nm" >"$work/not-weak"
awk 'NR == FNR { want["P" $1]; next }
     ($1 in want) && $2 != "T" { print $1 " is " $2 }' "$work/pairs" "$work/ours.nm" >"$work/not-strong"
check "MPI_X is weak where Open MPI has MPI_X and PMPI_X" report "$work/not-weak" "not weak"
check "PMPI_X is strong where Open MPI has MPI_X and PMPI_X" report "$work/not-strong" "not strong"
"$TM_NM" -D --defined-only "$ours" | awk 'NF == 3 { addr[$3] = $1 }
  END { for (s in addr) if (s ~ /^MPI/ && ("P" s) in addr && addr[s] != addr["P" s]) print s }' |
  sort >"$work/not-alias"
check "MPI_X and PMPI_X are at the same address" report "$work/not-alias" "MPI_X apart from PMPI_X"

# --- The data objects mpi.h names: exported, with exactly Open MPI's size (a gcc-built binary
# copies exactly that many bytes into itself).
sed -n 's/^OMPI_DECLSPEC *extern [^(]*[ *]\([A-Za-z_][A-Za-z0-9_]*\) *; *$/\1/p' "$mpi_h" |
  sort -u >"$work/header-objects"
diag "mpi.h names $(grep -c . "$work/header-objects") data objects"
check "mpi.h names ompi_mpi_lb, ompi_mpi_ub and MPI_F_STATUS(ES)_IGNORE" \
  test "$(grep -cxE 'ompi_mpi_[lu]b|MPI_F_STATUS(ES)?_IGNORE' "$work/header-objects")" -eq 4
join -a1 -e none -o 0,2.2 "$work/header-objects" "$work/theirs.objects" |
  join -a1 -e none -o 0,1.2,2.2 - "$work/ours.objects" >"$work/object-sizes"
awk '$2 == "none" { print $1 }' "$work/object-sizes" >"$work/not-in-theirs"
check "Open MPI exports every object of its mpi.h" report "$work/not-in-theirs" "not exported by Open MPI"
awk '$2 != "none" && $3 == "none" { print $1 }' "$work/object-sizes" >"$work/missing-objects"
check "every object of mpi.h is exported" report "$work/missing-objects" "missing objects"
awk '$2 != "none" && $3 != "none" && $2 != $3 { print $1 ": Open MPI " $2 ", torusmpi " $3 }' \
  "$work/object-sizes" >"$work/wrong-sizes"
check "every object has Open MPI's size" report "$work/wrong-sizes" "objects of the wrong size"
# Copy relocations need default visibility; a weak object would let a stray definition win.
readelf -W --dyn-syms "$ours" | awk '$4 == "OBJECT" && $7 != "UND" && ($5 != "GLOBAL" || $6 != "DEFAULT") { print $8, $5, $6 }' \
  >"$work/odd-objects"
check "every object is GLOBAL with DEFAULT visibility" report "$work/odd-objects" "odd objects"

# --- What Open MPI's own binding libraries take from its libmpi.so.40 beyond the C API: the C++
# bindings (libmpi_cxx, linked into every program Debian's mpicxx builds) and the Fortran ones
# (libmpi_mpifh under mpif.h, and the `use mpi` / `use mpi_f08` libraries on top of it) run
# unchanged on torusmpi only if each is there, a function where Open MPI has a function and an
# object of Open MPI's size where it has an object. Read off the installed libraries each time.
bindings=()
for lib in libmpi_cxx libmpi_mpifh libmpi_usempi_ignore_tkr libmpi_usempif08; do
  path=$(dirname "$theirs")/$lib.so.40
  [ -e "$path" ] && bindings+=("$path")
done
check "Open MPI's C++ and Fortran binding libraries are installed (${#bindings[@]} of 4)" \
  test ${#bindings[@]} -eq 4
for lib in "${bindings[@]}"; do
  "$TM_NM" -D --undefined-only "$lib" | awk '{ print $NF }'
done | sort -u | join - <(awk '{ print $1 }' "$work/theirs.nm") >"$work/binding-imports"
diag "the binding libraries import $(grep -c . "$work/binding-imports") symbols of Open MPI's libmpi.so.40"
# "name kind size": kind F for a function (size -), O for an object.
kinds() {
  readelf -W --dyn-syms "$1" | awk '$7 != "UND" && ($4 == "FUNC" || $4 == "OBJECT") {
    print $8, ($4 == "FUNC" ? "F" : "O"), ($4 == "FUNC" ? "-" : $3) }' | sort -u
}
kinds "$theirs" >"$work/theirs.kinds"
kinds "$ours" >"$work/ours.kinds"
# compare_kinds <file of "name kind size">: the names missing from torusmpi or of another kind.
compare_kinds() {
  join -a1 -e none -o 0,1.2,1.3,2.2,2.3 "$1" "$work/ours.kinds" |
    awk '$4 == "none" { print $1 " is missing" }
         $4 != "none" && ($2 != $4 || $3 != $5) { print $1 ": Open MPI " $2 " " $3 ", torusmpi " $4 " " $5 }'
}
join "$work/binding-imports" "$work/theirs.kinds" >"$work/binding-kinds"
compare_kinds "$work/binding-kinds" >"$work/binding-missing"
check "every symbol the binding libraries import is exported, of Open MPI's kind and size" \
  report "$work/binding-missing" "symbols the binding libraries need"
# Fortran programs themselves name some of libmpi.so.40's symbols: the callbacks of mpif.h's
# EXTERNAL statements (MPI_COMM_DUP_FN, ...) and what the modules call (MPI_WTIME_F90, ...), in
# every mangling Open MPI exports; and their common blocks bind to the sentinel objects.
grep -E '^(mpi_[a-z0-9_]+|MPI_[A-Z0-9_]+) ' "$work/theirs.kinds" >"$work/fortran-kinds"
compare_kinds "$work/fortran-kinds" >"$work/fortran-missing"
diag "Open MPI's libmpi.so.40 exports $(grep -c . "$work/fortran-kinds") Fortran-named symbols"
check "every Fortran-named symbol of Open MPI's libmpi.so.40 is exported, of the same kind and size" \
  report "$work/fortran-missing" "Fortran symbols"

# --- Nothing else: no C++ internals, no helper of torusmpi's. Every symbol exported is one that
# Open MPI's libmpi.so.40 exports too, or the extension API of torusmpi.h (torusmpi_*, and the
# stream calls in the shape of MPICH's: MPIX_Stream_*, MPIX_*_enqueue).
awk '{ print $1 }' "$work/ours.nm" | grep -Ev '^(torusmpi_|MPIX_Stream_|MPIX_[A-Za-z_]+_enqueue$)' |
  comm -23 - <(awk '{ print $1 }' "$work/theirs.nm") >"$work/extra"
check "nothing exported that Open MPI's libmpi.so.40 does not export, but torusmpi.h's API" \
  report "$work/extra" "symbols Open MPI does not export"

tap_done
