"""The shared core every tool stands on: results, registry types, sessions, settings, the path
jail, atomic writes, text files and result capping."""
