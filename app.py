"""Sharnir: `python app.py [SCENE] [options]` — see physics/cli.py or `--help`."""
import sys

from physics.cli import main

if __name__ == "__main__":
    sys.exit(main())
