"""praisonmem: a command-line memory manager for PraisonAI agents."""

__version__ = "0.1.0"
