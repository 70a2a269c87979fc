// Status codes: a name for every value, and TORUSMPI_CHECK.
#include "core/status.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace torusmpi {
namespace {

// Every value of Status, in declaration order. A status added to the enum but not to this list
// fails EveryValueHasItsOwnName: before kErrInternal it changes the count, after it the value past
// kErrInternal gets a name (status_string must name it, or -Wswitch stops the build).
constexpr Status kEvery[] = {
    Status::kOk,          Status::kErrArg,      Status::kErrNoMem,   Status::kErrUnsupported,
    Status::kErrBoot,     Status::kErrPeerGone, Status::kErrTimeout, Status::kErrTruncate,
    Status::kErrInternal,
};

TEST(StatusString, EveryValueHasItsOwnName) {
  ASSERT_EQ(sizeof(kEvery) / sizeof(kEvery[0]), static_cast<size_t>(Status::kErrInternal) + 1);
  EXPECT_STREQ(status_string(static_cast<Status>(static_cast<int>(Status::kErrInternal) + 1)),
               "unknown status")
      << "a status after kErrInternal is missing from kEvery";
  std::set<std::string> names;
  for (Status s : kEvery) {
    const char* name = status_string(s);
    ASSERT_NE(name, nullptr) << static_cast<int>(s);
    EXPECT_STRNE(name, "") << static_cast<int>(s);
    EXPECT_STRNE(name, "unknown status") << static_cast<int>(s);
    EXPECT_TRUE(names.insert(name).second) << "two statuses named " << name;
  }
}

TEST(StatusString, TheNamesMessagesUse) {
  EXPECT_STREQ(status_string(Status::kOk), "success");
  EXPECT_STREQ(status_string(Status::kErrArg), "invalid argument");
  EXPECT_STREQ(status_string(Status::kErrNoMem), "out of memory");
  EXPECT_STREQ(status_string(Status::kErrUnsupported), "not supported");
  EXPECT_STREQ(status_string(Status::kErrBoot), "bootstrap failed");
  EXPECT_STREQ(status_string(Status::kErrPeerGone), "peer gone");
  EXPECT_STREQ(status_string(Status::kErrTimeout), "timed out");
  EXPECT_STREQ(status_string(Status::kErrTruncate), "message truncated");
  EXPECT_STREQ(status_string(Status::kErrInternal), "internal error");
}

TEST(StatusString, AValueOutsideTheEnumIsNamedUnknown) {
  EXPECT_STREQ(status_string(static_cast<Status>(999)), "unknown status");
  EXPECT_STREQ(status_string(static_cast<Status>(-1)), "unknown status");
}

Status pass_through(Status inner, int* reached) {
  TORUSMPI_CHECK(inner);
  ++*reached;
  return Status::kOk;
}

TEST(Check, ReturnsTheFirstFailureAndGoesOnAfterSuccess) {
  int reached = 0;
  EXPECT_EQ(pass_through(Status::kOk, &reached), Status::kOk);
  EXPECT_EQ(reached, 1);
  EXPECT_EQ(pass_through(Status::kErrPeerGone, &reached), Status::kErrPeerGone);
  EXPECT_EQ(reached, 1);
}

TEST(Check, EvaluatesItsExpressionOnce) {
  int calls = 0;
  auto fail_once = [&calls] { return ++calls == 1 ? Status::kErrTimeout : Status::kOk; };
  auto run = [&]() -> Status {
    TORUSMPI_CHECK(fail_once());
    return Status::kOk;
  };
  EXPECT_EQ(run(), Status::kErrTimeout);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace torusmpi
