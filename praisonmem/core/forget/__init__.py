"""Forget a person, a session or an agent in every store, with a proof that nothing is left."""
