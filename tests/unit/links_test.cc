// pml/shm/links: the link accounting and pacing arithmetic, in one process (several Links
// objects sharing one array of slots stand for ranks sharing the segment). The integration test
// links.sh checks the same through real jobs; here the times are exact.
#include "pml/shm/links.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace torusmpi::pml::shm {
namespace {

topo::Machine model(const char* text) {
  topo::Machine m;
  std::string error;
  EXPECT_TRUE(topo::parse_machine(text, &m, &error)) << error;
  return m;
}

FragHeader frag(FragType type, uint64_t offset = 0, uint64_t rreq = 0) {
  FragHeader h{};
  h.type = type;
  h.size = offset;
  h.rreq = rreq;
  return h;
}

std::string printed(const Links& l) {
  char* text = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&text, &len);
  l.print(f);
  std::fclose(f);
  std::string s(text, len);
  free(text);
  return s;
}

const std::vector<int> kFour = {0, 1, 2, 3};

TEST(Links, ChargesTheRouteBothWaysAndPublishes) {
  topo::Machine m = model("torus:2x2:cores=1");
  std::vector<LinkSlot> slots(link_slots(m));
  ASSERT_EQ(slots.size(), 8u);
  Links a;
  a.attach(m, 0, kFour, slots.data(), static_cast<int>(slots.size()), false);
  EXPECT_TRUE(a.accounting());
  EXPECT_FALSE(a.pacing());
  EXPECT_EQ(a.hops_to(0), 0);
  EXPECT_EQ(a.hops_to(3), 2);
  a.charge_to(3, 100);  // 0-1, 1-3
  a.charge_from(3, 7);  // 3-2, 2-0
  Links b;
  b.attach(m, 2, kFour, slots.data(), static_cast<int>(slots.size()), false);
  b.charge_to(3, 5);  // 2-3
  // Nothing shows before publishing; publishing twice counts once.
  EXPECT_EQ(printed(a).find("bytes=100"), std::string::npos);
  a.publish();
  a.publish();
  b.publish();
  const std::string out = printed(a);
  EXPECT_EQ(out,
            "torusmpi-stats link 0-1 bytes=100\n"
            "torusmpi-stats link 0-2 bytes=0\n"
            "torusmpi-stats link 1-0 bytes=0\n"
            "torusmpi-stats link 1-3 bytes=100\n"
            "torusmpi-stats link 2-3 bytes=5\n"
            "torusmpi-stats link 2-0 bytes=7\n"
            "torusmpi-stats link 3-2 bytes=7\n"
            "torusmpi-stats link 3-1 bytes=0\n");
}

TEST(Links, SameChipAndHostCountNothing) {
  topo::Machine m = model("torus:2x2:cores=2");
  std::vector<LinkSlot> slots(link_slots(m));
  Links l;
  l.attach(m, 0, {0, 1}, slots.data(), static_cast<int>(slots.size()), true);
  EXPECT_FALSE(l.accounting());  // rank 1 shares chip 0
  EXPECT_FALSE(l.pacing());
  EXPECT_TRUE(l.may_send(1, frag(FragType::kEager), 1000));

  topo::Machine host = model("host");
  EXPECT_EQ(link_slots(host), 0);
  Links h;
  h.attach(host, 0, {0, 1}, nullptr, 0, true);
  EXPECT_FALSE(h.accounting());
  EXPECT_EQ(printed(h), "");
}

TEST(Links, PacingHoldsUntilTheHardwareWouldDeliver) {
  // 1 GB/s, 2 ms per hop: 1000 B take 1 us on each link. Hops this long leave the checks below
  // room on a loaded machine (under the sanitizers, 20 us hops were over before the second ask).
  topo::Machine m = model("torus:2x2:cores=1:link=1,2000");
  std::vector<LinkSlot> slots(link_slots(m));
  Links a;
  a.attach(m, 0, kFour, slots.data(), static_cast<int>(slots.size()), true);
  ASSERT_TRUE(a.pacing());
  const uint64_t t0 = now_ns();
  EXPECT_FALSE(a.may_send(3, frag(FragType::kEager), 1000));
  const uint64_t t1 = now_ns();
  const uint64_t due = a.next_due();
  EXPECT_GE(due, t0 + 1000 + 2 * 2000000);
  EXPECT_LE(due, t1 + 1000 + 2 * 2000000);
  // Asked again for the same fragment before it is due: the same answer, no second reservation.
  // (Only checked when the ask did come before it was due: a descheduled test may come late.)
  const bool again = a.may_send(3, frag(FragType::kEager), 1000);
  if (now_ns() < due) {
    EXPECT_FALSE(again);
    EXPECT_EQ(a.next_due(), due);
    EXPECT_TRUE(a.holding());
  }
  if (!again) {
    while (now_ns() < due) {
    }
    EXPECT_TRUE(a.may_send(3, frag(FragType::kEager), 1000));
  }
  a.sent(3);
  EXPECT_FALSE(a.holding());
  EXPECT_EQ(a.next_due(), 0u);
}

