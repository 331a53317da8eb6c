"""``python -m roost``: the ``roost`` command, for when the console script is not on the PATH."""

from roost.entry import main

if __name__ == "__main__":
    main()
