"""The benchmark servers: one ``add`` tool each, runnable as stdio server scripts."""
