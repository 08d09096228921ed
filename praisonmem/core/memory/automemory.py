"""AutoMemory's pattern extraction (praisonaiagents 1.7.17 ``memory/auto_memory.py``), no LLM.

``extract`` returns what ``AutoMemory(memory).process_interaction(text, store=False)``
returns; ``planned_writes`` says what ``store=True`` would write (an entity for a
name, ``"User's role: …"`` / ``"User's location: …"`` long-term items, the rest
as long-term items with their importance), leaving out what the user's store
already holds, which the library's in-process dedup cannot know across runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from praisonmem.core.memory.filememory import FileMemoryStore, find_entity

PATTERNS: dict[str, list[str]] = {
    "name": [
        r"(?:my name is|i'm|i am|call me)\s+([A-Z][a-z]+)",
        r"(?:name|Name):\s*([A-Z][a-z]+)",
    ],
    "preference": [
        r"i (?:prefer|like|love|enjoy|use)\s+(.+?)(?:\.|$)",
        r"(?:my favorite|i always use)\s+(.+?)(?:\.|$)",
    ],
    "role": [
        r"i (?:am|work as|'m)\s+(?:a|an)\s+([a-z\s]+?)(?:\.|,|$)",
        r"(?:my job|my role|i do)\s+(?:is|as)?\s*(.+?)(?:\.|$)",
    ],
    "location": [
        r"i (?:live|work|am based|am located)\s+(?:in|at)\s+([A-Z][a-z\s]+)",
        r"(?:from|based in)\s+([A-Z][a-z\s,]+)",
    ],
    "project": [
        r"(?:working on|building|developing|creating)\s+(?:a|an|the)?\s*(.+?)(?:\.|$)",
        r"(?:my project|the project)\s+(?:is|called)?\s*(.+?)(?:\.|$)",
    ],
    "technology": [
        r"(?:using|use|prefer)\s+(Python|JavaScript|TypeScript|Go|Rust|Java|C\+\+|Ruby|PHP)",
        r"(?:framework|library|tool)(?:s)?\s+(?:like|such as|including)\s+(.+?)(?:\.|$)",
    ],
}
IMPORTANCE = {"name": 0.95, "preference": 0.7, "role": 0.85, "location": 0.6, "project": 0.75, "technology": 0.7}
KEYWORDS = ("my name", "i am", "i'm", "i prefer", "i like", "i use", "i work", "i live", "working on", "building",
            "my project", "favorite", "always use")
MIN_IMPORTANCE = 0.6  # AutoMemory's default
_COMPILED = {category: [re.compile(p, re.IGNORECASE) for p in patterns] for category, patterns in PATTERNS.items()}


def should_remember(text: str) -> bool:
    lowered = text.lower()
    return any(keyword in lowered for keyword in KEYWORDS)


def extract(user_message: str, assistant_response: str | None = None,
            min_importance: float = MIN_IMPORTANCE) -> list[dict[str, Any]]:
    text = user_message + ("\n" + assistant_response if assistant_response else "")
    if not should_remember(text):
        return []
    memories: list[dict[str, Any]] = []
    for category, patterns in _COMPILED.items():
        importance = IMPORTANCE[category]
        if importance < min_importance:
            continue
        for pattern in patterns:
            for match in pattern.findall(text):
                if isinstance(match, tuple):
                    match = match[0]
                match = match.strip()
                if len(match) < 2 or len(match) > 200:
                    continue
                if not any(m["content"].lower() == match.lower() for m in memories):
                    memories.append({"type": category, "content": match, "importance": importance,
                                     "source": "pattern"})
    return memories


@dataclass
class Write:
    memory: dict[str, Any]
    kind: Literal["entity", "long_term"]
    content: str
    importance: float
    skipped: bool = False


def planned_writes(store: FileMemoryStore, memories: list[dict[str, Any]]) -> list[Write]:
    long_contents = {item.get("content") for item in store.items("long_term")}
    entities = store.entities()
    writes = []
    for memory in memories:
        kind, content = memory["type"], memory["content"]
        if not content:
            continue
        if kind == "name":
            existing = find_entity(entities, content, "person")
            done = existing is not None and (existing.get("attributes") or {}).get("relationship") == "user"
            writes.append(Write(memory, "entity", content, memory["importance"], done))
            continue
        text = f"User's {kind}: {content}" if kind in ("role", "location") else content
        writes.append(Write(memory, "long_term", text, memory["importance"], text in long_contents))
        long_contents.add(text)
    return writes


def store_writes(store: FileMemoryStore, writes: list[Write]) -> None:
    """Write what is not already there, in order."""
    for write in writes:
        if write.skipped:
            continue
        if write.kind == "entity":
            store.add_entity(write.content, "person", {"relationship": "user"})
        else:
            store.add_long_term(write.content, importance=write.importance)
