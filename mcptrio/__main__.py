"""``python -m mcptrio``: the ``mcptrio`` command (see :mod:`mcptrio.cli`)."""

import sys

from mcptrio.cli import main

if __name__ == "__main__":
    sys.exit(main())
