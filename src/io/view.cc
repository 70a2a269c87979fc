#include "io/view.h"

#include <algorithm>

namespace torusmpi::io {
namespace {

// The default view's etype and filetype: a byte. The MPI layer replaces it by MPI_BYTE's engine
// type at MPI_File_open; this one serves views made without MPI (unit tests).
const dtype::TypeRef& byte_type() {
  static const dtype::Basic kByte{-1, 1, 1, dtype::Encoding::kRaw, 1, 1};
  static const dtype::TypeRef t = dtype::basic(kByte);
  return t;
}

void flatten_program(const dtype::Program& p, int64_t origin, std::vector<Extent>* out) {
  for (const dtype::Node& n : p.nodes) {
    for (int64_t i = 0; i < n.count; ++i) {
      int64_t at = origin + n.disp + i * n.stride;
      if (n.kind == dtype::Node::kBlock) {
        append_extent(out, at, n.len);
      } else {
        flatten_program(*n.sub, at, out);
      }
    }
  }
}

}  // namespace

void append_extent(std::vector<Extent>* out, int64_t off, int64_t len) {
  if (len <= 0) return;
  if (!out->empty() && out->back().end() == off) {
    out->back().len += len;
  } else {
    out->push_back(Extent{off, len});
  }
}

std::vector<Extent> flatten(const dtype::Type& t) {
  std::vector<Extent> out;
  flatten_program(t.program(), 0, &out);
  return out;
}

View::View() : etype_(byte_type()), filetype_(byte_type()), blocks_{Extent{0, 1}}, starts_{0} {}

std::string View::make(int64_t disp, const dtype::TypeRef& etype, const dtype::TypeRef& filetype,
                       View* out) {
  if (disp < 0) return "disp argument is negative (" + std::to_string(disp) + ")";
  if (etype->size() <= 0) return "etype has no data";
  if (filetype->size() % etype->size() != 0) {
    return "filetype's size (" + std::to_string(filetype->size()) +
           ") is not a multiple of the etype's (" + std::to_string(etype->size()) + ")";
  }
  if (etype->lb() < 0 || filetype->lb() < 0 || etype->true_lb() < 0 || filetype->true_lb() < 0) {
    return "a negative displacement in the etype or filetype";
  }
  std::vector<Extent> blocks = flatten(*filetype);
  if (blocks.empty()) {
    // A process with no part of the file (a darray's empty block): it may access nothing.
    View v;
    v.disp_ = disp;
    v.etype_ = etype;
    v.filetype_ = filetype;
    v.blocks_.clear();
    v.starts_.clear();
    v.size_ = 0;
    v.extent_ = filetype->extent();
    v.contiguous_ = false;
    *out = std::move(v);
    return {};
  }
  for (size_t i = 1; i < blocks.size(); ++i) {
    if (blocks[i].off < blocks[i - 1].end()) {
      return "filetype's displacements decrease or overlap (byte " + std::to_string(blocks[i].off) +
             " after byte " + std::to_string(blocks[i - 1].end() - 1) + ")";
    }
  }
  View v;
  // The next instance starts before this one ends (parallel HDF5 writes its chunks through such a
  // filetype, resized to a small extent, one instance a call): accesses may not cross instances.
  v.data_end_ = filetype->extent() < blocks.back().end() ? blocks.back().end() : 0;
  v.disp_ = disp;
  v.etype_ = etype;
  v.filetype_ = filetype;
  v.size_ = filetype->size();
  v.extent_ = filetype->extent();
  v.starts_.clear();
  int64_t at = 0;
  for (const Extent& b : blocks) {
    v.starts_.push_back(at);
    at += b.len;
  }
  v.blocks_ = std::move(blocks);
  v.contiguous_ = v.blocks_.size() == 1 && v.blocks_[0].off == 0 && v.blocks_[0].len == v.extent_;
  *out = std::move(v);
  return {};
}

int64_t View::file_offset(int64_t pos) const {
  if (size_ == 0) return disp_;
  int64_t k = pos / size_, within = pos % size_;
  size_t b = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), within) -
                                 starts_.begin() - 1);
  return disp_ + k * extent_ + blocks_[b].off + (within - starts_[b]);
}

bool View::increasing(int64_t pos, int64_t bytes) const {
  if (data_end_ == 0 || bytes <= 0 || size_ == 0) return true;
  return pos / size_ == (pos + bytes - 1) / size_;
}

void View::map(int64_t pos, int64_t bytes, std::vector<Extent>* out) const {
  if (bytes <= 0 || size_ == 0) return;
  if (contiguous_) {
    append_extent(out, disp_ + pos, bytes);
    return;
  }
  int64_t k = pos / size_, within = pos % size_;
  size_t b = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), within) -
                                 starts_.begin() - 1);
  int64_t skip = within - starts_[b];
  while (bytes > 0) {
    const Extent& blk = blocks_[b];
    int64_t n = std::min(bytes, blk.len - skip);
    append_extent(out, disp_ + k * extent_ + blk.off + skip, n);
    bytes -= n;
    skip = 0;
    if (++b == blocks_.size()) {
      b = 0;
      ++k;
    }
  }
}

int64_t View::stream_position(int64_t file_off) const {
  int64_t rel = file_off - disp_;
  if (rel <= 0 || size_ == 0) return 0;
  if (contiguous_) return rel;
  int64_t k = rel / extent_, within = rel % extent_;
  int64_t pos = k * size_;
  for (size_t b = 0; b < blocks_.size(); ++b) {
    if (within < blocks_[b].end()) {
      return pos + starts_[b] + std::max<int64_t>(0, within - blocks_[b].off);
    }
  }
  return pos + size_;
}

}  // namespace torusmpi::io
