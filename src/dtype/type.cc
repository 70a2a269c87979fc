// Building types: every constructor is "copies of child types at displacements", which the
// Builder turns into bounds (MPI's rules for LB/UB markers and alignment padding), a layout
// program and a signature, merging as it goes so that the description stays as short as the
// type's regularity allows.
#include <algorithm>
#include <cstdio>

#include "dtype/internal.h"

namespace torusmpi::dtype {

namespace {

// A layout program shorter than this is copied into a parent that places it once; a longer one
// is shared through a one-pass loop, so a struct of big indexed types stays small.
constexpr size_t kInlineNodes = 8;

// A block node in canonical form: a single block has stride 0; blocks that touch are one block.
Node block(int64_t count, int64_t len, int64_t stride, int64_t disp) {
  Node n;
  n.kind = Node::kBlock;
  if (count > 1 && stride == len) {
    len *= count;
    count = 1;
  }
  n.count = count;
  n.len = len;
  n.stride = count == 1 ? 0 : stride;
  n.disp = disp;
  return n;
}

Node loop(int64_t count, int64_t stride, int64_t disp, const ProgramRef& sub) {
  Node n;
  n.kind = Node::kLoop;
  n.count = count;
  n.len = sub->bytes;
  n.stride = count == 1 ? 0 : stride;
  n.disp = disp;
  n.sub = sub;
  return n;
}

// Appends b to a when the two are one node: b's block continues a's last block, or b's
// blocks/passes continue a's stride.
bool merge(Node& a, const Node& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == Node::kBlock && a.count == 1 && b.count == 1 && b.disp == a.disp + a.len) {
    a.len += b.len;
    return true;
  }
  if (a.len != b.len || (a.kind == Node::kLoop && a.sub != b.sub)) return false;
  int64_t stride = a.count == 1 ? b.disp - a.disp : a.stride;
  if (b.disp != a.disp + a.count * stride || (b.count > 1 && b.stride != stride)) return false;
  int64_t start = a.start;
  a = a.kind == Node::kBlock ? block(a.count + b.count, a.len, stride, a.disp)
                             : loop(a.count + b.count, stride, a.disp, a.sub);
  a.start = start;
  return true;
}

void append(Program& p, const Node& x) {
  if (x.bytes() == 0) return;
  if (!p.nodes.empty()) {
    Node& last = p.nodes.back();
    if (merge(last, x)) {
      p.bytes = last.start + last.bytes();
      return;
    }
  }
  p.nodes.push_back(x);
  p.nodes.back().start = p.bytes;
  p.bytes += x.bytes();
}

// Places p once, shifted by disp.
void append_program(Program& out, const ProgramRef& p, int64_t disp) {
  if (p->nodes.size() <= kInlineNodes) {
    for (Node x : p->nodes) {
      x.disp += disp;
      append(out, x);
    }
  } else {
    append(out, loop(1, 0, disp, p));
  }
}

void append_sig(Sig& s, SigNode x) {
  if (x.count == 0) return;
  if (!s.nodes.empty()) {
    SigNode& last = s.nodes.back();
    if (last.basic == x.basic && (last.basic != nullptr || last.sub == x.sub)) {
      last.count += x.count;
      s.bytes += x.count * x.unit_bytes;
      s.elements += x.count * x.unit_elements;
      return;
    }
  }
  x.start = s.bytes;
  x.first = s.elements;
  s.bytes += x.count * x.unit_bytes;
  s.elements += x.count * x.unit_elements;
  s.nodes.push_back(std::move(x));
}

// n repetitions of signature s.
void append_sig_repeat(Sig& out, const SigRef& s, int64_t n) {
  if (n == 0 || s->nodes.empty()) return;
  if (s->nodes.size() == 1) {
    SigNode x = s->nodes[0];
    x.count *= n;
    append_sig(out, std::move(x));
  } else if (n == 1 && s->nodes.size() <= kInlineNodes) {
    for (const SigNode& x : s->nodes) append_sig(out, x);
  } else {
    SigNode x;
    x.count = n;
    x.unit_bytes = s->bytes;
    x.unit_elements = s->elements;
    x.sub = s;
    append_sig(out, std::move(x));
  }
}

bool checked_mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
bool checked_add(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }

}  // namespace

