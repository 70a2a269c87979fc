// The bootstrap without a launcher: singleton mode, its modex, and the rule that a launcher
// variable without a reachable PMIx server is an error.
//
// A binary of its own: these tests unset and set launcher variables (PMIX_*, OMPI_*, PMI_*) in the
// test process, and boot keeps process-wide state (init() succeeds once until finalize()).
#include "boot/boot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/unit/test_env.h"

namespace torusmpi::boot {
namespace {

const std::vector<std::string> kLauncherPrefixes = {"PMIX_", "OMPI_", "PMI_"};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// One singleton job for the whole suite, as a program gets from MPI_Init without a launcher.
class BootSingleton : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    test::unset_with_prefix(kLauncherPrefixes);
    finalize();  // in case another suite left a job behind
    status_ = init(&job_, &error_);
  }
  static void TearDownTestSuite() { finalize(); }

  void SetUp() override { ASSERT_EQ(status_, Status::kOk) << error_; }

  static Status status_;
  static JobInfo job_;
  static std::string error_;
};

Status BootSingleton::status_ = Status::kErrInternal;
JobInfo BootSingleton::job_;
std::string BootSingleton::error_;

TEST_F(BootSingleton, InitGivesRankZeroOfOne) {
  EXPECT_TRUE(initialized());
  EXPECT_TRUE(job_.singleton);
  EXPECT_EQ(job_.rank, 0);
  EXPECT_EQ(job_.size, 1);
  EXPECT_EQ(job_.local_rank, 0);
  EXPECT_EQ(job_.local_size, 1);
  EXPECT_EQ(job_.node_rank, 0);
  EXPECT_EQ(job_.num_nodes, 1);
  EXPECT_EQ(job_.universe_size, 1);
  EXPECT_EQ(job_.local_peers, std::vector<int>{0});
  EXPECT_EQ(job_.nspace, "singleton." + std::to_string(getpid()));
  EXPECT_FALSE(job_.hostname.empty());
  EXPECT_EQ(job().nspace, job_.nspace);
  EXPECT_EQ(error_, "");
}

TEST_F(BootSingleton, InitAgainGivesTheSameJob) {
  JobInfo again;
  std::string error;
  EXPECT_EQ(init(&again, &error), Status::kOk);
  EXPECT_EQ(again.nspace, job_.nspace);
  EXPECT_EQ(again.rank, 0);
  EXPECT_EQ(again.size, 1);
}

TEST_F(BootSingleton, NoLauncherVariables) { EXPECT_EQ(launcher_variables(), ""); }

TEST_F(BootSingleton, PutExchangeGetRoundTrip) {
  std::vector<uint8_t> endpoint;
  for (int i = 0; i < 256; ++i) endpoint.push_back(static_cast<uint8_t>(i));  // zeros included
  ASSERT_EQ(put("test.endpoint", endpoint.data(), endpoint.size()), Status::kOk);
  ASSERT_EQ(put("test.empty", nullptr, 0), Status::kOk);
  ASSERT_EQ(exchange(), Status::kOk);
  std::vector<uint8_t> got;
  ASSERT_EQ(get(0, "test.endpoint", &got), Status::kOk);
  EXPECT_EQ(got, endpoint);
  got.assign(3, 7);
  ASSERT_EQ(get(0, "test.empty", &got), Status::kOk);
  EXPECT_TRUE(got.empty());
}

TEST_F(BootSingleton, APutReplacesTheValueOfItsKey) {
  const char first[] = "first";
  const char second[] = "2nd";
  ASSERT_EQ(put("test.replaced", first, sizeof(first)), Status::kOk);
  ASSERT_EQ(put("test.replaced", second, sizeof(second)), Status::kOk);
  ASSERT_EQ(exchange(), Status::kOk);
  std::vector<uint8_t> got;
  ASSERT_EQ(get(0, "test.replaced", &got), Status::kOk);
  EXPECT_EQ(std::string(got.begin(), got.end()), std::string(second, sizeof(second)));
}

TEST_F(BootSingleton, GetOfAnUnknownKeyOrRankFails) {
  std::vector<uint8_t> got;
  EXPECT_EQ(get(0, "test.never.put", &got), Status::kErrArg);
  const char v[] = "v";
  ASSERT_EQ(put("test.key", v, 1), Status::kOk);
  EXPECT_EQ(get(1, "test.key", &got), Status::kErrArg);
  EXPECT_EQ(get(-1, "test.key", &got), Status::kErrArg);
}

