// The host as hwloc sees it.
#include "topo/host.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

namespace torusmpi::topo {
namespace {

TEST(HostInfo, CountsArePlausible) {
  const HostInfo& h = host_info();
  EXPECT_GE(h.cores, 1);
  EXPECT_GE(h.pus, h.cores) << "every core has at least one hardware thread";
  EXPECT_GE(h.numa_nodes, 1);
  EXPECT_LE(h.pus, sysconf(_SC_NPROCESSORS_CONF));
}

// A rank bound to one core (mpirun binds by default, or taskset) must be told about that core only:
// hwloc refuses RESTRICT_TO_CPUBINDING unless IS_THISSYSTEM comes with it.
TEST(HostInfoDeathTest, ARankBoundToOneCpuSeesOneCpu) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  if (CPU_COUNT(&mask) < 2) GTEST_SKIP() << "needs two CPUs to bind to one of them";
  int first = 0;
  while (!CPU_ISSET(first, &mask)) ++first;
  // In a child process started afresh (threadsafe style): host_info() is read once per process,
  // and the binding must come first.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(first, &one);
        if (sched_setaffinity(0, sizeof(one), &one) != 0) _exit(100);
        _exit(host_info().pus);
      },
      ::testing::ExitedWithCode(1), "");
}

TEST(HostInfo, IsReadOnceAndCached) {
  const HostInfo& a = host_info();
  const HostInfo& b = host_info();
  EXPECT_EQ(&a, &b);
}

}  // namespace
}  // namespace torusmpi::topo
