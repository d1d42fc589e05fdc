"""``python -m ren.testing``: the conformance kit's command (see ``ren.testing``)."""

import faulthandler
import sys

from ren.testing.cli import main

if __name__ == "__main__":
    faulthandler.enable()  # a crash inside a kernel prints the Python stack
    sys.exit(main())
