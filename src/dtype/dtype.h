// The datatype engine: what a datatype is for the rest of torusmpi, without MPI. A Type is
// immutable and shared (TypeRef); the layer above builds one per datatype from the MPI
// constructors, and everything that moves data asks it how.
//
// A type has three faces:
//  - its bounds: size (bytes of data), lb/ub/extent (with MPI's LB/UB markers and alignment
//    padding), true lb/ub (the bytes actually touched);
//  - its layout, a Program: the data's bytes in packing order as a short list of Nodes, each
//    either `count` blocks of `len` contiguous bytes at a fixed stride, or `count` passes at a
//    fixed stride over a sub-program that is shared, not copied. Adjacent blocks are merged and
//    regular strides stay loops, so a vector of a million doubles is one node and packing copies
//    whole blocks with memcpy;
//  - its signature, a Sig: the sequence of basic elements (MPI's type signature), compressed the
//    same way, for counting elements, for external32 conversion and for reductions (uniform()).
//
// Packing works on byte ranges of the packed stream, so large messages can be packed in chunks:
// pack_range(src, count, from, to, dst) writes exactly the stream bytes [from, to).
#ifndef TORUSMPI_DTYPE_DTYPE_H_
#define TORUSMPI_DTYPE_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace torusmpi::dtype {

// How a basic element is written in the canonical big-endian form (MPI's "external32").
enum class Encoding : uint8_t {
  kRaw,       // bytes as they are: characters, bytes, one-byte booleans
  kSigned,    // two's complement: sign-extended when widened, low bytes kept when narrowed
  kUnsigned,  // zero-extended when widened, low bytes kept when narrowed
  kFloat,     // IEEE binary32/64/128: only the byte order changes
  kX87,       // x86 80-bit extended precision (stored in 16 bytes) <-> IEEE binary128
};

// A basic element, described by the layer above; it must outlive every type built on it.
struct Basic {
  int32_t id;      // the layer above's number for it (MPI: the predefined type's index)
  uint32_t size;   // native bytes
  uint32_t align;  // native alignment: pads extents (MPI's epsilon)
  Encoding encoding;
  uint8_t parts;           // 2 for complex numbers (each half converted on its own), else 1
  uint32_t external_size;  // bytes in the canonical form
};

struct Program;
using ProgramRef = std::shared_ptr<const Program>;

// One step of a layout. kBlock: `count` blocks of `len` contiguous bytes at disp, disp + stride,
// ... kLoop: `count` passes over `sub` with origins disp, disp + stride, ... (len = sub->bytes).
// Displacements are bytes from the origin of the enclosing pass (the type's origin at the top).
struct Node {
  enum Kind : uint8_t { kBlock, kLoop };
  Kind kind = kBlock;
  int64_t count = 0;
  int64_t len = 0;
  int64_t stride = 0;
  int64_t disp = 0;
  int64_t start = 0;  // packed offset of this node's first byte within its program
  ProgramRef sub;     // kLoop only

  int64_t bytes() const { return count * len; }
};

// A sequence of nodes, packed one after the other. `bytes`: packed bytes of one pass.
struct Program {
  std::vector<Node> nodes;
  int64_t bytes = 0;
};

struct Sig;
using SigRef = std::shared_ptr<const Sig>;

// One step of a signature: `count` elements of `basic`, or (basic == nullptr) `count` repetitions
// of `sub`.
struct SigNode {
  const Basic* basic = nullptr;
  int64_t count = 0;
  int64_t unit_bytes = 0;     // packed bytes of one element / one repetition
  int64_t unit_elements = 0;  // basic elements of one element (1) / one repetition
  int64_t start = 0;          // packed offset of this node within its signature
  int64_t first = 0;          // index of this node's first element within its signature
  SigRef sub;
};

struct Sig {
  std::vector<SigNode> nodes;
  int64_t bytes = 0;
  int64_t elements = 0;
};

class Type;
using TypeRef = std::shared_ptr<const Type>;

class Type {
 public:
  // Bounds, in bytes. extent() = ub() - lb(); a type without data and markers is all zeros.
  int64_t size() const { return size_; }
  int64_t lb() const { return lb_; }
  int64_t ub() const { return ub_; }
  int64_t extent() const { return ub_ - lb_; }
  int64_t true_lb() const { return true_lb_; }
  int64_t true_ub() const { return true_ub_; }
  int64_t true_extent() const { return true_ub_ - true_lb_; }
  uint32_t align() const { return align_; }
  // Basic elements in one element of the type (MPI_Get_elements' unit).
  int64_t elements() const { return sig_->elements; }
  // Bytes of one element of the type in the canonical (external32) form.
  int64_t external_size() const { return external_size_; }

  // When every basic element of the type is one predefined kind as a whole (contiguous(4, MPI_INT)
  // is 4 MPI_INT; a vector of MPI_DOUBLE_INT is n MPI_DOUBLE_INT): that kind's id, and how many
  // there are in one element of the type. Otherwise (mixed kinds, or no data) -1 and 0.
  int32_t uniform_id() const { return uniform_id_; }
  int64_t uniform_count() const { return uniform_count_; }

  // Whether `count` consecutive elements (at extent() intervals) are one contiguous block of
  // count * size() bytes; *offset then gets its displacement from the buffer's address.
  bool contiguous(int64_t count, int64_t* offset) const;

