#include "core/params.h"

#include <strings.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace torusmpi::params {
namespace {

constexpr char kPrefix[] = "TORUSMPI_";
uint64_t g_generation = 0;

// Storage of every parameter's current value, by table row.
#define TORUSMPI_PARAM_STORE_Bool bool
#define TORUSMPI_PARAM_STORE_Int int64_t
#define TORUSMPI_PARAM_STORE_Size int64_t
#define TORUSMPI_PARAM_STORE_String std::string
struct Values {
#define TORUSMPI_PARAM(id, name, type, def, when, doc) TORUSMPI_PARAM_STORE_##type id;
#include "core/params.def"
#undef TORUSMPI_PARAM
};

// One overload per storage type; a type without parameters yet would otherwise warn.
[[maybe_unused]] bool parse_value_of(Type, const std::string& text, bool* out) {
  return parse_bool(text, out);
}
// Every integer parameter counts something, so none may be negative.
[[maybe_unused]] bool parse_value_of(Type t, const std::string& text, int64_t* out) {
  int64_t v = 0;
  if (!(t == Type::Size ? parse_size(text, &v) : parse_int(text, &v)) || v < 0) return false;
  *out = v;
  return true;
}
[[maybe_unused]] bool parse_value_of(Type, const std::string& text, std::string* out) {
  *out = text;
  return true;
}

Values defaults() {
  Values v;
#define TORUSMPI_PARAM(id, name, type, def, when, doc) parse_value_of(Type::type, def, &v.id);
#include "core/params.def"
#undef TORUSMPI_PARAM
  return v;
}

Values& current() {
  static Values values = defaults();
  return values;
}

[[maybe_unused]] void store(Value* v, bool b) { v->number = b ? 1 : 0; }
[[maybe_unused]] void store(Value* v, int64_t n) { v->number = n; }
[[maybe_unused]] void store(Value* v, const std::string& t) { v->text = t; }

}  // namespace

Value value(size_t index) {
  Value v;
  size_t row = 0;
#define TORUSMPI_PARAM(id, name, type, def, when, doc) \
  if (row++ == index) store(&v, current().id);
#include "core/params.def"
#undef TORUSMPI_PARAM
  return v;
}

const std::vector<Info>& all() {
  static const std::vector<Info> table = {
#define TORUSMPI_PARAM(id, name, type, def, when, doc) \
  {#id, "TORUSMPI_" name, Type::type, def, When::when, doc},
#include "core/params.def"
#undef TORUSMPI_PARAM
  };
  return table;
}

const char* type_name(Type t) {
  switch (t) {
    case Type::Bool:
      return "bool";
    case Type::Int:
      return "int";
    case Type::Size:
      return "size";
    case Type::String:
      return "string";
  }
  return "?";
}

bool parse_bool(const std::string& text, bool* out) {
  static const char* const kTrue[] = {"1", "yes", "true", "on"};
  static const char* const kFalse[] = {"0", "no", "false", "off"};
  for (const char* t : kTrue) {
    if (strcasecmp(text.c_str(), t) == 0) return *out = true, true;
  }
  for (const char* f : kFalse) {
    if (strcasecmp(text.c_str(), f) == 0) return *out = false, true;
  }
  return false;
}

bool parse_int(const std::string& text, int64_t* out) {
  // strtoll would skip leading blanks; a value is the number alone.
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

bool parse_size(const std::string& text, int64_t* out) {
  if (text.empty() || text[0] == '-') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str()) return false;
  int shift = 0;
  if (*end != '\0') {
    switch (*end) {
      case 'k':
      case 'K':
        shift = 10;
        break;
      case 'm':
      case 'M':
        shift = 20;
        break;
      case 'g':
      case 'G':
        shift = 30;
        break;
      default:
        return false;
    }
    ++end;
    if (*end == 'i' || *end == 'I') ++end;  // KiB spelled out
    if (*end == 'b' || *end == 'B') ++end;
    if (*end != '\0') return false;
  }
  if (v > (static_cast<unsigned long long>(INT64_MAX) >> shift)) return false;
  *out = static_cast<int64_t>(v << shift);
  return true;
}

Status load(std::vector<std::string>* errors, std::vector<std::string>* warnings) {
  Values v = defaults();
#define TORUSMPI_PARAM(id, name, type, def, when, doc)                                    \
  if (const char* text = std::getenv("TORUSMPI_" name)) {                                 \
    if (!parse_value_of(Type::type, text, &v.id)) {                                       \
      errors->push_back(std::string("TORUSMPI_" name "=") + text + ": not a valid " +     \
                        type_name(Type::type) + " (default " + (def[0] ? def : "empty") + \
                        " kept)");                                                        \
    }                                                                                     \
  }
#include "core/params.def"
#undef TORUSMPI_PARAM
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, kPrefix, sizeof(kPrefix) - 1) != 0) continue;
    std::string name(*e, std::strcspn(*e, "="));
    bool known = false;
    for (const Info& info : all()) known = known || name == info.env;
    if (!known) warnings->push_back(name + " is set but names no torusmpi parameter");
  }
  current() = v;
  ++g_generation;
  return errors->empty() ? Status::kOk : Status::kErrArg;
}

Status set(size_t index, const std::string& text, std::string* error) {
  size_t row = 0;
  bool ok = true;
#define TORUSMPI_PARAM(id, name, type, def, when, doc) \
  if (row++ == index) ok = parse_value_of(Type::type, text, &current().id);
#include "core/params.def"
#undef TORUSMPI_PARAM
  if (index >= row) {
    *error = "no parameter " + std::to_string(index);
    return Status::kErrArg;
  }
  if (!ok) {
    *error = std::string(all()[index].env) + "=" + text + ": not a valid " +
             type_name(all()[index].type);
    return Status::kErrArg;
  }
  ++g_generation;
  return Status::kOk;
}

uint64_t generation() { return g_generation; }

#define TORUSMPI_PARAM(id, name, type, def, when, doc) \
  TORUSMPI_PARAM_##type id() { return current().id; }
#include "core/params.def"
#undef TORUSMPI_PARAM

}  // namespace torusmpi::params
