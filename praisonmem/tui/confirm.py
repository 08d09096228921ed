"""The confirmation modal of the browser's write actions: the plan, the question, then yes or no.

It shows what the command's ``--dry-run`` prints (the plan's lines, worded by ``cli/output.py``'s
``change_line``) and the command's own question; Enter or ``y`` answers yes, Esc or ``n`` no. Every text in it
comes from a session (ids, titles, file names) or a ``--store`` URL and is shown escaped and as plain text: no
control character reaches the terminal, no ``[markup]`` in a title is read as style, and no password is shown.

A yes by key counts only once the box has been on screen for :data:`ARM_SECONDS`: the form before it is submitted
with Enter too, and a double-tapped Enter must not answer a question nobody has read. A no counts at once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from praisonmem.core.io.pgurl import mask
from praisonmem.core.io.safetext import printable


ARM_SECONDS = 0.4  # a second Enter of a double tap comes within this; a reading eye does not


def plain(text: str) -> Text:
    """``text`` escaped (core/io/safetext.py) as a Rich ``Text``: shown as it is, never read as markup; a
    database password in it (a ``--store`` URL) masked, as every message of praisonmem masks it."""
    return Text("\n".join(printable(mask(line)) for line in text.split("\n")))


class ConfirmScreen(ModalScreen[bool]):
    """The plan and its question; dismissed with ``True`` (Enter, ``y``, the Yes button) or ``False``."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 90%; max-width: 100; height: auto; max-height: 90%;
                               border: thick $warning; background: $surface; padding: 0 1; }
    ConfirmScreen .title { text-style: bold; }
    ConfirmScreen .plan { margin: 1 0 0 0; }
    ConfirmScreen .question { margin: 1 0 0 0; text-style: bold; }
    ConfirmScreen Horizontal { height: auto; margin: 1 0 0 0; }
    ConfirmScreen Button { margin: 0 2 0 0; }
    """
    BINDINGS = [Binding("enter,y", "answer(True)", "Yes", priority=True),
                Binding("escape,n", "answer(False)", "No", priority=True)]

    def __init__(self, title: str, plan: Sequence[str], question: str, *, about: str | None = None) -> None:
        super().__init__()
        self.title_text, self.plan, self.question, self.about = title, list(plan), question, about

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(plain(self.title_text), classes="title", id="confirm-title")
            if self.about:
                yield Static(plain(self.about), classes="about", id="confirm-about")
            yield Static(plain("\n".join(self.plan)), classes="plan", id="confirm-plan")
            yield Static(plain(self.question), classes="question", id="confirm-question")
            with Horizontal():
                # Not focusable: Enter always answers the question, whichever button a click last touched.
                yes, no = Button("Yes (Enter/y)", variant="warning", id="yes"), Button("No (Esc/n)", id="no")
                yes.can_focus = no.can_focus = False
                yield yes
                yield no

    def on_mount(self) -> None:
        self.shown_at = time.monotonic()

    @property
    def armed(self) -> bool:
        """Whether a yes by key counts yet (see :data:`ARM_SECONDS`)."""
        return time.monotonic() - getattr(self, "shown_at", time.monotonic()) >= ARM_SECONDS

    def action_answer(self, agreed: bool) -> None:
        if agreed and not self.armed:
            return  # the tail of a double tap, not an answer
        self.dismiss(agreed)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")
