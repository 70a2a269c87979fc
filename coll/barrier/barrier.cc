// barrier: no rank leaves before every rank has entered. No data, no buffers; the simulator
// checks that each rank has heard, directly or through others, from every rank before it leaves.
#include "coll/collective.h"

namespace torusmpi::coll::collectives {

extern const Collective kBarrier = {Coll::kBarrier,
                                    "barrier",
                                    /*traits=*/kSynchronizes,
                                    /*send_bytes=*/no_buffer,
                                    /*recv_bytes=*/no_buffer,
                                    /*selection_bytes=*/count_bytes,
                                    /*own_in_recv=*/nothing_in_recv,
                                    /*expect=*/expect_nothing,
                                    CallArrays::kNone,
                                    SizeIs::kCount,
                                    /*bus_factor=*/bus_factor_one};

}  // namespace torusmpi::coll::collectives
