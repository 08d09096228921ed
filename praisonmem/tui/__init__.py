"""``praisonmem browse``: a Textual terminal UI over the core (the ``tui`` extra).

A layer beside :mod:`praisonmem.cli`: it imports the core and ``cli/render``'s plain helpers; neither the core
nor the CLI imports it, except ``cli/commands/browse.py``, inside the command. :mod:`.model` is what is selected
and the write actions' hook; :mod:`.app` the application.
"""
