// A small JSON reader for torusmpi's own files (collective rule files): objects, arrays, strings
// (with the usual escapes; \u only for ASCII), numbers, true, false, null. Errors say where:
// "line 3, column 14: expected ',' or '}'". Objects keep their keys in file order.
#ifndef TORUSMPI_CORE_JSON_H_
#define TORUSMPI_CORE_JSON_H_

#include <string>
#include <utility>
#include <vector>

namespace torusmpi::json {

struct Value {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;                                    // strings
  std::vector<Value> items;                            // arrays
  std::vector<std::pair<std::string, Value>> members;  // objects, in file order
  int line = 0;                                        // where the value starts, for messages
  int column = 0;

  const Value* find(const std::string& key) const {
    for (const auto& [k, v] : members) {
      if (k == key) return &v;
    }
    return nullptr;
  }
};

const char* type_name(Value::Type t);  // "object", "number", ...

// Parses text; false (and *error set) if it is not one JSON value.
bool parse(const std::string& text, Value* out, std::string* error);

}  // namespace torusmpi::json

#endif  // TORUSMPI_CORE_JSON_H_
