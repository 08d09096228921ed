"""The input forms of the browser's write actions: what a command takes as arguments, asked for on screen.

* :class:`RenameForm` (``r``): the new id or the new title, each field filled with the current value; the one
  changed says which of ``session rename NEW_ID`` and ``session rename --title TEXT`` is meant.
* :class:`RedactForm` (``x``): the rule set, ``session redact --level``'s.
* :class:`ExportForm` (``e``): the output file and the format, ``session export -o FILE --format``'s.

Each is dismissed with what was asked for, or ``None`` (Esc): nothing else happens then. A value read from a
session (its title) fills a field only when it holds nothing a terminal acts on; else the field starts empty
and the escaped value is shown above it.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Select, Static
from textual.widgets.option_list import Option

from praisonmem.core.io.safetext import printable
from praisonmem.tui.confirm import plain

FORM_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{ width: 90%; max-width: 100; height: auto; max-height: 90%; border: thick $accent;
                    background: $surface; padding: 0 1; }}
{name} .title {{ text-style: bold; }}
{name} .label {{ margin: 1 0 0 0; }}
{name} .problem {{ color: $error; }}
{name} .hint {{ color: $text-muted; margin: 1 0 0 0; }}
{name} OptionList {{ height: auto; }}
"""


def shown_value(value: str | None) -> str:
    """What a field starts with: ``value`` when it shows as it is, else nothing (it is shown escaped instead)."""
    return value if value is not None and printable(value) == value else ""


class _Form(ModalScreen):
    """A form: Esc dismisses it with ``None``; a problem is said in its ``#problem`` line and keeps it open."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", priority=True)]

    def action_cancel(self) -> None:
        self.dismiss(None)

    def problem(self, message: str) -> None:
        self.query_one("#problem", Static).update(plain(message))


@dataclass(frozen=True)
class Rename:
    """What :class:`RenameForm` asked for: ``new_id`` (rename) or ``title`` (retitle; blank clears it)."""

    new_id: str | None = None
    title: str | None = None


class RenameForm(_Form):
    DEFAULT_CSS = FORM_CSS.format(name="RenameForm")

    def __init__(self, session_id: str, title: str | None) -> None:
        super().__init__()
        self.session_id, self.title_now = session_id, title
        self.id_start, self.title_start = shown_value(session_id), shown_value(title)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(plain(f"Rename or retitle session '{self.session_id}'"), classes="title")
            yield Static(plain("New id (session rename NEW_ID):"), classes="label")
            yield Input(self.id_start, id="new-id", select_on_focus=False)
            if self.title_now and not self.title_start:
                yield Static(plain(f"Its title now: {self.title_now}"), classes="label", id="title-now")
            yield Static(plain("Title (session rename --title; empty clears it):"), classes="label")
            yield Input(self.title_start, id="new-title", select_on_focus=False)
            yield Static("", classes="problem", id="problem")
            yield Static(plain("Change one field, then Enter; Esc cancels"), classes="hint")

    def on_mount(self) -> None:
        self.query_one("#new-id", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        new_id, title = self.query_one("#new-id", Input).value, self.query_one("#new-title", Input).value
        id_changed, title_changed = new_id != self.id_start, title != self.title_start
        if id_changed and title_changed:
            self.problem("give NEW_ID to rename the session, or --title TEXT to set its title (not both)")
        elif id_changed:
            self.dismiss(Rename(new_id=new_id))
        elif title_changed:
            self.dismiss(Rename(title=title))
        else:
            self.problem("nothing changed: edit the id to rename the session, or the title to retitle it")


LEVELS = (("standard", "standard: API keys, tokens, passwords, private keys, e-mail addresses, phone numbers"),
          ("strict", "strict: standard, national phone numbers and any high-entropy token"))


class RedactForm(_Form):
    """Dismissed with the level's name (``session redact --level``)."""

    DEFAULT_CSS = FORM_CSS.format(name="RedactForm")

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(plain(f"Redact the secrets of session '{self.session_id}'"), classes="title")
            yield Static(plain("The rule set (session redact --level):"), classes="label")
            yield OptionList(*(Option(text, id=name) for name, text in LEVELS), id="level")
            yield Static("", classes="problem", id="problem")
            yield Static(plain("Up/Down, then Enter; Esc cancels"), classes="hint")

    def on_mount(self) -> None:
        levels = self.query_one("#level", OptionList)
        levels.highlighted = 0
        levels.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)


FORMATS = ("json", "jsonl", "markdown", "openai-jsonl", "sharegpt")  # session export --format's values
EXTENSIONS = {"json": ".json", "jsonl": ".jsonl", "markdown": ".md", "openai-jsonl": ".jsonl", "sharegpt": ".json"}


@dataclass(frozen=True)
class Export:
    """What :class:`ExportForm` asked for: the output file as typed and the format."""

    output: str
    format: str


class ExportForm(_Form):
    DEFAULT_CSS = FORM_CSS.format(name="ExportForm")

    def __init__(self, session_id: str, default_stem: str) -> None:
        super().__init__()
        self.session_id, self.stem = session_id, default_stem

    def default_path(self, fmt: str) -> str:
        return self.stem + EXTENSIONS[fmt]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(plain(f"Export session '{self.session_id}'"), classes="title")
            yield Static(plain("Format (session export --format):"), classes="label")
            yield Select([(f, f) for f in FORMATS], value="json", allow_blank=False, id="format")
            yield Static(plain("Output file (session export -o; relative to the directory browse started in):"),
                         classes="label")
            yield Input(self.default_path("json"), id="output", select_on_focus=False)
            yield Static("", classes="problem", id="problem")
            yield Static(plain("Tab moves between the fields; Enter in the file name exports; Esc cancels"),
                         classes="hint")

    def on_mount(self) -> None:
        self.query_one("#output", Input).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        """A new format changes the suggested file's extension while the name is still the suggested one."""
        event.stop()
        output = self.query_one("#output", Input)
        if any(output.value == self.default_path(f) for f in FORMATS):
            output.value = self.default_path(str(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        output = self.query_one("#output", Input).value.strip()
        if not output:
            self.problem("the output file name is empty (give a file name)")
            return
        self.dismiss(Export(output=output, format=str(self.query_one("#format", Select).value)))
