// Run-time parameters, declared once in params.def. Values come from TORUSMPI_<NAME> environment
// variables, are parsed and validated by params::load(), and read through typed accessors.
#ifndef TORUSMPI_CORE_PARAMS_H_
#define TORUSMPI_CORE_PARAMS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace torusmpi::params {

enum class Type { Bool, Int, Size, String };
// When a parameter is read: once at MPI_Init, or at each use (then MPI_T may change it).
enum class When { Init, Call };

struct Info {
  const char* id;   // accessor name, e.g. "spin_count"
  const char* env;  // full variable name, e.g. "TORUSMPI_SPIN_COUNT"
  Type type;
  const char* default_text;
  When when;
  const char* doc;
};

// Every parameter, in table order.
const std::vector<Info>& all();
const char* type_name(Type t);

// Reads the environment. Fills `errors` with one line per bad value (the default is kept for it)
// and `warnings` with one line per TORUSMPI_* variable that names no parameter. Loading again
// re-reads the environment (tests use this).
Status load(std::vector<std::string>* errors, std::vector<std::string>* warnings);

// Sets row `index` of all() from text, as if its variable had held it (MPI_T writes). Fails, with
// *error saying why and the value unchanged, when the text is not a value of its type.
Status set(size_t index, const std::string& text, std::string* error);

// Goes up by one at every load() and set(): whoever caches what a parameter decided (collective
// selection) compares it with the generation it decided at.
uint64_t generation();

// Parses `text` as a value of `type`. Returns false (and leaves *out alone) when it is not one.
bool parse_bool(const std::string& text, bool* out);
bool parse_int(const std::string& text, int64_t* out);
bool parse_size(const std::string& text, int64_t* out);

// The current value of row `index` of all(): numbers (bool as 0/1) in `number`, strings in `text`.
struct Value {
  int64_t number = 0;
  std::string text;
};
Value value(size_t index);

// Typed accessors, one per row of params.def; before load() they return the defaults.
#define TORUSMPI_PARAM_Bool bool
#define TORUSMPI_PARAM_Int int64_t
#define TORUSMPI_PARAM_Size int64_t
#define TORUSMPI_PARAM_String const std::string&
#define TORUSMPI_PARAM(id, name, type, def, when, doc) TORUSMPI_PARAM_##type id();
#include "core/params.def"
#undef TORUSMPI_PARAM

}  // namespace torusmpi::params

#endif  // TORUSMPI_CORE_PARAMS_H_
