"""`python -m attn_cli` runs the same command line as the `attn-cli` script."""

from attn_cli.cli import run

if __name__ == "__main__":
    run()