TEST_F(BootSingleton, FenceSucceeds) {
  EXPECT_EQ(fence(), Status::kOk);
  EXPECT_EQ(fence(), Status::kOk);
}

TEST_F(BootSingleton, ExchangeCardsGivesThisProcessAlone) {
  std::vector<PeerCard> cards;
  std::string error;
  ASSERT_EQ(exchange_cards("torusmpi-test 1.2.3", &cards, &error), Status::kOk) << error;
  ASSERT_EQ(cards.size(), 1u);
  EXPECT_EQ(cards[0].pid, getpid());
  EXPECT_EQ(cards[0].version, "torusmpi-test 1.2.3");
}

// Launcher variables without a launcher. Each test starts with no job and none of them set, and
// leaves it so.
class BootLauncherVariables : public ::testing::Test {
 protected:
  void SetUp() override {
    finalize();
    test::unset_with_prefix(kLauncherPrefixes);
    ASSERT_FALSE(initialized());
  }
  void TearDown() override {
    test::unset_with_prefix(kLauncherPrefixes);
    finalize();
  }

  // init() must fail with kErrBoot, leave no job, and name `variable` in its error.
  static void expect_boot_error_naming(const std::string& variable, std::string* error) {
    JobInfo job;
    EXPECT_EQ(init(&job, error), Status::kErrBoot);
    EXPECT_FALSE(initialized());
    EXPECT_TRUE(contains(*error, variable)) << *error;
  }
};

TEST_F(BootLauncherVariables, PmixNamespaceWithoutAServerIsAnErrorThatNamesIt) {
  setenv("PMIX_NAMESPACE", "torusmpi-unit-test", 1);
  EXPECT_EQ(launcher_variables(), "PMIX_NAMESPACE");
  std::string error;
  expect_boot_error_naming("PMIX_NAMESPACE", &error);
  EXPECT_TRUE(contains(error, "PMIx")) << error;
}

TEST_F(BootLauncherVariables, AnOpenMpiWorldVariableWithoutAServerIsAnError) {
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  std::string error;
  expect_boot_error_naming("OMPI_COMM_WORLD_SIZE", &error);
}

TEST_F(BootLauncherVariables, APmi1LauncherIsRecognisedAndAPmixOneAskedFor) {
  setenv("PMI_RANK", "0", 1);
  setenv("PMI_SIZE", "2", 1);
  std::string error;
  expect_boot_error_naming("PMI_RANK", &error);
  EXPECT_TRUE(contains(error, "PMI-1")) << error;
  EXPECT_TRUE(contains(error, "PMIx launcher")) << error;
}

TEST_F(BootLauncherVariables, EveryLauncherVariableIsListed) {
  setenv("PMIX_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  setenv("PMIX_MCA_gds", "hash", 1);  // PMIx configuration, not a launcher's mark
  setenv("OMPI_MCA_btl", "self", 1);
  std::string found = launcher_variables();
  EXPECT_TRUE(contains(found, "PMIX_RANK")) << found;
  EXPECT_TRUE(contains(found, "OMPI_COMM_WORLD_RANK")) << found;
  EXPECT_TRUE(contains(found, ", ")) << found;
  EXPECT_FALSE(contains(found, "PMIX_MCA")) << found;
  EXPECT_FALSE(contains(found, "OMPI_MCA")) << found;
}

TEST_F(BootLauncherVariables, OnceTheVariablesAreGoneInitIsASingletonAgain) {
  setenv("PMIX_NAMESPACE", "torusmpi-unit-test", 1);
  std::string error;
  expect_boot_error_naming("PMIX_NAMESPACE", &error);
  unsetenv("PMIX_NAMESPACE");
  JobInfo job;
  error.clear();
  ASSERT_EQ(init(&job, &error), Status::kOk) << error;
  EXPECT_TRUE(job.singleton);
  EXPECT_EQ(job.size, 1);
  EXPECT_EQ(finalize(), Status::kOk);
  EXPECT_FALSE(initialized());
}

}  // namespace
}  // namespace torusmpi::boot
