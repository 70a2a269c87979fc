// The shared file pointer's file (src/io/shared_fp.h): processes that fetch-and-add at the same
// time each get a different old position and none is lost; the name is gone once unlinked while
// the opened descriptors still share the counter; a second create of one name fails (O_EXCL).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/shared_fp.h"

namespace torusmpi::io {
namespace {

std::string temp_dir() {
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t != nullptr ? t : "/tmp") + "/shfp_test.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  return mkdtemp(buf.data()) != nullptr ? std::string(buf.data()) : std::string();
}

TEST(IoSharedPointer, ConcurrentProcessesLoseNoUpdate) {
  std::string dir = temp_dir();
  ASSERT_FALSE(dir.empty());
  std::string name = SharedPointer::name_for(dir + "/data.bin", 7, 1);
  EXPECT_EQ(name, dir + "/.data.bin.shfp.7.1");
  SharedPointer owner;
  std::string error;
  ASSERT_TRUE(owner.create(name, &error)) << error;
  SharedPointer again;
  EXPECT_FALSE(again.create(name, &error)) << "O_EXCL";
  EXPECT_NE(error.find("File exists"), std::string::npos) << error;

  // 4 processes, 200 increments of 3 each; each writes the old values it got to a pipe.
  constexpr int kProcs = 4, kEach = 200;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::vector<pid_t> kids;
  for (int i = 0; i < kProcs; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      SharedPointer p;
      std::string e;
      if (!p.open(name, &e)) _exit(2);
      for (int k = 0; k < kEach; ++k) {
        int64_t old = -1;
        if (!p.fetch_add(3, &old, &e)) _exit(3);
        if (write(fds[1], &old, sizeof old) != static_cast<ssize_t>(sizeof old)) _exit(4);
      }
      _exit(0);
    }
    kids.push_back(pid);
  }
  close(fds[1]);
  std::vector<int64_t> olds;
  int64_t v;
  while (read(fds[0], &v, sizeof v) == static_cast<ssize_t>(sizeof v)) olds.push_back(v);
  close(fds[0]);
  for (pid_t pid : kids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  ASSERT_EQ(olds.size(), static_cast<size_t>(kProcs * kEach));
  std::sort(olds.begin(), olds.end());
  for (size_t i = 0; i < olds.size(); ++i) EXPECT_EQ(olds[i], static_cast<int64_t>(3 * i));
  int64_t now = -1;
  ASSERT_TRUE(owner.fetch_add(0, &now, &error)) << error;
  EXPECT_EQ(now, 3 * kProcs * kEach);

  // Unlinked: the name is gone, the counter still shared by the open descriptors.
  SharedPointer other;
  ASSERT_TRUE(other.open(name, &error)) << error;
  owner.unlink_name();
  struct stat st;
  EXPECT_NE(stat(name.c_str(), &st), 0);
  ASSERT_TRUE(other.set(42, &error)) << error;
  ASSERT_TRUE(owner.fetch_add(1, &now, &error)) << error;
  EXPECT_EQ(now, 42);
  owner.close();
  other.close();
  EXPECT_EQ(rmdir(dir.c_str()), 0) << "nothing left in the directory";
}

}  // namespace
}  // namespace torusmpi::io
