// Intercommunicators. [Being written.]
