"""praisonmem: a command-line memory manager for PraisonAI agents."""

__version__ = "0.1.0"

# True in praisonmem's own console script (set by __main__.entry), whose start-up froze what its imports built
# (gc.freeze) only for speed; a program importing praisonmem leaves it False, and praisonmem then never unfreezes
# objects that program froze (core.io.fastjson.to_oldest).
CLI = False
