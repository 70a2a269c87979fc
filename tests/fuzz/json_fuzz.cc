// Fuzz target: the JSON reader of rule files (src/core/json.cc). Any text either parses or fails
// with a message that says where ("line L, column C: ..."); nothing else may happen.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/json.h"

namespace {

// Walks what was parsed: every value is one of the types, and says where it starts.
void walk(const torusmpi::json::Value& v, int depth) {
  if (v.line < 1 || v.column < 1 || depth > 200) std::abort();
  (void)torusmpi::json::type_name(v.type);
  for (const auto& item : v.items) walk(item, depth + 1);
  for (const auto& member : v.members) {
    if (v.find(member.first) == nullptr) std::abort();
    walk(member.second, depth + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  torusmpi::json::Value v;
  std::string error;
  if (torusmpi::json::parse(text, &v, &error)) {
    walk(v, 0);
  } else if (error.compare(0, 5, "line ") != 0) {
    std::abort();  // an error always says where
  }
  return 0;
}