TEST(Links, ASharedLinkSerializesTwoSenders) {
  topo::Machine m = model("torus:2x2:cores=1:link=1,20");
  std::vector<LinkSlot> slots(link_slots(m));
  Links a, b;
  a.attach(m, 0, kFour, slots.data(), static_cast<int>(slots.size()), true);
  b.attach(m, 1, kFour, slots.data(), static_cast<int>(slots.size()), true);
  const size_t big = 1000000;                                // 1 ms per link
  EXPECT_FALSE(a.may_send(3, frag(FragType::kEager), big));  // 0-1, 1-3
  const uint64_t due_a = a.next_due();
  EXPECT_FALSE(b.may_send(3, frag(FragType::kEager), big));  // 1-3: taken until a's end
  const uint64_t due_b = b.next_due();
  // a: start + 1 ms + 2 hops; b starts when a leaves 1-3, then 1 ms + 1 hop.
  EXPECT_GE(due_b, due_a - 2 * 20000 + 1000000 + 20000);
  // A sender on other links is not held up: 2 to 0 is link 2-0 alone.
  Links c;
  c.attach(m, 2, kFour, slots.data(), static_cast<int>(slots.size()), true);
  const uint64_t t0 = now_ns();
  EXPECT_FALSE(c.may_send(0, frag(FragType::kEager), big));
  EXPECT_LE(c.next_due(), now_ns() + 1000000 + 20000);
  EXPECT_GE(c.next_due(), t0 + 1000000 + 20000);
}

TEST(Links, ChunksOfOneMessageStreamAtLinkBandwidth) {
  topo::Machine m = model("torus:2x2:cores=1:link=1,20");
  std::vector<LinkSlot> slots(link_slots(m));
  Links a;
  a.attach(m, 0, kFour, slots.data(), static_cast<int>(slots.size()), true);
  const size_t chunk = 65536;
  EXPECT_FALSE(a.may_send(3, frag(FragType::kData, 0, 42), chunk));
  uint64_t due = a.next_due();
  while (now_ns() < due) {
  }
  ASSERT_TRUE(a.may_send(3, frag(FragType::kData, 0, 42), chunk));
  a.sent(3);
  // The next chunk was ready when the first left the first link: due one chunk's time later,
  // not a whole route latency after it was offered.
  a.may_send(3, frag(FragType::kData, chunk, 42), chunk);
  EXPECT_EQ(a.next_due(), due + chunk);
  // Another message's first chunk is ready only now.
  a.sent(3);
  const uint64_t t0 = now_ns();
  a.may_send(3, frag(FragType::kData, 0, 43), chunk);
  EXPECT_GE(a.next_due(), t0 + chunk + 2 * 20000);
}

TEST(Links, AnEmptyFragmentPaysTheHopsAndTakesNoLink) {
  topo::Machine m = model("torus:2x2:cores=1:link=1,20");
  std::vector<LinkSlot> slots(link_slots(m));
  Links a;
  a.attach(m, 0, kFour, slots.data(), static_cast<int>(slots.size()), true);
  const uint64_t t0 = now_ns();
  EXPECT_FALSE(a.may_send(3, frag(FragType::kRts), 0));
  EXPECT_GE(a.next_due(), t0 + 2 * 20000);
  EXPECT_LE(a.next_due(), now_ns() + 2 * 20000);
  for (const LinkSlot& s : slots) EXPECT_EQ(s.busy_until.load(), 0u);
}

}  // namespace
}  // namespace torusmpi::pml::shm
