"""The praisonmem library: plain Python over PraisonAI's and Upsonic's files.

Nothing here imports Typer or Rich. Functions raise :class:`PraisonMemError`
subclasses, each carrying the exit code the CLI maps it to.
"""
