/* h5_coll.c: parallel HDF5 over MPI-IO, built with HDF5's h5pcc (Debian's libhdf5-openmpi-dev),
 * run on Open MPI and on torusmpi; the script compares the files' h5dump outputs.
 *
 *   h5_coll FILE
 *
 * Collectively (H5FD_MPIO_COLLECTIVE transfers, the MPI-IO file driver) it creates FILE with two
 * chunked datasets of ints whose chunks straddle the ranks' parts: "rows", 6p x 20 in chunks of
 * 5 x 7, each rank writing a block of 6 rows; "cols", 9 x 4p in chunks of 4 x 3, each rank writing
 * every p-th column from its own (a strided hyperslab); and an attribute. Element (i, j) is
 * 1000 i + j + 7 in "rows" and 1000 i + j + 11 in "cols". It closes the file, opens it again
 * read-only and reads, collectively, another rank's part of each dataset, checking every value. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static int g_size;

/* After a failure HDF5 cannot go on with the file: the "done" line, then the job ends (the other
 * ranks may be waiting in a collective call). */
static int stop(void) {
  int rc = check_done(g_size);
  fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, rc == 0 ? 1 : rc);
  return rc;
}

static hid_t file_access(void) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  return fapl;
}

static hid_t collective(void) {
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
  return dxpl;
}

/* A chunked 2-D dataset of ints, rows x cols in chunks of cr x cc. */
static hid_t make_dataset(hid_t file, const char* name, hsize_t rows, hsize_t cols, hsize_t cr,
                          hsize_t cc) {
  hsize_t dims[2] = {rows, cols}, chunk[2] = {cr, cc};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  hid_t d = H5Dcreate2(file, name, H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(space);
  return d;
}

/* Selects in the dataset's space, and describes in memory, rank r's part of "rows" (block of 6
 * rows) or "cols" (columns r, r + p, ...): *n elements. */
static void part(hid_t dset, int cols_kind, int r, hid_t* fspace, hid_t* mspace, hsize_t* n) {
  *fspace = H5Dget_space(dset);
  hsize_t dims[2];
  H5Sget_simple_extent_dims(*fspace, dims, NULL);
  if (!cols_kind) {
    hsize_t start[2] = {(hsize_t)r * 6, 0}, count[2] = {6, dims[1]};
    H5Sselect_hyperslab(*fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    *n = 6 * dims[1];
  } else {
    hsize_t start[2] = {0, (hsize_t)r}, stride[2] = {1, (hsize_t)g_size};
    hsize_t count[2] = {dims[0], dims[1] / (hsize_t)g_size};
    H5Sselect_hyperslab(*fspace, H5S_SELECT_SET, start, stride, count, NULL);
    *n = count[0] * count[1];
  }
  *mspace = H5Screate_simple(1, n, NULL);
}

/* The value of element k (in selection order) of rank r's part. */
static int expected(int cols_kind, int r, hsize_t k, hsize_t dim1) {
  if (!cols_kind) return (int)(1000 * (r * 6 + k / dim1) + k % dim1 + 7);
  hsize_t per_row = dim1 / (hsize_t)g_size;
  return (int)(1000 * (k / per_row) + r + (k % per_row) * (hsize_t)g_size + 11);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (argc < 2) {
    if (g_rank == 0) fprintf(stderr, "usage: h5_coll FILE\n");
    MPI_Finalize();
    return 2;
  }
  const char* path = argv[1];
  const char* names[2] = {"rows", "cols"};
  const hsize_t shape[2][4] = {{(hsize_t)6 * g_size, 20, 5, 7}, {9, (hsize_t)4 * g_size, 4, 3}};

  hid_t fapl = file_access(), dxpl = collective();
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  check(file >= 0, "H5Fcreate with the MPI-IO driver", "failed");
  if (file < 0) return stop();
  {
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(file, "ranks", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attr, H5T_NATIVE_INT, &g_size);
    H5Aclose(attr);
    H5Sclose(space);
  }
  for (int kind = 0; kind < 2; ++kind) {
    hid_t d = make_dataset(file, names[kind], shape[kind][0], shape[kind][1], shape[kind][2],
                           shape[kind][3]);
    hid_t fs, ms;
    hsize_t n;
    part(d, kind, g_rank, &fs, &ms, &n);
    int* buf = malloc(n * sizeof(int));
    for (hsize_t k = 0; k < n; ++k) buf[k] = expected(kind, g_rank, k, shape[kind][1]);
    herr_t rc = H5Dwrite(d, H5T_NATIVE_INT, ms, fs, dxpl, buf);
    char what[64];
    snprintf(what, sizeof what, "collective H5Dwrite of \"%s\"", names[kind]);
    check(d >= 0 && rc >= 0, what, "failed");
    if (d < 0 || rc < 0) return stop(); /* HDF5 cannot go on with the file */
    free(buf);
    H5Sclose(fs);
    H5Sclose(ms);
    H5Dclose(d);
  }
  check(H5Fclose(file) >= 0, "H5Fclose after writing", "failed");

  file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  check(file >= 0, "H5Fopen read-only", "failed");
  if (file < 0) return stop();
  int other = (g_rank + 1) % g_size;
  for (int kind = 0; kind < 2; ++kind) {
    hid_t d = H5Dopen2(file, names[kind], H5P_DEFAULT);
    hid_t fs, ms;
    hsize_t n;
    part(d, kind, other, &fs, &ms, &n);
    int* buf = malloc(n * sizeof(int));
    for (hsize_t k = 0; k < n; ++k) buf[k] = -1;
    herr_t rc = H5Dread(d, H5T_NATIVE_INT, ms, fs, dxpl, buf);
    long bad = 0, first = -1;
    for (hsize_t k = 0; k < n; ++k)
      if (buf[k] != expected(kind, other, k, shape[kind][1])) {
        if (first < 0) first = (long)k;
        ++bad;
      }
    char what[64];
    snprintf(what, sizeof what, "collective H5Dread of rank %d's \"%s\"", other, names[kind]);
    check(rc >= 0 && bad == 0, what, "rc %d, %ld of %ld wrong, first at %ld", (int)rc, bad, (long)n,
          first);
    free(buf);
    H5Sclose(fs);
    H5Sclose(ms);
    H5Dclose(d);
  }
  check(H5Fclose(file) >= 0, "H5Fclose after reading", "failed");
  H5Pclose(fapl);
  H5Pclose(dxpl);
  int rc = check_done(g_size);
  MPI_Finalize();
  return rc;
}
