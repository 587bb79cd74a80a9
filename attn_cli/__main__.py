"""`python -m attn_cli` runs the same command line as the `attn-cli` script."""

from attn_cli.cli import main

if __name__ == "__main__":
    main()
