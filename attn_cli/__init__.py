"""attn-cli: see self-attention at work on static word vectors, every number of it."""

__version__ = "0.1.0"
