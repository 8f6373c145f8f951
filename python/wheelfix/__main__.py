"""`python -m wheelfix ARGS` runs the wheelfix binary with ARGS (and its exit status)."""
import os
import sys

from wheelfix import binary


def main():
    try:
        path = binary()
    except FileNotFoundError as error:
        print(error, file=sys.stderr)
        return 2
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
