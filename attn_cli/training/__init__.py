"""Learning W_Q, W_K, W_V and W_O of one attention layer over frozen static vectors (`attn-cli train`): the corpus,
the training loop, its evaluation and the weights file."""
