#include "core/json.h"

#include <cstdlib>

namespace torusmpi::json {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  bool document(Value* out, std::string* error) {
    error_ = error;
    if (!value(out, 0)) return false;
    skip_space();
    if (pos_ != s_.size()) return fail("text after the JSON value");
    return true;
  }

 private:
  // Deeper nesting than any rule file needs is refused rather than risking the stack.
  static constexpr int kMaxDepth = 64;

  bool fail(const std::string& what) {
    *error_ = "line " + std::to_string(line_) + ", column " +
              std::to_string(pos_ - line_start_ + 1) + ": " + what;
    return false;
  }

  void skip_space() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '\n') {
        ++line_;
        line_start_ = pos_ + 1;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        return;
      }
      ++pos_;
    }
  }

  bool literal(const char* word) {
    size_t n = std::char_traits<char>::length(word);
    if (s_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }

  bool value(Value* out, int depth) {
    skip_space();
    out->line = line_;
    out->column = static_cast<int>(pos_ - line_start_ + 1);
    if (depth > kMaxDepth) return fail("nested too deeply");
    if (pos_ >= s_.size()) return fail("unexpected end of the text");
    char c = s_[pos_];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') {
      out->type = Value::Type::kString;
      return string(&out->text);
    }
    if (literal("true") || literal("false")) {
      out->type = Value::Type::kBool;
      out->boolean = c == 't';
      return true;
    }
    if (literal("null")) return true;
    if (c == '-' || (c >= '0' && c <= '9')) return number(out);
    return fail(std::string("unexpected '") + c + "'");
  }

  bool number(Value* out) {
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    out->number = std::strtod(begin, &end);
    if (end == begin) return fail("bad number");
    pos_ += static_cast<size_t>(end - begin);
    out->type = Value::Type::kNumber;
    return true;
  }

  bool string(std::string* out) {
    ++pos_;  // the opening quote
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return true;
      if (c == '\n') return fail("line break inside a string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) break;
      char e = s_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          if (pos_ + 4 > s_.size()) return fail("short \\u escape");
          unsigned long code = std::strtoul(s_.substr(pos_, 4).c_str(), nullptr, 16);
          if (code == 0 || code > 0x7f) return fail("only ASCII \\u escapes are understood");
          out->push_back(static_cast<char>(code));
          pos_ += 4;
          break;
        }
        default:
          return fail(std::string("unknown escape \\") + e);
      }
    }
    return fail("string not closed");
  }

  bool array(Value* out, int depth) {
    out->type = Value::Type::kArray;
    ++pos_;
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    for (;;) {
      out->items.emplace_back();
      if (!value(&out->items.back(), depth + 1)) return false;
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool object(Value* out, int depth) {
    out->type = Value::Type::kObject;
    ++pos_;
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    for (;;) {
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '"') return fail("expected a key in quotes");
      std::string key;
      if (!string(&key)) return false;
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != ':') return fail("expected ':' after \"" + key + "\"");
      ++pos_;
      out->members.emplace_back(key, Value{});
      if (!value(&out->members.back().second, depth + 1)) return false;
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
  std::string* error_ = nullptr;
};

}  // namespace

const char* type_name(Value::Type t) {
  switch (t) {
    case Value::Type::kNull:
      return "null";
    case Value::Type::kBool:
      return "boolean";
    case Value::Type::kNumber:
      return "number";
    case Value::Type::kString:
      return "string";
    case Value::Type::kArray:
      return "array";
    case Value::Type::kObject:
      return "object";
  }
  return "?";
}

bool parse(const std::string& text, Value* out, std::string* error) {
  *out = Value{};
  return Parser(text).document(out, error);
}

}  // namespace torusmpi::json
