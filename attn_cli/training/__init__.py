"""Learning W_Q, W_K, W_V and W_O of one attention layer over frozen static vectors (`attn-cli train`)."""
