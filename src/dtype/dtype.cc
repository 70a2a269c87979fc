// Placeholder while the datatype engine is being written.
namespace torusmpi::dtype {}
