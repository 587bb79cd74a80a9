"""Learning an attention layer: the corpus, the training loop, its evaluation and the weights file."""
