"""``praisonmem browse``: the application (Textual).

Left, the tree of what the home holds (:func:`praisonmem.tui.source.tree`); middle, the rows of the selected
node (:class:`~praisonmem.tui.rowlist.RowList`, drawn a line at a time); right, the selected item as its
``show`` command renders it, and for a session a second tab, "next turn" (``session show --working``). Below
100 columns the list and the item take turns: Enter opens the item, Esc goes back.

Every read runs in a daemon thread (:meth:`BrowseApp.background`), so a long listing or search never blocks
keys and never holds up quitting; each result comes back to the event loop with ``call_from_thread`` and is
dropped when a newer request has been made since. Every string from a store reaches the screen as plain Rich
``Text`` escaped by ``core/io/safetext.py`` (never as Textual or Rich markup).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.actions import SkipAction
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Label, Static, TabbedContent, TabPane, Tree

from praisonmem.core.errors import PraisonMemError
from praisonmem.core.io.safetext import printable
from praisonmem.tui import source
from praisonmem.tui.model import ACTION_KEYS, Selection
from praisonmem.tui.rowlist import RowList

SEARCH_DELAY = 0.25  # seconds of no typing before a search starts (results as you type, not a search per key)
SEARCH_LIMIT = 200  # hits listed, best first (session search --limit)
NARROW = 100  # below this many columns the list and the item take turns
HIT_COLUMNS = (("SESSION", 30), ("TURN", 6), ("ROLE", 9), ("SCORE", 5), ("SNIPPET", 40), ("STORE", 12))

KEYS = [  # the full map ``?`` shows (the footer shows the common ones)
    ("↑ ↓ j k, PgUp PgDn, g G", "move in the list; the item follows"),
    ("Enter", "open the item (its transcript); in the tree, list the node"),
    ("Esc", "back: close the search, the item, or the filter"),
    ("Tab, Shift-Tab", "next, previous pane"),
    ("/", "search the selected stores (session search: results as you type)"),
    ("f", "filter sessions: agent, user, scope, store, since"),
    ("t", "switch between the transcript and \"next turn\" (the working history)"),
    ("w", "follow the open session live (session watch); w again stops"),
    ("r", "rename or retitle the session"),
    ("d", "delete the selected item"),
    ("x", "redact secrets from the session"),
    ("e", "export the session to a file"),
    ("F5, Ctrl-R", "read the home again"),
    ("?", "this map"),
    ("q, Ctrl-C", "quit (Ctrl-C exits 130)"),
]


def plain(text: Any, style: str = "") -> Text:
    """A value from a store as Rich ``Text``: escaped, never markup."""
    return Text(printable("" if text is None else str(text)), style=style)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 80%; max-width: 90; height: 80%; border: round $accent; padding: 0 1;
                                  background: $surface; }
    """

    def compose(self) -> ComposeResult:
        text = Text()
        text.append("praisonmem browse — keys\n\n", style="bold")
        for keys, what in KEYS:
            text.append(f"{keys:<26}", style="bold")
            text.append(f"{what}\n")
        text.append("\nReading changes nothing in the home. The mouse selects rows and nodes; a double click opens.")
        with VerticalScroll():
            yield Static(text, id="keymap")


class FilterScreen(ModalScreen["source.Filters | None"]):
    """``f``: the session filters, as ``session list`` takes them (and ``--since`` as ``usage`` does)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    FilterScreen { align: center middle; }
    FilterScreen > Vertical { width: 60; height: auto; border: round $accent; padding: 0 1; background: $surface; }
    FilterScreen Input { margin: 0 0 0 0; }
    """
    FIELDS = (("agent", "agent name"), ("user", "user id"), ("scope", "workspace, global, legacy, other, explicit"),
              ("store", "json, sessions.db, project:<id>, unified, legacy-run"),
              ("since", "7d, 12h, 2w, a day YYYY-MM-DD or an ISO date-time (UTC)"))

    def __init__(self, current: source.Filters) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text("Filter sessions (Enter applies, empty fields match all, Esc cancels)", style="bold"))
            for name, hint in self.FIELDS:
                yield Input(value=getattr(self.current, name) or "", placeholder=f"{name}: {hint}",
                            id=f"filter-{name}")

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted)
    def apply(self) -> None:
        values = {name: self.query_one(f"#filter-{name}", Input).value.strip() or None for name, _ in self.FIELDS}
        self.dismiss(source.Filters(**values))


