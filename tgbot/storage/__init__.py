"""Redis beyond one game's commit: the connection (redis, sentinel), the key and field layout
(keys), the records beside the tables (records), statistics (stats), migrations (migrate), a group's upgrade (chatmove)."""
