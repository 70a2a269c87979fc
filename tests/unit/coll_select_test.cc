// Algorithm selection: the registry's shape, the cost model, forced algorithms and size ranges,
// rule files and their diagnostics, the fallback policy, and the JSON reader under it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "coll/collective.h"
#include "coll/select/registry.h"
#include "coll/select/select.h"
#include "core/json.h"
#include "core/params.h"
#include "test_env.h"

namespace torusmpi::coll {
namespace {

class Select : public testing::Test {
 protected:
  void SetUp() override { reset(); }
  void TearDown() override { reset(); }

  static void reset() {
    test::unset_with_prefix({"TORUSMPI_"});
    load();
  }
  static void load() {
    std::vector<std::string> errors, warnings;
    params::load(&errors, &warnings);
  }
  // selection_load's verdict for the environment as it is.
  static std::string load_error() {
    load();
    std::string error;
    return selection_load(&error) == Status::kOk ? "" : error;
  }
  static Args call(Coll c, int p, size_t count, bool commutative = true) {
    Args a;
    a.coll = c;
    a.size = p;
    a.count = count;
    a.elem = 4;
    a.commutative = commutative;
    return a;
  }
  static std::string rules(const std::string& text) {
    std::string path = testing::TempDir() + "rules.json";
    std::ofstream(path) << text;
    return path;
  }
  const Model m_ = host_model(false);
};

TEST_F(Select, RegistryHasEveryCollectiveAndUniqueTokens) {
  std::set<std::string> seen;
  for (int i = 0; i < kCollCount; ++i) {
    Coll c = static_cast<Coll>(i);
    // collectives.cc's table is indexed by Coll: a line out of order would give a collective
    // another's behaviour.
    EXPECT_EQ(collective(c).coll, c)
        << "collectives.cc entry " << i << " is " << collective(c).name;
    const Algorithm& f = fallback(c);
    EXPECT_EQ(f.coll, c) << coll_name(c) << " has no algorithm";
    EXPECT_EQ(f.restrictions, 0u) << coll_name(c) << "'s fallback must run every call";
  }
  for (const Algorithm& a : algorithms()) {
    std::string name = std::string(coll_name(a.coll)) + "/" + a.token;
    EXPECT_TRUE(seen.insert(name).second) << name << " twice";
    EXPECT_EQ(find_algorithm(a.coll, a.token), &a);
    EXPECT_GE(a.cost(m_, 16, 1 << 20), 0) << name;
  }
}

TEST_F(Select, EveryCollectiveHasItsParameters) {
  for (int i = 0; i < kCollCount; ++i) {
    std::string up = coll_name(static_cast<Coll>(i));
    for (char& ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    int found = 0;
    for (const params::Info& p : params::all()) {
      if (std::string(p.env) == "TORUSMPI_" + up + "_ALGORITHM" ||
          std::string(p.env) == "TORUSMPI_" + up) {
        EXPECT_EQ(p.when, params::When::Call) << p.env;
        ++found;
      }
    }
    EXPECT_EQ(found, 2) << up;
  }
}

TEST_F(Select, CostModelPrefersFewStepsSmallAndFewBytesLarge) {
  Choice small = select_algorithm(call(Coll::kAllreduce, 16, 2), m_);
  ASSERT_NE(small.alg, nullptr);
  EXPECT_STREQ(small.alg->token, "recursive_doubling") << small.why;
  EXPECT_NE(small.why.find("cost model"), std::string::npos);
  Choice large = select_algorithm(call(Coll::kAllreduce, 16, 16 << 20), m_);
  EXPECT_STRNE(large.alg->token, "recursive_doubling") << large.why;
  // Non-commutative calls never get an algorithm that needs a commutative op.
  Choice nc = select_algorithm(call(Coll::kAllreduce, 16, 16 << 20, false), m_);
  EXPECT_EQ(nc.alg->restrictions & kNeedsCommutative, 0u) << nc.alg->token;
}

TEST_F(Select, ForcedAlgorithm) {
  setenv("TORUSMPI_ALLREDUCE_ALGORITHM", "ring", 1);
  EXPECT_EQ(load_error(), "");
  Choice c = select_algorithm(call(Coll::kAllreduce, 4, 1), m_);
  EXPECT_STREQ(c.alg->token, "ring");
  EXPECT_EQ(c.why, "forced by TORUSMPI_ALLREDUCE_ALGORITHM=ring");
  // Other collectives are not affected.
  EXPECT_NE(select_algorithm(call(Coll::kBcast, 4, 1), m_).why.find("cost model"),
            std::string::npos);
}

TEST_F(Select, ForcedAlgorithmThatCannotRunObeysTheFallbackPolicy) {
  setenv("TORUSMPI_ALLREDUCE_ALGORITHM", "ring", 1);
  load();
  Choice warn = select_algorithm(call(Coll::kAllreduce, 4, 100, false), m_);
  ASSERT_NE(warn.alg, nullptr);
  EXPECT_TRUE(warn.passed_over);
  EXPECT_NE(warn.why.find("ring needs a commutative op"), std::string::npos) << warn.why;
  setenv("TORUSMPI_COLL_FALLBACK", "error", 1);
  EXPECT_EQ(load_error(), "");
  Choice error = select_algorithm(call(Coll::kAllreduce, 4, 100, false), m_);
  EXPECT_EQ(error.alg, nullptr);
  EXPECT_NE(error.why.find("TORUSMPI_COLL_FALLBACK=error"), std::string::npos) << error.why;
  setenv("TORUSMPI_COLL_FALLBACK", "loud", 1);
  EXPECT_NE(load_error().find("expected error, warn or silent"), std::string::npos);
}

// Renamed tokens stay accepted where users wrote them: variables, ranges and rule files.
TEST_F(Select, OldTokensAreAliases) {
  EXPECT_EQ(find_algorithm(Coll::kAllreduce, "mesh"), find_algorithm(Coll::kAllreduce, "direct"));
  EXPECT_EQ(find_algorithm(Coll::kAllgather, "chip_hier"),
            find_algorithm(Coll::kAllgather, "chip_ring"));
  EXPECT_EQ(find_algorithm(Coll::kReduceScatter, "hier_mesh"),
            find_algorithm(Coll::kReduceScatter, "instance_direct"));
  EXPECT_NE(find_algorithm(Coll::kAllreduce, "hier_rdh"), nullptr);
  setenv("TORUSMPI_ALLREDUCE_ALGORITHM", "mesh", 1);
  EXPECT_EQ(load_error(), "");
  EXPECT_STREQ(select_algorithm(call(Coll::kAllreduce, 4, 1), m_).alg->token, "direct");
  unsetenv("TORUSMPI_ALLREDUCE_ALGORITHM");
  setenv("TORUSMPI_ALLGATHER", "hier_ring:0-max", 1);
  EXPECT_EQ(load_error(), "");
}

TEST_F(Select, UnknownTokenIsAnError) {
  setenv("TORUSMPI_ALLREDUCE_ALGORITHM", "rign", 1);
  std::string e = load_error();
  EXPECT_NE(e.find("allreduce has no algorithm 'rign'"), std::string::npos) << e;
  EXPECT_NE(e.find("recursive_doubling"), std::string::npos) << "lists the tokens: " << e;
}

TEST_F(Select, SizeRanges) {
  setenv("TORUSMPI_ALLREDUCE", "recursive_doubling:0-4096;ring:4097-max", 1);
  EXPECT_EQ(load_error(), "");
  EXPECT_STREQ(select_algorithm(call(Coll::kAllreduce, 8, 1024), m_).alg->token,
               "recursive_doubling");  // 4096 B
  Choice big = select_algorithm(call(Coll::kAllreduce, 8, 1025), m_);
  EXPECT_STREQ(big.alg->token, "ring");
  EXPECT_EQ(big.why, "forced by TORUSMPI_ALLREDUCE range 4097-max");
  setenv("TORUSMPI_ALLREDUCE", "ring:1K-2K", 1);
  EXPECT_EQ(load_error(), "");
  EXPECT_STREQ(select_algorithm(call(Coll::kAllreduce, 8, 256), m_).alg->token, "ring");
  EXPECT_NE(select_algorithm(call(Coll::kAllreduce, 8, 2), m_).why.find("cost model"),
            std::string::npos);  // outside every range
  for (const char* bad : {"ring", "ring:10", "ring:x-20", "ring:20-10", "nope:0-max"}) {
    setenv("TORUSMPI_ALLREDUCE", bad, 1);
    EXPECT_NE(load_error(), "") << bad;
  }
}

TEST_F(Select, RuleFileFirstMatchWins) {
  std::string path = rules(R"({"rules": [
    {"collective": "allreduce", "comm_size_max": 4, "algorithm": "ring"},
    {"collective": "allreduce", "msg_size_min": 1024, "msg_size_max": "max",
     "algorithm": "rabenseifner"},
    {"collective": "allreduce", "algorithm": "recursive_doubling"}
  ]})");
  setenv("TORUSMPI_COLL_RULES", path.c_str(), 1);
  ASSERT_EQ(load_error(), "");
  EXPECT_STREQ(select_algorithm(call(Coll::kAllreduce, 4, 1 << 20), m_).alg->token, "ring");
  Choice c = select_algorithm(call(Coll::kAllreduce, 8, 1 << 20), m_);
  EXPECT_STREQ(c.alg->token, "rabenseifner");
  EXPECT_EQ(c.why, "rule 1 of " + path);
  EXPECT_STREQ(select_algorithm(call(Coll::kAllreduce, 8, 1), m_).alg->token, "recursive_doubling");
  // A rule whose algorithm cannot run the call is passed over.
  EXPECT_STREQ(select_algorithm(call(Coll::kAllreduce, 4, 1, false), m_).alg->token,
               "recursive_doubling");
  // A forced algorithm comes before the rules.
  setenv("TORUSMPI_ALLREDUCE_ALGORITHM", "reduce_bcast", 1);
  load();
  EXPECT_STREQ(select_algorithm(call(Coll::kAllreduce, 4, 1), m_).alg->token, "reduce_bcast");
}

TEST_F(Select, RuleFileErrorsNameFileAndRule) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {R"({"rules": [{"collective": "allreduce", "algorithm": "ring"},
                     {"collective": "allreduce", "algorithm": "rign"}]})",
       "rule 1 (line 2): allreduce has no algorithm 'rign'"},
      {R"({"rules": [{"collective": "allreduse", "algorithm": "ring"}]})",
       "rule 0 (line 1): \"collective\" must name a collective"},
      {R"({"rules": [{"collective": "allreduce", "algorithm": 4}]})",
       "\"algorithm\" must be a token"},
      {R"({"rules": [{"collective": "allreduce", "algorithm": "ring", "msg_size": 4}]})",
       "unknown key \"msg_size\""},
      {R"({"rules": [{"collective": "allreduce", "algorithm": "ring", "msg_size_min": -1}]})",
       "\"msg_size_min\" must be a whole number"},
      {R"({"rules": [{"collective": "allreduce", "algorithm": "ring", "comm_size_min": 9,
                      "comm_size_max": 4}]})",
       "its min is above its max"},
      {R"({"rules": [{"collective": "allreduce", "algorithm": "ring",}]})", "line 1, column"},
      {R"([])", "expected an object with a \"rules\" array"},
  };
  for (const Case& c : cases) {
    std::string path = rules(c.text);
    setenv("TORUSMPI_COLL_RULES", path.c_str(), 1);
    std::string e = load_error();
    EXPECT_EQ(e.rfind(path, 0), 0u) << "names the file: " << e;
    EXPECT_NE(e.find(c.says), std::string::npos) << c.text << "\n -> " << e;
  }
  setenv("TORUSMPI_COLL_RULES", "/nonexistent/rules.json", 1);
  EXPECT_NE(load_error().find("cannot be read"), std::string::npos);
}

