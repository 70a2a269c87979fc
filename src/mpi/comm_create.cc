// Communicator creation. [Being written.]