Node repeat(const ProgramRef& p, int64_t n, int64_t stride) {
  if (p->nodes.size() == 1) {
    const Node& x = p->nodes[0];
    if (n == 1) return x;
    if (x.kind == Node::kBlock) {
      if (x.count == 1) return block(n, x.len, stride, x.disp);
      if (stride == x.count * x.stride) return block(n * x.count, x.len, x.stride, x.disp);
    } else if (stride == x.count * x.stride) {
      return loop(n * x.count, x.stride, x.disp, x.sub);
    }
  }
  return loop(n, stride, 0, p);
}

Node Type::repeated(int64_t count) const { return repeat(program_, count, extent()); }

// Accumulates copies of child types into a new type.
class Builder {
 public:
  // `blocklen` consecutive copies of t (at its extent) from disp, and that `count` times at
  // `stride` bytes.
  void add(const TypeRef& t, int64_t count, int64_t blocklen, int64_t stride, int64_t disp);
  TypeRef build();

  // The types that are not copies of others.
  static TypeRef basic(const Basic& b);
  static TypeRef marker(bool lb);
  static TypeRef resized(const TypeRef& old, int64_t lb, int64_t extent);
  static TypeRef named(const TypeRef& layout, int32_t id);

 private:
  void add_bounds(const Type& t, int64_t count, int64_t blocklen, int64_t stride, int64_t disp);

  bool ok_ = true;
  int64_t size_ = 0, external_size_ = 0;
  uint32_t align_ = 1;
  enum class Uniform { kNone, kOne, kMixed } uniform_ = Uniform::kNone;
  int32_t uniform_id_ = -1;
  int64_t uniform_count_ = 0;
  bool has_data_ = false, has_bounds_ = false, has_sticky_lb_ = false, has_sticky_ub_ = false;
  int64_t data_min_ = 0, data_max_ = 0, lb_ = 0, ub_ = 0, sticky_lb_ = 0, sticky_ub_ = 0;
  Program program_;
  Sig sig_;
};

// A member contributes its own lb and ub (its alignment padding included, as Open MPI and MPICH
// count it), shifted to each copy; sticky bounds are kept apart, they override the others.
void Builder::add_bounds(const Type& t, int64_t count, int64_t blocklen, int64_t stride,
                         int64_t disp) {
  // The lowest and highest origin of a copy.
  int64_t span_outer, span_inner;
  ok_ = ok_ && checked_mul(count - 1, stride, &span_outer) &&
        checked_mul(blocklen - 1, t.extent(), &span_inner);
  if (!ok_) return;
  int64_t lo = disp + std::min<int64_t>(0, span_outer) + std::min<int64_t>(0, span_inner);
  int64_t hi = disp + std::max<int64_t>(0, span_outer) + std::max<int64_t>(0, span_inner);
  auto widen = [](bool* has, int64_t* min, int64_t* max, int64_t lo_v, int64_t hi_v) {
    *min = *has ? std::min(*min, lo_v) : lo_v;
    *max = *has ? std::max(*max, hi_v) : hi_v;
    *has = true;
  };
  if (t.has_data_) widen(&has_data_, &data_min_, &data_max_, t.true_lb_ + lo, t.true_ub_ + hi);
  if (t.has_bounds_) widen(&has_bounds_, &lb_, &ub_, t.lb_ + lo, t.ub_ + hi);
  if (t.sticky_lb_) {
    sticky_lb_ = has_sticky_lb_ ? std::min(sticky_lb_, t.lb_ + lo) : t.lb_ + lo;
    has_sticky_lb_ = true;
  }
  if (t.sticky_ub_) {
    sticky_ub_ = has_sticky_ub_ ? std::max(sticky_ub_, t.ub_ + hi) : t.ub_ + hi;
    has_sticky_ub_ = true;
  }
  align_ = std::max(align_, t.align_);
}

