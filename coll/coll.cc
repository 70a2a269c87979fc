// The collectives' names and traits, as their descriptors (coll/collective.h) give them.
#include "coll/coll.h"

#include <cstring>

#include "coll/collective.h"

namespace torusmpi::coll {

const char* coll_name(Coll c) {
  int i = static_cast<int>(c);
  return i >= 0 && i < kCollCount ? collective(c).name : "?";
}

bool coll_from_name(const char* name, Coll* out) {
  for (int i = 0; i < kCollCount; ++i) {
    if (std::strcmp(name, collective(static_cast<Coll>(i)).name) == 0) {
      *out = static_cast<Coll>(i);
      return true;
    }
  }
  return false;
}

bool coll_reduces(Coll c) { return collective(c).reduces(); }
bool coll_rooted(Coll c) { return collective(c).rooted(); }
bool coll_vector(Coll c) { return collective(c).vector(); }
bool coll_neighbor(Coll c) { return collective(c).neighbor(); }

}  // namespace torusmpi::coll
