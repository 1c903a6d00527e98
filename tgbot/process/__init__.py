"""The composition root of a bot process: the lease, stand-by, take-over and stepping down."""
