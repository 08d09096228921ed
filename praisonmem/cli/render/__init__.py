"""Long human views, each rendered from what one core call returned: session transcripts and search
hits (:mod:`.transcript`), Upsonic sessions and user memory (:mod:`.upsonic`)."""
