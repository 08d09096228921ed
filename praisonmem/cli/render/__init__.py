"""Long human views, each rendered from what one core call returned: session list's table
(:mod:`.sessions`), session transcripts and search hits (:mod:`.transcript`), Upsonic sessions and user
memory (:mod:`.upsonic`), the usage report (:mod:`.usage`), secret findings (:mod:`.secrets`), and tables
that fit the terminal (:mod:`.table`)."""
