"""File and time plumbing every store shares; any core package may import these modules directly.

* :mod:`~praisonmem.core.io.jsonfile`: the one reader and writer of PraisonAI JSON files
  (the library's flock, re-read under the lock, atomic replace, byte-identical serialisation);
* :mod:`~praisonmem.core.io.sqlite`: read-only and writer connections to SQLite files;
* :mod:`~praisonmem.core.io.outfile`: the one rule for every ``-o FILE``;
* :mod:`~praisonmem.core.io.parallel`: the fork pool that reads thousands of files;
* :mod:`~praisonmem.core.io.safetext`: text from users' files made safe to show;
* :mod:`~praisonmem.core.io.timeutil`: the clock, timestamps and durations.
"""
