// Logging: TORUSMPI_DEBUG masks, the rank prefix, and the lines themselves.
#include "core/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace torusmpi::log {
namespace {

constexpr unsigned kAll = (1u << static_cast<unsigned>(Subsystem::kCount)) - 1;

unsigned bit(Subsystem s) { return 1u << static_cast<unsigned>(s); }

// Collects what is written to stderr (file descriptor 2) while it lives.
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    file_ = std::tmpfile();
    dup2(fileno(file_), STDERR_FILENO);
  }
  ~StderrCapture() {
    if (file_ != nullptr) finish();
  }
  std::string finish() {
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    std::string text;
    std::rewind(file_);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), file_)) > 0) text.append(buf, n);
    std::fclose(file_);
    file_ = nullptr;
    return text;
  }

 private:
  int saved_ = -1;
  FILE* file_ = nullptr;
};

// Each test sees no debug subsystem enabled and no rank, and leaves it so.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override { reset(); }
  void TearDown() override { reset(); }
  static void reset() {
    set_mask(0);
    set_rank(-1);
  }
};

TEST(ParseMask, EmptyTextEnablesNothing) {
  std::string unknown;
  EXPECT_EQ(parse_mask("", &unknown), 0u);
  EXPECT_EQ(unknown, "");
  EXPECT_EQ(parse_mask(",,", &unknown), 0u);
  EXPECT_EQ(unknown, "");
}

TEST(ParseMask, EverySubsystemByItsName) {
  for (unsigned i = 0; i < static_cast<unsigned>(Subsystem::kCount); ++i) {
    Subsystem s = static_cast<Subsystem>(i);
    std::string unknown;
    EXPECT_EQ(parse_mask(subsystem_name(s), &unknown), bit(s)) << subsystem_name(s);
    EXPECT_EQ(unknown, "");
  }
  EXPECT_STREQ(subsystem_name(Subsystem::kBoot), "boot");
  EXPECT_STREQ(subsystem_name(Subsystem::kMpi), "mpi");
  EXPECT_STREQ(subsystem_name(Subsystem::kProgress), "progress");
  EXPECT_STREQ(subsystem_name(Subsystem::kParams), "params");
}

TEST(ParseMask, CommaSeparatedNamesAddUpAndEmptyItemsAreSkipped) {
  std::string unknown;
  EXPECT_EQ(parse_mask("boot,mpi", &unknown), bit(Subsystem::kBoot) | bit(Subsystem::kMpi));
  EXPECT_EQ(parse_mask(",progress,,params,", &unknown),
            bit(Subsystem::kProgress) | bit(Subsystem::kParams));
  EXPECT_EQ(parse_mask("boot,boot", &unknown), bit(Subsystem::kBoot));
  EXPECT_EQ(unknown, "");
}

TEST(ParseMask, AllEnablesEverySubsystem) {
  std::string unknown;
  EXPECT_EQ(parse_mask("all", &unknown), kAll);
  EXPECT_EQ(parse_mask("boot,all", &unknown), kAll);
  EXPECT_EQ(parse_mask("all,mpi", &unknown), kAll);
  EXPECT_EQ(unknown, "");
}

TEST(ParseMask, UnknownNamesAreCollectedAndKnownOnesStillCount) {
  std::string unknown;
  EXPECT_EQ(parse_mask("params,nope,progress,zz", &unknown),
            bit(Subsystem::kParams) | bit(Subsystem::kProgress));
  EXPECT_EQ(unknown, "nope,zz");

  std::string unknown2;
  EXPECT_EQ(parse_mask("all,bogus", &unknown2), kAll);
  EXPECT_EQ(unknown2, "bogus");

  std::string unknown3;  // names are case-sensitive, and blanks are not trimmed
  EXPECT_EQ(parse_mask("BOOT, mpi", &unknown3), 0u);
  EXPECT_EQ(unknown3, "BOOT, mpi");
}

TEST_F(LogTest, SetMaskDecidesWhatIsEnabled) {
  for (unsigned i = 0; i < static_cast<unsigned>(Subsystem::kCount); ++i) {
    EXPECT_FALSE(enabled(static_cast<Subsystem>(i)));
  }
  set_mask(bit(Subsystem::kMpi));
  EXPECT_TRUE(enabled(Subsystem::kMpi));
  EXPECT_FALSE(enabled(Subsystem::kBoot));
  set_mask(kAll);
  for (unsigned i = 0; i < static_cast<unsigned>(Subsystem::kCount); ++i) {
    EXPECT_TRUE(enabled(static_cast<Subsystem>(i)));
  }
}

TEST_F(LogTest, PrefixShowsTheRankOnceItIsKnown) {
  EXPECT_EQ(prefix(), "torusmpi[r?] ");
  set_rank(0);
  EXPECT_EQ(prefix(), "torusmpi[r0] ");
  set_rank(12);
  EXPECT_EQ(prefix(), "torusmpi[r12] ");
  set_rank(-1);
  EXPECT_EQ(prefix(), "torusmpi[r?] ");
}

TEST_F(LogTest, WarningsAndErrorsAreOneLineWithPrefixAndTag) {
  set_rank(3);
  StderrCapture capture;
  warn("peer %d is slow", 2);
  error("recv from %s failed", "r1");
  EXPECT_EQ(capture.finish(),
            "torusmpi[r3] warning: peer 2 is slow\n"
            "torusmpi[r3] error: recv from r1 failed\n");
}

TEST_F(LogTest, DebugLinesNameTheirSubsystem) {
  StderrCapture capture;
  debug(Subsystem::kBoot, "job of %d ranks", 4);
  EXPECT_EQ(capture.finish(), "torusmpi[r?] boot: job of 4 ranks\n");
}

TEST_F(LogTest, DebugMacroPrintsOnlyEnabledSubsystemsAndEvaluatesNothingOtherwise) {
  int evaluated = 0;
  auto count = [&evaluated] { return ++evaluated; };
  {
    StderrCapture capture;
    TORUSMPI_DEBUG(kProgress, "call %d", count());
    EXPECT_EQ(capture.finish(), "");
  }
  EXPECT_EQ(evaluated, 0);
  set_mask(bit(Subsystem::kProgress));
  {
    StderrCapture capture;
    TORUSMPI_DEBUG(kProgress, "call %d", count());
    TORUSMPI_DEBUG(kMpi, "call %d", count());
    EXPECT_EQ(capture.finish(), "torusmpi[r?] progress: call 1\n");
  }
  EXPECT_EQ(evaluated, 1);
}

TEST_F(LogTest, AnOverlongMessageIsCutToOneLine) {
  std::string huge(5000, 'x');
  StderrCapture capture;
  warn("%s", huge.c_str());
  std::string text = capture.finish();
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.rfind("torusmpi[r?] warning: xxx", 0), 0u);
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "exactly one line";
  EXPECT_LE(text.size(), 1024u);
}

}  // namespace
}  // namespace torusmpi::log
