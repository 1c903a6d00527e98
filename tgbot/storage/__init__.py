"""Redis beyond one game's commit: connection (Cluster, Sentinel), schema migrations,
statistics and moving a chat's data when a group becomes a supergroup."""
