#include "coll/select/select.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "core/json.h"
#include "core/params.h"

namespace torusmpi::coll {
namespace {

constexpr size_t kNoLimit = std::numeric_limits<size_t>::max();

struct Rule {
  Coll coll = Coll::kAllreduce;
  const Algorithm* alg = nullptr;
  int comm_size_min = 0;
  int comm_size_max = std::numeric_limits<int>::max();
  size_t msg_size_min = 0;
  size_t msg_size_max = kNoLimit;
  int commutative = -1;  // -1: any op
  int index = 0;         // in the file, for "why"
};

std::vector<Rule>& rules() {
  static std::vector<Rule> r;
  return r;
}
std::string& rules_file() {
  static std::string f;
  return f;
}

std::string upper(const char* s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

std::string tokens_of(Coll c) {
  std::string list;
  for (const Algorithm& a : algorithms()) {
    if (a.coll == c) list += (list.empty() ? "" : ", ") + std::string(a.token);
  }
  return list;
}

// The current value of TORUSMPI_<COLL><suffix>.
std::string param_text(Coll c, const char* suffix) {
  std::string env = "TORUSMPI_" + upper(coll_name(c)) + suffix;
  const std::vector<params::Info>& all = params::all();
  for (size_t i = 0; i < all.size(); ++i) {
    if (env == all[i].env) return params::value(i).text;
  }
  return "";
}

const Algorithm* token(Coll c, const std::string& t, const std::string& where, std::string* error) {
  const Algorithm* a = find_algorithm(c, t);
  if (a == nullptr) {
    *error = where + ": " + coll_name(c) + " has no algorithm '" + t +
             "' (it has: " + tokens_of(c) + ")";
  }
  return a;
}

struct Range {
  const Algorithm* alg;
  size_t lo, hi;
};

// "tok:lo-hi;tok:lo-max": false with *error when malformed.
bool parse_ranges(Coll c, const std::string& text, std::vector<Range>* out, std::string* error) {
  std::string where = "TORUSMPI_" + upper(coll_name(c)) + "=" + text;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ';')) {
    if (item.empty()) continue;
    size_t colon = item.find(':'), dash = item.find('-', colon);
    if (colon == std::string::npos || dash == std::string::npos) {
      *error = where + ": '" + item + "' is not token:min-max";
      return false;
    }
    Range r{token(c, item.substr(0, colon), where, error), 0, 0};
    if (r.alg == nullptr) return false;
    std::string lo = item.substr(colon + 1, dash - colon - 1), hi = item.substr(dash + 1);
    int64_t v = 0;
    if (!params::parse_size(lo, &v)) {
      *error = where + ": '" + lo + "' is not a size";
      return false;
    }
    r.lo = static_cast<size_t>(v);
    if (hi == "max") {
      r.hi = kNoLimit;
    } else if (params::parse_size(hi, &v)) {
      r.hi = static_cast<size_t>(v);
    } else {
      *error = where + ": '" + hi + "' is not a size or max";
      return false;
    }
    if (r.lo > r.hi) {
      *error = where + ": range " + lo + "-" + hi + " is empty";
      return false;
    }
    out->push_back(r);
  }
  return true;
}

// A size in a rule: a number, or "max"/"inf".
bool rule_size(const json::Value& v, size_t* out) {
  if (v.type == json::Value::Type::kString && (v.text == "max" || v.text == "inf")) {
    *out = kNoLimit;
    return true;
  }
  // Below 2^64 before the cast: converting NaN or a larger number is undefined.
  if (v.type != json::Value::Type::kNumber || !(v.number >= 0 && v.number < 0x1p64) ||
      v.number != static_cast<double>(static_cast<uint64_t>(v.number)))
    return false;
  *out = static_cast<size_t>(v.number);
  return true;
}

bool load_rules(const std::string& file, std::string* error) {
  rules().clear();
  rules_file() = file;
  if (file.empty()) return true;
  std::ifstream in(file);
  if (!in) {
    *error = "TORUSMPI_COLL_RULES=" + file + ": cannot be read";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  json::Value doc;
  std::string why;
  if (!json::parse(text.str(), &doc, &why)) {
    *error = file + ": " + why;
    return false;
  }
  const json::Value* list = doc.type == json::Value::Type::kObject ? doc.find("rules") : nullptr;
  if (list == nullptr || list->type != json::Value::Type::kArray) {
    *error = file + ": expected an object with a \"rules\" array";
    return false;
  }
  for (size_t i = 0; i < list->items.size(); ++i) {
    const json::Value& item = list->items[i];
    std::string where =
        file + ": rule " + std::to_string(i) + " (line " + std::to_string(item.line) + ")";
    if (item.type != json::Value::Type::kObject) {
      *error = where + ": a rule is an object, not a " + json::type_name(item.type);
      return false;
    }
    Rule r;
    r.index = static_cast<int>(i);
    const json::Value* coll = item.find("collective");
    const json::Value* alg = item.find("algorithm");
    if (coll == nullptr || coll->type != json::Value::Type::kString ||
        !coll_from_name(coll->text.c_str(), &r.coll)) {
      *error = where + ": \"collective\" must name a collective (allreduce, bcast, ...)";
      return false;
    }
    if (alg == nullptr || alg->type != json::Value::Type::kString) {
      *error = where + ": \"algorithm\" must be a token (" + tokens_of(r.coll) + ")";
      return false;
    }
    if ((r.alg = token(r.coll, alg->text, where, error)) == nullptr) return false;
    for (const auto& [key, v] : item.members) {
      size_t size = 0;
      bool ok = true;
      if (key == "collective" || key == "algorithm") {
        continue;
      } else if (key == "comm_size_min" || key == "comm_size_max") {
        ok = rule_size(v, &size) &&
             (size == kNoLimit || size <= static_cast<size_t>(std::numeric_limits<int>::max()));
        int n = size == kNoLimit ? std::numeric_limits<int>::max() : static_cast<int>(size);
        (key == "comm_size_min" ? r.comm_size_min : r.comm_size_max) = n;
      } else if (key == "msg_size_min" || key == "msg_size_max") {
        ok = rule_size(v, &size);
        (key == "msg_size_min" ? r.msg_size_min : r.msg_size_max) = size;
      } else if (key == "commutative") {
        ok = v.type == json::Value::Type::kBool;
        r.commutative = v.boolean;
      } else {
        *error = where + ": unknown key \"" + key +
                 "\" (known: collective, algorithm, comm_size_min, comm_size_max, msg_size_min, "
                 "msg_size_max, commutative)";
        return false;
      }
      if (!ok) {
        *error = where + ": \"" + key + "\" must be " +
                 (key == "commutative" ? "true or false" : "a whole number >= 0, or \"max\"");
        return false;
      }
    }
    if (r.comm_size_min > r.comm_size_max || r.msg_size_min > r.msg_size_max) {
      *error = where + ": its min is above its max, so it never matches";
      return false;
    }
    rules().push_back(r);
  }
  return true;
}

std::string us(double seconds) {
  char t[32];
  std::snprintf(t, sizeof t, "%.3g us", seconds * 1e6);
  return t;
}

}  // namespace

Status selection_check(std::string* error) {
  for (int i = 0; i < kCollCount; ++i) {
    Coll c = static_cast<Coll>(i);
    std::string forced = param_text(c, "_ALGORITHM");
    if (!forced.empty() &&
        token(c, forced, "TORUSMPI_" + upper(coll_name(c)) + "_ALGORITHM", error) == nullptr)
      return Status::kErrArg;
    std::vector<Range> ranges;
    if (!parse_ranges(c, param_text(c, ""), &ranges, error)) return Status::kErrArg;
  }
  const std::string& f = params::coll_fallback();
  if (f != "error" && f != "warn" && f != "silent") {
    *error = "TORUSMPI_COLL_FALLBACK=" + f + ": expected error, warn or silent";
    return Status::kErrArg;
  }
  return Status::kOk;
}

Status selection_load(std::string* error) {
  if (!load_rules(params::coll_rules(), error)) return Status::kErrArg;
  return selection_check(error);
}

Choice select_algorithm(const Args& a, const Model& m) {
  Choice c;
  const size_t bytes = selection_bytes(a);
  std::string why;
  // 1. Forced.
  std::string name = "TORUSMPI_" + upper(coll_name(a.coll));
  const Algorithm* forced = nullptr;
  std::string forced_by;
  std::string token_text = param_text(a.coll, "_ALGORITHM");
  if (!token_text.empty()) {
    forced = find_algorithm(a.coll, token_text);
    forced_by = name + "_ALGORITHM=" + token_text;
    if (forced == nullptr) why = forced_by + " names no algorithm";
  } else {
    std::vector<Range> ranges;
    std::string error;
    if (parse_ranges(a.coll, param_text(a.coll, ""), &ranges, &error)) {
      for (const Range& r : ranges) {
        if (bytes >= r.lo && bytes <= r.hi) {
          forced = r.alg;
          forced_by = name + " range " + std::to_string(r.lo) + "-" +
                      (r.hi == kNoLimit ? std::string("max") : std::to_string(r.hi));
          break;
        }
      }
    } else {
      why = error;
    }
  }
  if (forced != nullptr && !runs_forced(*forced, a, &why)) {
    why = forced_by + ": " + forced->token + " " + why;
    forced = nullptr;
  }
  if (forced != nullptr) {
    c.alg = forced;
    c.why = "forced by " + forced_by;
    return c;
  }
  c.passed_over = !why.empty();
  if (c.passed_over && params::coll_fallback() == "error") {
    c.why = why + " (TORUSMPI_COLL_FALLBACK=error)";
    return c;
  }
  std::string note = why.empty() ? "" : why + "; instead, ";

  // 2. Rules.
  for (const Rule& r : rules()) {
    if (r.coll != a.coll || a.size < r.comm_size_min || a.size > r.comm_size_max ||
        bytes < r.msg_size_min || bytes > r.msg_size_max ||
        (r.commutative >= 0 && r.commutative != static_cast<int>(a.commutative)))
      continue;
    std::string no;
    if (!supports(*r.alg, a, &no)) continue;
    c.alg = r.alg;
    c.why = note + "rule " + std::to_string(r.index) + " of " + rules_file();
    return c;
  }

  // 3. Cost model.
  double best = 0;
  std::string costs;
  for (const Algorithm& alg : algorithms()) {
    std::string no;
    if (alg.coll != a.coll || !supports(alg, a, &no)) continue;
    double t = m.call + alg.cost(m, a.size, static_cast<double>(bytes));
    costs += (costs.empty() ? "" : ", ") + std::string(alg.token) + " " + us(t);
    if (c.alg == nullptr || t < best) {
      c.alg = &alg;
      best = t;
    }
  }
  if (c.alg != nullptr) {
    c.why = note + "cost model (" + costs + ")";
    return c;
  }
  // 4. Nothing else can: the fallback runs every call.
  c.alg = &fallback(a.coll);
  c.why = note + "fallback";
  return c;
}

}  // namespace torusmpi::coll
