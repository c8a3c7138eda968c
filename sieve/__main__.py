"""`python -m sieve` is the `sieve` command."""

from sieve.cli import main

if __name__ == "__main__":
    main()
