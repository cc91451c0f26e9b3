"""`python -m bot.cli …`, the same as `regbot …`."""

import sys

from bot.cli.cli import main

if __name__ == "__main__":
    sys.exit(main())
