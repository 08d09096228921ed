"""One module per command group: ``praisonmem X verb`` is ``praisonmem.cli.commands.X``.

Each module parses its options, calls one function of ``praisonmem.core.X`` (its public API) and renders
what it returns through ``praisonmem.cli.output``; none holds file logic (tests/test_import_rules.py).
"""
