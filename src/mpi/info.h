// Info objects (MPI_Info): keys and values that hint, for the calls that take them and for the
// objects that keep them (communicators, and later windows and files).
#ifndef TORUSMPI_MPI_INFO_H_
#define TORUSMPI_MPI_INFO_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mpi/ompi_abi.h"

namespace torusmpi::mpi {

// What an MPI_Info handle points to: keys in the order they were first set, which is the order
// MPI_Info_get_nthkey numbers them in. Keys and values are checked by the MPI calls, not here.
class Info {
 public:
  // The value of key, or nullptr.
  const std::string* find(std::string_view key) const;
  void set(std::string_view key, std::string_view value);
  // False when key was not set.
  bool erase(std::string_view key);
  int size() const { return static_cast<int>(entries_.size()); }
  const std::string& key(int n) const { return entries_[static_cast<size_t>(n)].first; }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
};

// The Info behind a handle: nullptr for MPI_INFO_NULL, a freed info or another kind of handle.
// MPI_INFO_ENV is filled the first time it is asked for.
Info* info_impl(MPI_Info info);

// A new info handle holding a copy of `from` (nullptr: empty), and the end of one: what
// MPI_Info_dup and MPI_Info_free do, for code that keeps an application's hints without the MPI
// calls' argument checks. info_free ignores MPI_INFO_NULL and the predefined MPI_INFO_ENV.
MPI_Info info_new(const Info* from);
void info_free(MPI_Info info);

// The value of key in info; false when info is MPI_INFO_NULL (or not an info) or has no such key.
bool info_value(MPI_Info info, std::string_view key, std::string* value);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_INFO_H_
