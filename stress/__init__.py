"""The stress suite: mcptrio under the attacks of issue 20, each a bounded loopback-only script.

Run everything with ``python -m stress`` (or ``python -m stress --short`` for the CI version, or
name attacks: ``python -m stress stdio-ping-flood smuggling``). Each attack starts a server in
a child process (``stress.server``), attacks it from this process, watches the child's peak
RSS, and prints one line of figures. Not part of the unit tests; see
docs/explanation/hostile-peers.md.
"""
