"""`python -m physics.bench`: see physics/bench/__init__.py."""
import sys

from . import main

sys.exit(main())