class BrowseApp(App[None]):
    """The browser over ``options`` (:class:`praisonmem.tui.source.Options`)."""

    TITLE = "praisonmem browse"
    ENABLE_COMMAND_PALETTE = False  # every command is a key (? lists them); ^p would only take footer room
    CSS = """
    #status { height: 1; background: $panel; padding: 0 1; }
    #tree { width: 26; border-right: solid $panel-lighten-2; }
    #middle { width: 5fr; }
    #detail { width: 4fr; border-left: solid $panel-lighten-2; }
    #search { height: 1; border: none; padding: 0 1; background: $panel; }
    #search:focus { border: none; background: $boost; }
    .narrow #tree { width: 22; }
    .narrow #detail { display: none; }
    .narrow.opened #detail { display: block; border-left: none; }
    .narrow.opened #middle { display: none; }
    """
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "interrupt", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Keys"),
        # "/" and the Enter that leaves the search box are the app's own (priority) keys: handled as the app
        # takes each key from the terminal, so the focus has moved before the next key (often in the same read:
        # "/alfama", Enter Enter typed or sent quickly) is handed to the focused widget
        Binding("slash", "search", "Search", priority=True),
        Binding("enter", "leave_search", show=False, priority=True),
        Binding("f", "filter", "Filter"),
        Binding("w", "follow", "Follow"),
        Binding("t", "switch_tab", "Next turn", show=False),
        Binding("escape", "back", "Back"),
        Binding("r", "act('r')", "Rename"),
        Binding("d", "act('d')", "Delete"),
        Binding("x", "act('x')", "Redact"),
        Binding("e", "act('e')", "Export"),
        Binding("f5,ctrl+r", "reload", "Reload", show=False),
    ]

    def __init__(self, options: source.Options) -> None:
        super().__init__()
        self.options = options
        self.filters = source.Filters()
        self.nodes: list[source.Node] = []
        self.node: source.Node | None = None  # the node whose rows the list shows
        self.hits: list[dict[str, Any]] | None = None  # search results, while the search is open
        self.selected: Selection | None = None
        self.row: dict[str, Any] | None = None
        self._generation = {"tree": 0, "rows": 0, "detail": 0, "search": 0}
        self._search_timer: Any = None
        self._follow: threading.Event | None = None
        self.followed: str | None = None
        self.panes = {"show": "", "working": ""}  # the detail panes' text, as shown (tests read it)
        self.shown_item: Selection | None = None  # whose they are
        self.anchor: str | None = None  # the turn a search hit opens the transcript at
        self.crash: BaseException | None = None  # what ended the app, when a bug did
        self.loaded = threading.Event()  # set once the first listing is on screen (tests and benchmarks wait on it)

    # -- layout ------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with Horizontal(id="panes"):
            yield Tree(Text("home"), id="tree")
            with Vertical(id="middle"):
                yield RowList(id="list")
                yield Input(placeholder="/ search the selected stores", id="search")
            with TabbedContent(id="detail"):
                with TabPane("transcript", id="tab-show"):
                    with VerticalScroll(id="scroll-show"):
                        yield Static(id="show")
                with TabPane("next turn", id="tab-working"):
                    with VerticalScroll(id="scroll-working"):
                        yield Static(id="working")
        yield Footer()

    def on_mount(self) -> None:
        tree = self.query_one("#tree", Tree)
        tree.show_root = False
        self._layout(self.size.width)
        self.status("reading the home…")
        self.reload()
        self.query_one("#list", RowList).focus()

    def on_resize(self, event: Any) -> None:
        self._layout(event.size.width)

    def _layout(self, width: int) -> None:
        self.screen.set_class(width < NARROW, "narrow")

    def status(self, message: str) -> None:
        """The top line: what just happened, the filter, what is followed, then the home (cut first)."""
        line = Text(message, style="bold") if message else Text()
        if self.filters.active():
            line.append(f"  filter: {printable(self.filters.describe())}", style="yellow")
        if self.followed is not None:
            line.append(f"  following {printable(self.followed)}", style="green")
        line.append(f"  {printable(str(self.options.paths.data.path))}", style="dim")
        self.query_one("#status", Static).update(line)

    # -- background reads ----------------------------------------------------------------------------------

    def background(self, what: str, work: Callable[[], Any], done: Callable[[Any], None]) -> None:
        """Run ``work`` in a daemon thread and hand its result (or its one-line error) to ``done`` on the event
        loop, unless another ``what`` was asked for since."""
        self._generation[what] += 1
        generation = self._generation[what]

        def run() -> None:
            try:
                result: Any = work()
            except PraisonMemError as exc:
                result = exc
            except Exception as exc:  # a bug: said in one line, the browser keeps running
                result = PraisonMemError(f"internal error: {type(exc).__name__}: {exc}")
            try:
                self.call_from_thread(self._deliver, what, generation, done, result)
            except RuntimeError:
                pass  # the app has exited

        threading.Thread(target=run, name=f"browse-{what}", daemon=True).start()

    def _deliver(self, what: str, generation: int, done: Callable[[Any], None], result: Any) -> None:
        if generation == self._generation[what]:
            done(result)

    # -- the tree ----------------------------------------------------------------------------------------

    def reload(self, keep: str | None = None) -> None:
        self.background("tree", lambda: source.tree(self.options, self.filters),
                        lambda result: self._tree_loaded(result, keep))

    def action_reload(self) -> None:
        self.status("reading the home…")
        self.reload(self.selected.item if self.selected else None)

    def _tree_loaded(self, result: Any, keep: str | None) -> None:
        if isinstance(result, PraisonMemError):
            self.status("")
            self.error(str(result))
            return
        nodes, _rows = result
        current_path = self._node_path(self.node) if self.node is not None else None  # before the nodes change
        self.nodes = nodes
        tree = self.query_one("#tree", Tree)
        tree.clear()
        for node in nodes:
            branch = tree.root.add(self._label(node), data=node, expand=True)
            self._add_children(branch, node)
        target = self._find_node(current_path) if current_path else None
        self.node = target if target is not None and target.kind is not None else nodes[0]
        self.show_node(self.node, keep=keep)
        self.status(self._summary())

    def _add_children(self, branch: Any, node: source.Node) -> None:
        for child in node.children:
            leaf = branch.add(self._label(child), data=child, expand=False)
            self._add_children(leaf, child)
            if not child.children:
                leaf.allow_expand = False

    def _label(self, node: source.Node) -> Text:
        label = plain(node.title())
        if node.problem:
            label.append(" !", style="bold red")
        return label

    def _node_path(self, node: source.Node) -> tuple[str, ...]:
        for top in self.nodes:
            found = self._path_in(top, node, ())
            if found:
                return found
        return (node.label,)

    def _path_in(self, at: source.Node, node: source.Node, path: tuple[str, ...]) -> tuple[str, ...] | None:
        here = (*path, at.label)
        if at is node:
            return here
        for child in at.children:
            found = self._path_in(child, node, here)
            if found:
                return found
        return None

    def _find_node(self, path: tuple[str, ...]) -> source.Node | None:
        level = self.nodes
        found = None
        for label in path:
            found = next((n for n in level if n.label == label), None)
            if found is None:
                return None
            level = found.children
        return found

    def _summary(self) -> str:
        counts = [f"{n.label.lower()} {n.count}" for n in self.nodes if n.count is not None]
        return "  ".join(counts) + "   ? keys"

    @on(Tree.NodeSelected, "#tree")
    def _tree_selected(self, event: Tree.NodeSelected) -> None:
        node = event.node.data
        if isinstance(node, source.Node):
            if node.problem:
                self.error(node.problem)
            if node.kind is not None or node.load is not None:
                self.close_search()
                self.node = node
                self.show_node(node)
                self.query_one("#list", RowList).focus()

    def show_node(self, node: source.Node, keep: str | None = None) -> None:
        """List ``node``'s rows (a memory tier or learn store is read now, in the background)."""
        if node.kind is None:
            return
        self.background("rows", lambda: list(source.rows_of(node)), lambda rows: self._rows_loaded(node, rows, keep))

    def _rows_loaded(self, node: source.Node, rows: Any, keep: str | None) -> None:
        if isinstance(rows, PraisonMemError):
            self.error(str(rows))
            rows = []
        kind = node.kind or "session"
        node_rows = rows
        cursor = 0
        if keep is not None:
            cursor = next((i for i, r in enumerate(node_rows) if source.item_id(kind, r) == keep),
                          self._cursor_near())
        listing = self.query_one("#list", RowList)
        listing.show(node_rows, source.COLUMNS[kind], source.CELLS[kind], flex=source.FLEX[kind],
                     drop=source.DROP[kind], cursor=cursor, empty=node.problem or "nothing here",
                     style=lambda row: "red" if row.get("unreadable") else "yellow" if row.get("stale") else "")
        if not node_rows:
            self.selected, self.row = None, None
            self._clear_detail()
        self.loaded.set()

    def _cursor_near(self) -> int:
        return self.query_one("#list", RowList).cursor

    # -- the list and the item -----------------------------------------------------------------------------

    @on(RowList.Highlighted, "#list")
    def _highlighted(self, event: RowList.Highlighted) -> None:
        self._select(event.index)

    @on(RowList.Opened, "#list")
    def _opened(self, event: RowList.Opened) -> None:
        self._select(event.index)
        self.screen.add_class("opened")
        self.query_one("#scroll-show").focus()

    def _select(self, index: int) -> None:
        listing = self.query_one("#list", RowList)
        if not listing.rows:
            return
        row = listing.rows[index]
        self.anchor = None
        if self.hits is not None:  # a search hit: its session, scrolled to the turn that matched
            from praisonmem.cli.render.transcript import PREFIXES

            self.anchor = "summary" if row["section"] == "checkpoint" else \
                f"#{PREFIXES.get(row['section'], '')}{row['index']} "
            node = source.Node("session", "hit", store=row["store"])
            row = {"session_id": row["session_id"], "store": row["store"], "unreadable": False, "title": None}
        else:
            assert self.node is not None
            node = self.node
        self.row = row
        self.selected = source.selection(self.options, node, row)
        self._stop_follow_if_other()
        self.render_detail()

    def render_detail(self) -> None:
        selected, row = self.selected, self.row
        if selected is None or row is None:
            return
        width = max(40, self.query_one("#detail").size.width - 4 or 80)

        def work() -> tuple[Any, Any]:
            shown = source.detail(selected, row, width=width)
            working = source.detail(selected, row, working=True, width=width) \
                if selected.kind == "session" and not row.get("unreadable") else None
            return shown, working

        self.background("detail", work, lambda result: self._detail_loaded(selected, result))

    def _detail_loaded(self, selected: Selection, result: Any) -> None:
        self.shown_item = selected
        show, working = self.query_one("#show", Static), self.query_one("#working", Static)
        if isinstance(result, PraisonMemError):
            self.panes = {"show": f"praisonmem: error: {result}", "working": ""}
            show.update(plain(f"praisonmem: error: {result}", style="red"))
            working.update("")
            return
        shown, next_turn = result
        self.panes = {"show": shown.plain(), "working": next_turn.plain() if next_turn is not None else ""}
        show.update(shown.renderable())
        working.update(next_turn.renderable() if next_turn is not None else
                       plain("(the working history is a session's)", style="dim"))
        scroll = self.query_one("#scroll-show", VerticalScroll)
        if self.followed is not None:
            scroll.scroll_end(animate=False)
        elif self.anchor is not None:
            self.call_after_refresh(self._scroll_to_anchor, shown.lines, self.anchor)
        else:
            scroll.scroll_home(animate=False)

    def _scroll_to_anchor(self, lines: list[Any], anchor: str, tries: int = 20) -> None:
        """Scroll the transcript to the heading of the turn ``anchor`` names (``#a2 ``: a search hit's turn),
        once the pane has laid out its new lines (it may have only just been shown)."""
        from rich.console import Group

        scroll = self.query_one("#scroll-show", VerticalScroll)
        width = self.query_one("#show", Static).content_region.width
        at = next((i for i, line in enumerate(lines) if isinstance(line, Text)
                   and line.plain.removeprefix("── ").startswith(anchor)), None)
        if at is None:
            return
        y = len(self.console.render_lines(Group(*lines[:at]), self.console.options.update_width(max(1, width)),
                                          pad=False)) if at else 0
        if (width <= 0 or scroll.max_scroll_y < min(y, scroll.virtual_size.height - scroll.size.height)) \
                and tries:
            self.set_timer(0.05, lambda: self._scroll_to_anchor(lines, anchor, tries - 1))
            return
        scroll.scroll_to(y=y, animate=False)

    def _clear_detail(self) -> None:
        self.panes = {"show": "", "working": ""}
        self.query_one("#show", Static).update("")
        self.query_one("#working", Static).update("")

    def action_switch_tab(self) -> None:
        tabs = self.query_one("#detail", TabbedContent)
        tabs.active = "tab-working" if tabs.active == "tab-show" else "tab-show"

    def refresh_selection(self, item: str | None = None) -> None:
        """After a write: read the home again, keep ``item`` (or the current row, or the one in its place)
        selected, and render it again."""
        self.reload(item if item is not None else self.selected.item if self.selected else None)

    # -- search ------------------------------------------------------------------------------------------

    def _typing(self) -> bool:
        """Whether a key is text for a box (a dialog's, the search box) rather than one of the browser's."""
        return isinstance(self.screen, ModalScreen) or isinstance(self.focused, Input)

    def action_search(self) -> None:
        if self._typing():
            raise SkipAction()  # "/" typed into a box is text
        # the box is always laid out, so it takes the focus at once (set_focus, not focus(), which waits a turn
        # of the event loop): the keys typed right after "/" are its
        box = self.query_one("#search", Input)
        box.add_class("visible")
        self.screen.remove_class("opened")
        self.screen.set_focus(box)
        if self.focused is not box:  # the list was hidden behind the item: focus once it is laid out again
            self.call_after_refresh(box.focus)

    def action_leave_search(self) -> None:
        """Enter in the search box: to the hits, at once (the next Enter opens one)."""
        box = self.query_one("#search", Input)
        if isinstance(self.screen, ModalScreen) or self.focused is not box:
            raise SkipAction()  # every other Enter is the focused widget's
        self.screen.set_focus(self.query_one("#list", RowList))

    @on(Input.Changed, "#search")
    def _typed(self, event: Input.Changed) -> None:
        if self._search_timer is not None:
            self._search_timer.stop()
        query = event.value
        self._search_timer = self.set_timer(SEARCH_DELAY, lambda: self.run_search(query))

    def search_store(self) -> Any:
        """The stores a search covers: the selected session store, else every store listed."""
        if self.options.store is not None:
            return self.options.store
        if self.node is not None and self.node.kind == "session" and self.node.store is not None:
            return self.node.store
        return self.filters.store or None

    def run_search(self, query: str) -> None:
        if not query.strip():
            self.background("search", lambda: None, lambda _: self._restore_list())
            return
        from praisonmem.core import sessions

        store = self.search_store()
        self.status(f"searching for {printable(query)!r}…")
        self.background("search", lambda: sessions.search_sessions(
            self.options.paths, query, limit=SEARCH_LIMIT, store=store, key=self.options.key),
            lambda result: self._found(query, result))

    def _found(self, query: str, result: Any) -> None:
        if isinstance(result, PraisonMemError):
            self.error(str(result))
            return
        self.hits = result.hits
        listing = self.query_one("#list", RowList)
        listing.show(result.hits, HIT_COLUMNS, _hit_cells, flex=4, drop=(5, 3), empty=f"no turn matches {printable(query)!r}")
        more = f" of {result.total}" if result.total > len(result.hits) else ""
        self.status(f"search {printable(query)!r}: {len(result.hits)}{more} hits")

    def _restore_list(self) -> None:
        self.hits = None
        if self.node is not None:
            self.show_node(self.node, keep=self.selected.item if self.selected else None)
        self.status(self._summary())

    def close_search(self) -> bool:
        box = self.query_one("#search", Input)
        if not box.has_class("visible"):
            return False
        if self._search_timer is not None:
            self._search_timer.stop()
        box.remove_class("visible")
        box.value = ""
        self._generation["search"] += 1
        if self.hits is not None:
            self._restore_list()
        self.query_one("#list", RowList).focus()
        return True

    # -- filter, follow, back, help, quit ------------------------------------------------------------------

    def action_filter(self) -> None:
        def chosen(filters: source.Filters | None) -> None:
            if filters is None:
                return
            if filters.since:
                from praisonmem.core import usage

                try:
                    usage.parse_date(filters.since, "since")
                except PraisonMemError as exc:
                    self.error(str(exc))
                    return
            self.filters = filters
            self.status("reading the home…")
            self.reload(self.selected.item if self.selected else None)

        self.push_screen(FilterScreen(self.filters), chosen)

    def action_follow(self) -> None:
        if self._follow is not None:
            self._stop_follow()
            self.status("stopped following")
            return
        selected = self.selected
        if selected is None or selected.kind != "session":
            self.notify("open a session to follow it", severity="warning")
            return
        from praisonmem.core import sessions

        stop = threading.Event()
        self._follow, self.followed = stop, selected.item
        self.screen.add_class("opened")
        self.status("")

        def follow() -> None:
            try:
                for batch in sessions.watch_session(selected.paths, selected.item, store=selected.store, tail=0,
                                                    interval=0.5, stop=stop.is_set):
                    if stop.is_set():
                        return
                    if batch:
                        self.call_from_thread(self._turns_came, selected, len(batch))
            except PraisonMemError as exc:
                try:
                    self.call_from_thread(self._follow_failed, stop, str(exc))
                except RuntimeError:
                    pass
            except RuntimeError:
                pass  # the app has exited

        threading.Thread(target=follow, name="browse-follow", daemon=True).start()

    def _turns_came(self, selected: Selection, count: int) -> None:
        if self.selected is not None and self.selected.item == selected.item and self._follow is not None:
            self.status(f"+{count} new turn{'s' if count != 1 else ''}")
            self.render_detail()

    def _follow_failed(self, stop: threading.Event, message: str) -> None:
        if self._follow is stop:
            self._stop_follow()
            self.error(message)
            self.status("")

    def _stop_follow(self) -> None:
        if self._follow is not None:
            self._follow.set()
        self._follow, self.followed = None, None

    def _stop_follow_if_other(self) -> None:
        if self.followed is not None and (self.selected is None or self.selected.item != self.followed):
            self._stop_follow()
            self.status("stopped following")

    def action_back(self) -> None:
        if self.close_search():
            return
        if self.screen.has_class("opened"):
            self.screen.remove_class("opened")
            self.query_one("#list", RowList).focus()
            return
        if self.focused is not None and self.focused.id != "list":
            self.query_one("#list", RowList).focus()

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_act(self, key: str) -> None:
        if key not in ACTION_KEYS:
            return
        if self.selected is None:
            self.notify("nothing selected", severity="warning")
            return
        try:
            from praisonmem.tui import actions  # type: ignore[attr-defined]
        except ImportError:
            self.notify("not available in this version of praisonmem", severity="warning")
            return
        actions.perform(self, key, self.selected)

    def action_interrupt(self) -> None:
        self._stop_follow()
        self.exit(return_code=130)

    async def action_quit(self) -> None:
        self._stop_follow()
        self.exit(return_code=0)

    def _fatal_error(self) -> None:
        """Textual's end for an exception nothing handled (a bug): the browse command reports it as every command
        does (one line, exit 70; PRAISONMEM_DEBUG=1 keeps Textual's traceback)."""
        import os

        if os.environ.get("PRAISONMEM_DEBUG"):
            super()._fatal_error()
            return
        self.crash = self._exception
        self._close_messages_no_wait()

    def error(self, message: str) -> None:
        """A failure as the CLI words it: one line, never markup."""
        self.notify(printable(f"praisonmem: error: {message}"), severity="error", markup=False)


def _hit_cells(hit: dict[str, Any]) -> list[str]:
    from praisonmem.cli.render.transcript import PREFIXES

    where = f"#{PREFIXES.get(hit['section'], '')}{hit['index']}"
    return [str(hit["session_id"]), where, str(hit["role"]), f"{hit['score']:g}", str(hit["snippet"]),
            str(hit["store"])]
