// The parameter table: value parsers, load() from the environment, accessors.
#include "core/params.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/test_env.h"

namespace torusmpi::params {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Row of all() whose variable is `env`; fails the test when there is none.
size_t index_of(const std::string& env) {
  for (size_t i = 0; i < all().size(); ++i) {
    if (env == all()[i].env) return i;
  }
  ADD_FAILURE() << env << " is not in the parameter table";
  return 0;
}

// Every test starts and ends with no TORUSMPI_* variable and every parameter at its default, so
// neither the environment that runs the tests nor another test can change what a test sees.
class ParamsTest : public ::testing::Test {
 protected:
  void SetUp() override { reset(); }
  void TearDown() override { reset(); }

  static void reset() {
    test::unset_with_prefix({"TORUSMPI_"});
    std::vector<std::string> errors, warnings;
    ASSERT_EQ(load(&errors, &warnings), Status::kOk);
  }

  std::vector<std::string> errors_;
  std::vector<std::string> warnings_;
};

TEST(ParseBool, AcceptsEverySpellingOfTrueAndFalseInAnyCase) {
  for (const char* text : {"1", "yes", "true", "on", "YES", "True", "oN"}) {
    bool out = false;
    EXPECT_TRUE(parse_bool(text, &out)) << text;
    EXPECT_TRUE(out) << text;
  }
  for (const char* text : {"0", "no", "false", "off", "NO", "False", "OFF"}) {
    bool out = true;
    EXPECT_TRUE(parse_bool(text, &out)) << text;
    EXPECT_FALSE(out) << text;
  }
}

TEST(ParseBool, RejectsOtherTextAndLeavesTheOutputAlone) {
  for (const char* text : {"", "2", "-1", "y", "n", "tru", "yes ", " on", "enabled"}) {
    bool out = true;
    EXPECT_FALSE(parse_bool(text, &out)) << '"' << text << '"';
    EXPECT_TRUE(out) << text;
  }
}

TEST(ParseInt, AcceptsDecimalIntegersOfEitherSign) {
  int64_t out = 0;
  EXPECT_TRUE(parse_int("0", &out));
  EXPECT_EQ(out, 0);
  EXPECT_TRUE(parse_int("42", &out));
  EXPECT_EQ(out, 42);
  EXPECT_TRUE(parse_int("-42", &out));
  EXPECT_EQ(out, -42);
  EXPECT_TRUE(parse_int("+7", &out));
  EXPECT_EQ(out, 7);
  EXPECT_TRUE(parse_int("007", &out));  // decimal, not octal
  EXPECT_EQ(out, 7);
}

TEST(ParseInt, AcceptsTheInt64LimitsAndRejectsOneBeyond) {
  int64_t out = 0;
  EXPECT_TRUE(parse_int("9223372036854775807", &out));
  EXPECT_EQ(out, INT64_MAX);
  EXPECT_TRUE(parse_int("-9223372036854775808", &out));
  EXPECT_EQ(out, INT64_MIN);
  out = 5;
  EXPECT_FALSE(parse_int("9223372036854775808", &out));
  EXPECT_FALSE(parse_int("-9223372036854775809", &out));
  EXPECT_FALSE(parse_int("99999999999999999999999", &out));
  EXPECT_EQ(out, 5);
}

TEST(ParseInt, RejectsNonDecimalTextAndLeavesTheOutputAlone) {
  for (const char* text :
       {"", "-", "abc", "12abc", "1.5", "0x10", "1K", "5 ", " 5", "1e3", "--1"}) {
    int64_t out = 5;
    EXPECT_FALSE(parse_int(text, &out)) << '"' << text << '"';
    EXPECT_EQ(out, 5) << text;
  }
}

TEST(ParseSize, AcceptsPlainByteCounts) {
  int64_t out = -1;
  EXPECT_TRUE(parse_size("0", &out));
  EXPECT_EQ(out, 0);
  EXPECT_TRUE(parse_size("4096", &out));
  EXPECT_EQ(out, 4096);
  EXPECT_TRUE(parse_size("9223372036854775807", &out));
  EXPECT_EQ(out, INT64_MAX);
}

TEST(ParseSize, SuffixesArePowersOf1024InEverySpelling) {
  struct Case {
    const char* text;
    int64_t bytes;
  };
  const Case cases[] = {
      {"1K", 1024},
      {"1k", 1024},
      {"1KB", 1024},
      {"1KiB", 1024},
      {"1kib", 1024},
      {"1kb", 1024},
      {"64K", 64 << 10},
      {"2M", 2 << 20},
      {"2MB", 2 << 20},
      {"2MiB", 2 << 20},
      {"3G", int64_t{3} << 30},
      {"3GiB", int64_t{3} << 30},
      {"0K", 0},
  };
  for (const Case& c : cases) {
    int64_t out = -1;
    EXPECT_TRUE(parse_size(c.text, &out)) << c.text;
    EXPECT_EQ(out, c.bytes) << c.text;
  }
}

TEST(ParseSize, RejectsNegativesUnknownSuffixesAndJunk) {
  for (const char* text : {"", "-1", "-0", "-1K", "K", "KiB", "1T", "1P", "1KK", "1KiBx", "1iB",
                           "1 K", "1.5K", "abc", "0x10"}) {
    int64_t out = 5;
    EXPECT_FALSE(parse_size(text, &out)) << '"' << text << '"';
    EXPECT_EQ(out, 5) << text;
  }
}

TEST(ParseSize, RejectsValuesThatOverflowInt64AfterTheSuffix) {
  int64_t out = 5;
  // INT64_MAX >> 30 = 8589934591: the largest count of GiB that fits.
  EXPECT_TRUE(parse_size("8589934591G", &out));
  EXPECT_EQ(out, int64_t{8589934591} << 30);
  out = 5;
  EXPECT_FALSE(parse_size("8589934592G", &out));
  EXPECT_TRUE(parse_size("8796093022207M", &out));
  EXPECT_EQ(out, int64_t{8796093022207} << 20);
  out = 5;
  EXPECT_FALSE(parse_size("8796093022208M", &out));
  EXPECT_FALSE(parse_size("9007199254740992K", &out));
  EXPECT_FALSE(parse_size("9223372036854775808", &out));   // fits uint64, not int64
  EXPECT_FALSE(parse_size("18446744073709551616", &out));  // fits neither
  EXPECT_EQ(out, 5);
}

TEST(Table, EveryRowIsWellFormedAndItsDefaultParses) {
  ASSERT_FALSE(all().empty());
  std::set<std::string> envs, ids;
  for (const Info& p : all()) {
    SCOPED_TRACE(p.env);
    EXPECT_EQ(std::string(p.env).rfind("TORUSMPI_", 0), 0u);
    EXPECT_GT(std::string(p.env).size(), sizeof("TORUSMPI_") - 1);
    EXPECT_TRUE(envs.insert(p.env).second) << "duplicate variable";
    EXPECT_TRUE(ids.insert(p.id).second) << "duplicate accessor";
    EXPECT_STRNE(p.doc, "");
    EXPECT_STRNE(type_name(p.type), "?");
    bool b = false;
    int64_t n = 0;
    switch (p.type) {
      case Type::Bool:
        EXPECT_TRUE(parse_bool(p.default_text, &b));
        break;
      case Type::Int:
        EXPECT_TRUE(parse_int(p.default_text, &n));
        break;
      case Type::Size:
        EXPECT_TRUE(parse_size(p.default_text, &n));
        break;
      case Type::String:
        break;
    }
  }
}

TEST(Table, TypeNames) {
  EXPECT_STREQ(type_name(Type::Bool), "bool");
  EXPECT_STREQ(type_name(Type::Int), "int");
  EXPECT_STREQ(type_name(Type::Size), "size");
  EXPECT_STREQ(type_name(Type::String), "string");
}

TEST_F(ParamsTest, WithNothingSetEveryValueIsItsDefault) {
  EXPECT_EQ(load(&errors_, &warnings_), Status::kOk);
  EXPECT_TRUE(errors_.empty());
  EXPECT_TRUE(warnings_.empty());
  EXPECT_EQ(debug(), "");
  EXPECT_EQ(spin_count(), 1000);
  EXPECT_EQ(yield_count(), 200);
  EXPECT_EQ(sleep_max_us(), 1000);
  EXPECT_EQ(boot_timeout_s(), 300);
  for (size_t i = 0; i < all().size(); ++i) {
    const Info& p = all()[i];
    SCOPED_TRACE(p.env);
    Value v = value(i);
    bool b = false;
    int64_t n = 0;
    switch (p.type) {
      case Type::Bool:
        ASSERT_TRUE(parse_bool(p.default_text, &b));
        EXPECT_EQ(v.number, b ? 1 : 0);
        break;
      case Type::Int:
        ASSERT_TRUE(parse_int(p.default_text, &n));
        EXPECT_EQ(v.number, n);
        break;
      case Type::Size:
        ASSERT_TRUE(parse_size(p.default_text, &n));
        EXPECT_EQ(v.number, n);
        break;
      case Type::String:
        EXPECT_EQ(v.text, p.default_text);
        break;
    }
  }
}

TEST_F(ParamsTest, GoodValuesReachTheAccessorsAndValue) {
  setenv("TORUSMPI_SPIN_COUNT", "5", 1);
  setenv("TORUSMPI_BOOT_TIMEOUT", "0", 1);
  setenv("TORUSMPI_DEBUG", "boot,mpi", 1);
  EXPECT_EQ(load(&errors_, &warnings_), Status::kOk);
  EXPECT_TRUE(errors_.empty());
  EXPECT_TRUE(warnings_.empty());
  EXPECT_EQ(spin_count(), 5);
  EXPECT_EQ(boot_timeout_s(), 0);
  EXPECT_EQ(debug(), "boot,mpi");
  EXPECT_EQ(yield_count(), 200);  // not set: its default
  EXPECT_EQ(value(index_of("TORUSMPI_SPIN_COUNT")).number, 5);
  EXPECT_EQ(value(index_of("TORUSMPI_DEBUG")).text, "boot,mpi");
}

TEST_F(ParamsTest, ABadValueIsReportedWithItsVariableAndTheDefaultIsKept) {
  setenv("TORUSMPI_YIELD_COUNT", "lots", 1);
  setenv("TORUSMPI_SPIN_COUNT", "7", 1);  // a good value beside it still counts
  EXPECT_EQ(load(&errors_, &warnings_), Status::kErrArg);
  ASSERT_EQ(errors_.size(), 1u);
  EXPECT_TRUE(contains(errors_[0], "TORUSMPI_YIELD_COUNT")) << errors_[0];
  EXPECT_TRUE(contains(errors_[0], "lots")) << errors_[0];
  EXPECT_TRUE(contains(errors_[0], "200")) << "names the default kept: " << errors_[0];
  EXPECT_TRUE(warnings_.empty());
  EXPECT_EQ(yield_count(), 200);
  EXPECT_EQ(spin_count(), 7);
}

TEST_F(ParamsTest, ANegativeCountIsABadValue) {
  setenv("TORUSMPI_BOOT_TIMEOUT", "-1", 1);  // "forever" is 0; -1 must not sneak in as it
  EXPECT_EQ(load(&errors_, &warnings_), Status::kErrArg);
  ASSERT_EQ(errors_.size(), 1u);
  EXPECT_TRUE(contains(errors_[0], "TORUSMPI_BOOT_TIMEOUT=-1")) << errors_[0];
  EXPECT_EQ(boot_timeout_s(), 300);
}

TEST_F(ParamsTest, EveryBadValueGetsItsOwnLine) {
  setenv("TORUSMPI_SPIN_COUNT", "1K", 1);  // a size suffix is not an int
  setenv("TORUSMPI_SLEEP_MAX_US", "", 1);
  EXPECT_EQ(load(&errors_, &warnings_), Status::kErrArg);
  ASSERT_EQ(errors_.size(), 2u);
  std::string all_errors = errors_[0] + "\n" + errors_[1];
  EXPECT_TRUE(contains(all_errors, "TORUSMPI_SPIN_COUNT=1K")) << all_errors;
  EXPECT_TRUE(contains(all_errors, "TORUSMPI_SLEEP_MAX_US=")) << all_errors;
  EXPECT_EQ(spin_count(), 1000);
  EXPECT_EQ(sleep_max_us(), 1000);
}

TEST_F(ParamsTest, LoadingAgainRereadsTheEnvironmentFromTheDefaults) {
  setenv("TORUSMPI_SPIN_COUNT", "5", 1);
  ASSERT_EQ(load(&errors_, &warnings_), Status::kOk);
  ASSERT_EQ(spin_count(), 5);
  // A bad value later falls back to the default, not to the value loaded before.
  setenv("TORUSMPI_SPIN_COUNT", "x", 1);
  EXPECT_EQ(load(&errors_, &warnings_), Status::kErrArg);
  EXPECT_EQ(spin_count(), 1000);
  unsetenv("TORUSMPI_SPIN_COUNT");
  errors_.clear();
  EXPECT_EQ(load(&errors_, &warnings_), Status::kOk);
  EXPECT_EQ(spin_count(), 1000);
}

TEST_F(ParamsTest, UnknownTorusmpiVariablesAreWarnedAboutNotErrors) {
  setenv("TORUSMPI_SPIN_CONT", "5", 1);  // a typo of SPIN_COUNT
  setenv("TORUSMPI_", "1", 1);
  setenv("XTORUSMPI_FOO", "1", 1);  // not ours: neither is the next one
  setenv("TORUSMPIFOO", "1", 1);
  EXPECT_EQ(load(&errors_, &warnings_), Status::kOk);
  unsetenv("XTORUSMPI_FOO");
  unsetenv("TORUSMPIFOO");
  EXPECT_TRUE(errors_.empty());
  ASSERT_EQ(warnings_.size(), 2u);
  std::string all_warnings = warnings_[0] + "\n" + warnings_[1];
  EXPECT_TRUE(contains(all_warnings, "TORUSMPI_SPIN_CONT ")) << all_warnings;
  EXPECT_TRUE(contains(all_warnings, "TORUSMPI_ ")) << all_warnings;
  EXPECT_FALSE(contains(all_warnings, "XTORUSMPI")) << all_warnings;
  EXPECT_FALSE(contains(all_warnings, "TORUSMPIFOO")) << all_warnings;
  EXPECT_EQ(spin_count(), 1000);
}

TEST_F(ParamsTest, ValueOfARowBeyondTheTableIsEmpty) {
  Value v = value(all().size());
  EXPECT_EQ(v.number, 0);
  EXPECT_EQ(v.text, "");
}

}  // namespace
}  // namespace torusmpi::params
