// File views (MPI_File_set_view) without MPI: which bytes of a file a process sees, in the order
// it sees them, and how those bytes are read and written (posix.h).
//
// A view is a displacement, an etype and a filetype; the filetype is tiled from the displacement
// on, instance k at disp + k * extent, and the data bytes of the tiles, in type-map order, form
// the view's stream. MPI offsets count etypes of that stream, so offset o is stream byte
// o * etype.size(). The view flattens one filetype instance once (its contiguous blocks, with
// their packed offsets) and maps any stream range to file ranges by a binary search in it.
//
// Data access, in three steps, for independent and collective I/O alike:
//   1. map(pos, bytes): the file ranges behind stream bytes [pos, pos + bytes), in stream order;
//   2. the memory side (the user's buffer, count, datatype) is packed to or unpacked from a
//      contiguous stream buffer (the MPI layer does this: device memory and data representations
//      are its business);
//   3. posix.h reads or writes the ranges from or to that stream buffer, sieving when asked.
#ifndef TORUSMPI_IO_VIEW_H_
#define TORUSMPI_IO_VIEW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "dtype/dtype.h"

namespace torusmpi::io {

// Bytes [off, off + len) of a file (or of one filetype instance, from its origin).
struct Extent {
  int64_t off = 0;
  int64_t len = 0;
  int64_t end() const { return off + len; }
};

// Appends `e` to `out`, merging it into the last extent when it continues it.
void append_extent(std::vector<Extent>* out, int64_t off, int64_t len);

// The contiguous blocks of one element of t, from t's origin, in type-map order, adjacent ones
// merged. A type of no data has none.
std::vector<Extent> flatten(const dtype::Type& t);

class View {
 public:
  // The default view: displacement 0, etype and filetype bytes (the file as a byte stream).
  View();

  // Why (disp, etype, filetype) cannot be a view ("filetype's size (12) is not a multiple of the
  // etype's (8)"), or empty when it can; `out` is set only when it can. Types are kept (shared).
  static std::string make(int64_t disp, const dtype::TypeRef& etype, const dtype::TypeRef& filetype,
                          View* out);

  int64_t disp() const { return disp_; }
  const dtype::Type& etype() const { return *etype_; }
  const dtype::Type& filetype() const { return *filetype_; }
  const dtype::TypeRef& etype_ref() const { return etype_; }
  const dtype::TypeRef& filetype_ref() const { return filetype_; }
  int64_t etype_size() const { return etype_->size(); }
  // Whether the stream is the file's bytes from disp on, without holes.
  bool contiguous() const { return contiguous_; }
  // Whether the view reaches any byte (a filetype without data reaches none).
  bool empty() const { return size_ == 0; }

  // The file byte where stream byte `pos` is (MPI_File_get_byte_offset with pos = offset *
  // etype size).
  int64_t file_offset(int64_t pos) const;
  // Whether the file bytes behind stream bytes [pos, pos + bytes) never go back: false only when
  // they cross from one instance of a filetype whose extent ends before its data (data_end()) into
  // the next. Accesses that are not are refused (MPI_ERR_UNSUPPORTED_OPERATION).
  bool increasing(int64_t pos, int64_t bytes) const;
  // Where one instance's data ends when its extent ends before that, else 0.
  int64_t data_end() const { return data_end_; }
  // Appends the file ranges behind stream bytes [pos, pos + bytes), in stream order, adjacent
  // ones merged; increasing() must hold (the planners rely on offsets that never decrease).
  void map(int64_t pos, int64_t bytes, std::vector<Extent>* out) const;
  // The smallest stream position whose file byte is at or after `file_off` (for positions
  // reached from file sizes: MPI_File_seek with MPI_SEEK_END).
  int64_t stream_position(int64_t file_off) const;

 private:
  int64_t disp_ = 0;
  dtype::TypeRef etype_, filetype_;
  std::vector<Extent> blocks_;   // one filetype instance, from its origin
  std::vector<int64_t> starts_;  // packed offset of each block within the instance
  int64_t size_ = 1;             // data bytes of one instance
  int64_t extent_ = 1;
  bool contiguous_ = true;
  int64_t data_end_ = 0;  // see data_end()
};

}  // namespace torusmpi::io

#endif  // TORUSMPI_IO_VIEW_H_
