// Groups. [Being written.]
