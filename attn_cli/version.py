"""The version of attn-cli: one place, read by the build (pyproject.toml) and shown by --version."""

__version__ = "0.1.0"