void Builder::add(const TypeRef& t, int64_t count, int64_t blocklen, int64_t stride, int64_t disp) {
  if (!ok_ || count == 0 || blocklen == 0) return;
  int64_t copies, bytes, ext_bytes;
  ok_ = checked_mul(count, blocklen, &copies) && checked_mul(copies, t->size_, &bytes) &&
        checked_add(size_, bytes, &size_) && checked_mul(copies, t->external_size_, &ext_bytes) &&
        checked_add(external_size_, ext_bytes, &external_size_) &&
        (t->sig_->elements == 0 || copies <= INT64_MAX / t->sig_->elements);
  if (!ok_) return;
  add_bounds(*t, count, blocklen, stride, disp);
  if (!ok_) return;

  if (t->has_data_) {
    if (t->uniform_id_ < 0 || (uniform_ == Uniform::kOne && uniform_id_ != t->uniform_id_)) {
      uniform_ = Uniform::kMixed;
    } else if (uniform_ != Uniform::kMixed) {
      uniform_ = Uniform::kOne;
      uniform_id_ = t->uniform_id_;
      uniform_count_ += copies * t->uniform_count_;
    }
  }

  if (!t->program_->nodes.empty()) {
    // The block of `blocklen` copies, then its `count` repetitions.
    ProgramRef inner = t->program_;
    if (blocklen > 1) {
      auto p = std::make_shared<Program>();
      append(*p, repeat(t->program_, blocklen, t->extent()));
      inner = std::move(p);
    }
    if (count == 1) {
      append_program(program_, inner, disp);
    } else {
      Node x = repeat(inner, count, stride);
      x.disp += disp;
      append(program_, x);
    }
  }
  append_sig_repeat(sig_, t->sig_, copies);
}

TypeRef Builder::build() {
  if (!ok_) return nullptr;
  auto t = std::make_shared<Type>();
  t->size_ = size_;
  t->external_size_ = external_size_;
  t->align_ = align_;
  if (uniform_ == Uniform::kOne) {
    t->uniform_id_ = uniform_id_;
    t->uniform_count_ = uniform_count_;
  }
  t->has_data_ = has_data_;
  t->true_lb_ = has_data_ ? data_min_ : 0;
  t->true_ub_ = has_data_ ? data_max_ : 0;
  t->has_bounds_ = has_bounds_;
  t->sticky_lb_ = has_sticky_lb_;
  t->sticky_ub_ = has_sticky_ub_;
  t->lb_ = has_sticky_lb_ ? sticky_lb_ : lb_;
  if (has_sticky_ub_) {
    t->ub_ = sticky_ub_;
  } else {
    // MPI's epsilon: the extent rounded up to the strictest alignment of the elements. Like Open
    // MPI, measured from the lowest bound, when data lies below a sticky lb.
    t->ub_ = ub_;
    int64_t extent = ub_ - std::min(t->lb_, lb_);
    if (extent > 0 && extent % align_ != 0) t->ub_ += align_ - extent % align_;
  }
  t->program_ = std::make_shared<Program>(std::move(program_));
  t->sig_ = std::make_shared<Sig>(std::move(sig_));
  return t;
}

TypeRef Builder::basic(const Basic& b) {
  auto t = std::make_shared<Type>();
  auto program = std::make_shared<Program>();
  auto sig = std::make_shared<Sig>();
  t->align_ = std::max<uint32_t>(b.align, 1);
  if (b.size > 0) {
    append(*program, block(1, b.size, 0, 0));
    SigNode x;
    x.basic = &b;
    x.count = 1;
    x.unit_bytes = b.size;
    x.unit_elements = 1;
    append_sig(*sig, std::move(x));
    t->size_ = b.size;
    t->external_size_ = b.external_size;
    t->uniform_id_ = b.id;
    t->uniform_count_ = 1;
    t->has_data_ = t->has_bounds_ = true;
    t->true_ub_ = t->ub_ = b.size;
  }
  t->program_ = std::move(program);
  t->sig_ = std::move(sig);
  return t;
}

TypeRef Builder::marker(bool lb) {
  auto t = std::make_shared<Type>();
  (lb ? t->sticky_lb_ : t->sticky_ub_) = true;
  t->has_bounds_ = true;
  t->program_ = std::make_shared<Program>();
  t->sig_ = std::make_shared<Sig>();
  return t;
}

TypeRef Builder::resized(const TypeRef& old, int64_t lb, int64_t extent) {
  int64_t ub;
  if (!checked_add(lb, extent, &ub)) return nullptr;
  auto t = std::make_shared<Type>(*old);
  t->has_bounds_ = t->sticky_lb_ = t->sticky_ub_ = true;
  t->lb_ = lb;
  t->ub_ = ub;
  return t;
}

