"""The Typer/Rich skin over :mod:`praisonmem.core`: parse options, call one core
function, render what it returns. No file logic lives here."""
