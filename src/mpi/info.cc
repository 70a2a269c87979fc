// Info objects. [Being written.]
