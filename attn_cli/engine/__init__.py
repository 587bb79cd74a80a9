"""The engine: pure numpy attention and its analysis, speaking Python values only (no flags, no Rich)."""