  // Packing: `count` elements starting at `buf` (element i at buf + i * extent()) to and from
  // count * size() contiguous bytes, in type-map order.
  void pack(const void* buf, int64_t count, void* packed) const;
  void unpack(const void* packed, int64_t count, void* buf) const;
  // The same for the bytes [from, to) of the packed stream only: pack_range writes to - from
  // bytes at `packed` (the stream's byte `from` at packed[0]); unpack_range reads them.
  void pack_range(const void* buf, int64_t count, int64_t from, int64_t to, void* packed) const;
  void unpack_range(const void* packed, int64_t count, int64_t from, int64_t to, void* buf) const;
  // Calls fn(ctx, address, bytes) for each contiguous piece of memory behind the stream bytes
  // [from, to), in stream order (for scatter/gather transports and device copies).
  using BlockFn = void (*)(void* ctx, char* address, size_t bytes);
  void for_each_block(const void* buf, int64_t count, int64_t from, int64_t to, BlockFn fn,
                      void* ctx) const;

  // Basic elements wholly inside the first `bytes` bytes of a stream of this type, or -1 when
  // `bytes` ends inside an element (MPI_Get_elements: MPI_UNDEFINED). 0 for a type without data.
  int64_t elements_in(int64_t bytes) const;
  // Packed bytes of the first `n` basic elements of a stream of this type.
  int64_t bytes_of_elements(int64_t n) const;

  // Converts `count` elements' packed native bytes to the canonical form (count *
  // external_size() bytes) and back.
  void to_external(const void* packed, int64_t count, void* external) const;
  void from_external(const void* external, int64_t count, void* packed) const;

  const Program& program() const { return *program_; }
  const Sig& signature() const { return *sig_; }
  // The layout as text, e.g. "8x4/16@0 (2x(4@0 8@8)/32@64)", for tests and debugging:
  // a block "COUNTxLEN/STRIDE@DISP" ("LEN@DISP" when single), a loop "COUNTx(...)/STRIDE@DISP".
  std::string describe() const;
  std::string describe_signature() const;  // e.g. "3x(1x#4 2x#7)": element counts and ids

 private:
  friend class Builder;

  // The single node that `count` consecutive elements form (shared with the packers).
  Node repeated(int64_t count) const;

  int64_t size_ = 0;
  int64_t lb_ = 0, ub_ = 0;
  int64_t true_lb_ = 0, true_ub_ = 0;
  uint32_t align_ = 1;
  int64_t external_size_ = 0;
  int32_t uniform_id_ = -1;
  int64_t uniform_count_ = 0;
  // What a type built on this one needs for its bounds: whether this one has any (data or
  // markers), and whether lb_/ub_ are sticky (set by MPI_LB/MPI_UB markers or a resize: they
  // then win over the bounds of other members).
  bool has_bounds_ = false;
  bool sticky_lb_ = false, sticky_ub_ = false;
  bool has_data_ = false;  // true_lb_/true_ub_ are the data's bounds
  ProgramRef program_;
  SigRef sig_;
};

// Constructors. Counts and lengths are non-negative (the layer above checks); displacements and
// strides are in bytes. Each returns nullptr when the new type's size, extent or element count
// would overflow 63 bits.
TypeRef basic(const Basic& b);
TypeRef lb_marker();  // MPI_LB: no data, an LB marker at 0
TypeRef ub_marker();  // MPI_UB
TypeRef contiguous(int64_t count, const TypeRef& old);
TypeRef hvector(int64_t count, int64_t blocklen, int64_t stride, const TypeRef& old);
TypeRef hindexed(const std::vector<int64_t>& blocklens, const std::vector<int64_t>& displs,
                 const TypeRef& old);
TypeRef hindexed_block(int64_t blocklen, const std::vector<int64_t>& displs, const TypeRef& old);
TypeRef structure(const std::vector<int64_t>& blocklens, const std::vector<int64_t>& displs,
                  const std::vector<TypeRef>& types);
// Bounds set to exactly [lb, lb + extent): previous markers are dropped.
TypeRef resized(const TypeRef& old, int64_t lb, int64_t extent);
// The same type, declared uniform as `id` (a predefined pair type such as MPI_DOUBLE_INT, built
// from its two members).
TypeRef named(const TypeRef& layout, int32_t id);

enum class Order { kC, kFortran };
enum class Distribution { kBlock, kCyclic, kNone };
constexpr int64_t kDefaultDarg = -1;

// MPI_Type_create_subarray: dims sizes[i], the part subsizes[i] from starts[i]; lb 0 and extent
// the whole array's. The arguments must be valid (0 <= starts[i], starts[i] + subsizes[i] <=
// sizes[i], subsizes[i] >= 1 ...).
TypeRef subarray(const std::vector<int64_t>& sizes, const std::vector<int64_t>& subsizes,
                 const std::vector<int64_t>& starts, Order order, const TypeRef& old);
// MPI_Type_create_darray: the part of a gsizes array that process `rank` of a psizes grid (row
// major, whatever the array order) holds; lb 0 and extent the whole array's. dargs[i] may be
// kDefaultDarg. The arguments must be valid (see darray_error).
TypeRef darray(int rank, const std::vector<int64_t>& gsizes,
               const std::vector<Distribution>& distribs, const std::vector<int64_t>& dargs,
               const std::vector<int64_t>& psizes, Order order, const TypeRef& old);
// Why darray arguments are invalid ("dargs[1] is 2: 2 processes of 2 cover only 4 of 10"), or
// empty when they are valid. size: the number of processes; psizes' product must equal it.
std::string darray_error(int size, int rank, const std::vector<int64_t>& gsizes,
                         const std::vector<Distribution>& distribs,
                         const std::vector<int64_t>& dargs, const std::vector<int64_t>& psizes);

}  // namespace torusmpi::dtype

#endif  // TORUSMPI_DTYPE_DTYPE_H_
