// The cost model's guards: each algorithm's cost text (torusmpi_info prints it) is what its file's
// opening `Cost =` comment says, beside which its cost function sits; and the calibration of the
// closed forms (coll/select/calibration.def) is what the simulator gives now.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "coll/coll.h"
#include "coll/select/registry.h"
#include "coll/sim/calibrate.h"

namespace torusmpi::coll {
namespace {

std::string source(const std::string& path) {
  std::ifstream in(std::string(TORUSMPI_TOP_SRCDIR) + "/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A file's opening comment, its lines joined and runs of spaces made one.
std::string opening_comment(const std::string& text) {
  std::istringstream in(text);
  std::string line, words, word;
  while (std::getline(in, line) && line.rfind("//", 0) == 0) words += line.substr(2) + " ";
  std::istringstream split(words);
  std::string joined;
  while (split >> word) joined += (joined.empty() ? "" : " ") + word;
  return joined;
}

TEST(CostText, IsTheAlgorithmFilesCostComment) {
  for (const Algorithm& a : algorithms()) {
    const std::string dir = coll_name(a.coll);
    const std::string path = "coll/" + dir + "/" + dir + "_" + a.token + ".cc";
    const std::string comment = opening_comment(source(path));
    ASSERT_FALSE(comment.empty()) << path << ": no opening comment (or no such file)";
    EXPECT_EQ(std::string(a.cost_text).rfind("Cost = ", 0), 0u) << path << ": " << a.cost_text;
    EXPECT_NE(comment.find(a.cost_text), std::string::npos)
        << path << ": the registry's cost text \"" << a.cost_text
        << "\" is not what the file's opening comment says";
  }
}

TEST(Calibration, IsWhatTheSimulatorGives) {
  const std::vector<sim::Calibrated> now = sim::calibrate();
  ASSERT_FALSE(now.empty());
  for (const sim::Calibrated& c : now) {
    for (double x : c.points) EXPECT_GT(x, 0) << c.name << ": a point failed (see above)";
  }
  EXPECT_EQ(source("coll/select/calibration.def"), sim::calibration_def(now))
      << "coll/select/calibration.def is stale: run `torusmpi_sim --calibrate > "
         "coll/select/calibration.def` in the source tree, then rebuild";
}

}  // namespace
}  // namespace torusmpi::coll
