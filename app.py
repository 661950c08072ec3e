"""Sharnir: `python app.py [SCENE] [options]` — see shell/cli.py or `--help`."""
import sys

from shell.cli import main

if __name__ == "__main__":
    sys.exit(main())