TypeRef Builder::named(const TypeRef& layout, int32_t id) {
  auto t = std::make_shared<Type>(*layout);
  t->uniform_id_ = id;
  t->uniform_count_ = 1;
  return t;
}

TypeRef basic(const Basic& b) { return Builder::basic(b); }
TypeRef lb_marker() { return Builder::marker(true); }
TypeRef ub_marker() { return Builder::marker(false); }

TypeRef contiguous(int64_t count, const TypeRef& old) {
  Builder b;
  b.add(old, 1, count, 0, 0);
  return b.build();
}

TypeRef hvector(int64_t count, int64_t blocklen, int64_t stride, const TypeRef& old) {
  Builder b;
  b.add(old, count, blocklen, stride, 0);
  return b.build();
}

TypeRef hindexed(const std::vector<int64_t>& blocklens, const std::vector<int64_t>& displs,
                 const TypeRef& old) {
  Builder b;
  for (size_t i = 0; i < blocklens.size(); ++i) b.add(old, 1, blocklens[i], 0, displs[i]);
  return b.build();
}

TypeRef hindexed_block(int64_t blocklen, const std::vector<int64_t>& displs, const TypeRef& old) {
  Builder b;
  for (int64_t d : displs) b.add(old, 1, blocklen, 0, d);
  return b.build();
}

TypeRef structure(const std::vector<int64_t>& blocklens, const std::vector<int64_t>& displs,
                  const std::vector<TypeRef>& types) {
  Builder b;
  for (size_t i = 0; i < blocklens.size(); ++i) b.add(types[i], 1, blocklens[i], 0, displs[i]);
  return b.build();
}

TypeRef resized(const TypeRef& old, int64_t lb, int64_t extent) {
  return Builder::resized(old, lb, extent);
}

TypeRef named(const TypeRef& layout, int32_t id) { return Builder::named(layout, id); }

TypeRef build_copies(const std::vector<Copies>& copies) {
  Builder b;
  for (const Copies& c : copies) b.add(c.type, c.count, c.blocklen, c.stride, c.disp);
  return b.build();
}

bool Type::contiguous(int64_t count, int64_t* offset) const {
  *offset = 0;
  if (count == 0 || program_->nodes.empty()) return true;
  Node top = repeated(count);
  if (top.kind != Node::kBlock || top.count != 1) return false;
  *offset = top.disp;
  return true;
}

namespace {

void describe_program(const Program& p, std::string* out) {
  char buf[128];
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& x = p.nodes[i];
    if (i > 0) *out += ' ';
    if (x.kind == Node::kBlock) {
      if (x.count == 1) {
        std::snprintf(buf, sizeof buf, "%lld@%lld", static_cast<long long>(x.len),
                      static_cast<long long>(x.disp));
      } else {
        std::snprintf(buf, sizeof buf, "%lldx%lld/%lld@%lld", static_cast<long long>(x.count),
                      static_cast<long long>(x.len), static_cast<long long>(x.stride),
                      static_cast<long long>(x.disp));
      }
      *out += buf;
    } else {
      std::snprintf(buf, sizeof buf, "%lldx(", static_cast<long long>(x.count));
      *out += buf;
      describe_program(*x.sub, out);
      std::snprintf(buf, sizeof buf, ")/%lld@%lld", static_cast<long long>(x.stride),
                    static_cast<long long>(x.disp));
      *out += buf;
    }
  }
}

void describe_sig(const Sig& s, std::string* out) {
  char buf[64];
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const SigNode& x = s.nodes[i];
    if (i > 0) *out += ' ';
    if (x.basic != nullptr) {
      std::snprintf(buf, sizeof buf, "%lldx#%d", static_cast<long long>(x.count), x.basic->id);
      *out += buf;
    } else {
      std::snprintf(buf, sizeof buf, "%lldx(", static_cast<long long>(x.count));
      *out += buf;
      describe_sig(*x.sub, out);
      *out += ')';
    }
  }
}

}  // namespace

std::string Type::describe() const {
  std::string out;
  describe_program(*program_, &out);
  return out;
}

std::string Type::describe_signature() const {
  std::string out;
  describe_sig(*sig_, &out);
  return out;
}

}  // namespace torusmpi::dtype