TEST_F(Select, ParameterWritesBumpTheGeneration) {
  const std::vector<params::Info>& all = params::all();
  size_t i = 0;
  while (i < all.size() && std::string(all[i].env) != "TORUSMPI_BCAST_ALGORITHM") ++i;
  ASSERT_LT(i, all.size());
  uint64_t g = params::generation();
  std::string error;
  ASSERT_EQ(params::set(i, "scatter_allgather", &error), Status::kOk) << error;
  EXPECT_GT(params::generation(), g);
  EXPECT_STREQ(select_algorithm(call(Coll::kBcast, 4, 1), m_).alg->token, "scatter_allgather");
}

TEST(Json, ParsesWhatRuleFilesUse) {
  json::Value v;
  std::string error;
  ASSERT_TRUE(
      json::parse(R"( {"a": [1, -2.5e3, "x\"y\n", true, false, null], "b": {}} )", &v, &error))
      << error;
  ASSERT_EQ(v.type, json::Value::Type::kObject);
  const json::Value* a = v.find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->items.size(), 6u);
  EXPECT_EQ(a->items[1].number, -2500);
  EXPECT_EQ(a->items[2].text, "x\"y\n");
  EXPECT_TRUE(a->items[3].boolean);
  EXPECT_EQ(a->items[5].type, json::Value::Type::kNull);
  EXPECT_EQ(v.find("b")->type, json::Value::Type::kObject);
  EXPECT_EQ(v.find("c"), nullptr);
}

TEST(Json, ErrorsSayWhere) {
  json::Value v;
  std::string error;
  EXPECT_FALSE(json::parse("{\n  \"a\": [1 2]\n}", &v, &error));
  EXPECT_EQ(error, "line 2, column 11: expected ',' or ']'");
  EXPECT_FALSE(json::parse("{} x", &v, &error));
  EXPECT_NE(error.find("text after the JSON value"), std::string::npos);
  EXPECT_FALSE(json::parse("\"open", &v, &error));
  EXPECT_NE(error.find("string not closed"), std::string::npos);
  EXPECT_FALSE(json::parse(std::string(100, '['), &v, &error));
  EXPECT_NE(error.find("nested too deeply"), std::string::npos);
}

}  // namespace
}  // namespace torusmpi::coll
