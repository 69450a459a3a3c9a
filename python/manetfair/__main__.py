"""`python -m manetfair` is the `manetfair` command."""

import sys

from manetfair.cli import main

sys.exit(main())
