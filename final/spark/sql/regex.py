"""Java's regular expressions, which Spark SQL's ``RLIKE``, ``regexp_extract`` and ``regexp_replace`` use, read as
Python's ``re``: translated where the two agree, refused, naming the construct, where they differ.

Spark hands a pattern to ``java.util.regex.Pattern`` (Java 17 here) with no
flags. Most of the syntax means the same in Python, but not all of it, and a
pattern that silently matches otherwise would make a wrong answer, so
``java_regex`` walks the pattern once, the way Java's parser does, and
writes a Python pattern that matches the same strings:

- ``\\d``, ``\\w``, ``\\s`` and case-insensitivity (``(?i)``) are ASCII-only
  in Java by default: Python's ``re.ASCII`` says the same;
- Java's ``.`` stops at every line terminator (``\\n``, ``\\r``, ``\\u0085``,
  ``\\u2028``, ``\\u2029``), Python's only at ``\\n``; Java's ``$`` and ``\\Z``
  match at the end or before a final line terminator of any kind (``\\r\\n``
  counting as one), Python's ``$`` only before a final ``\\n``: both are
  written out as the classes and lookaheads Java means;
- Java's ``\\z`` is Python's ``\\Z``; ``\\Q...\\E`` quotes; ``(?<name>...)``,
  ``\\k<name>`` and back references (read with Java's rule for several
  digits) are rewritten in Python's spelling; octal, ``\\x{...}``, ``\\e`` and
  ``\\cX`` escapes become the characters they name;
- possessive quantifiers and atomic groups mean the same in both (Python
  3.11 has them).

Refused, because Python's ``re`` has no counterpart or reads them otherwise:
``\\p{...}`` and the other Unicode and POSIX classes, ``\\b`` and ``\\B``
(Java 17 counts every Unicode letter and digit as a word character there,
though its ``\\w`` is ASCII), ``\\h``, ``\\v``, ``\\R``, ``\\X``, ``\\G``, the
union and intersection of classes (``[a-z[A-Z]]``, ``[a-z&&[^b]]``), the
flags other than ``i`` and ``s`` (``m`` would make ``^`` and ``$`` see every
line terminator) and a flag group ``(?i)`` anywhere but at the pattern's
start (Java applies it from there on, Python to the whole pattern). A pattern
Java itself rejects (``a{``, ``*a``, ``(?#...)``) is refused too, as Spark
fails on it.

``java_replacement`` reads a replacement string as Java's
``Matcher.appendReplacement`` does: ``$n`` and ``${name}`` insert a group (an
unmatched one as nothing), a backslash quotes the next character, anything
else is itself; ``replace_all`` replaces the matches Java's ``replaceAll``
finds, which after an empty match searches on from the next character
(Python's ``sub`` tries a non-empty match at the same place first, so
``a*?`` over ``aaa`` differs).

One difference is left: Java searches strings of UTF-16 units, so after an
empty match just before a character outside the Basic Multilingual Plane
(an emoji) it searches on from the middle of that character's surrogate
pair, and Spark writes each half as ``?`` (``regexp_replace('😀', 'x*',
'-')`` is ``-?-?-`` in Spark); here the character stays whole (``-😀-``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

LINE_TERMINATORS = "\\n\\r\\x85\\u2028\\u2029"
"""Java's line terminators, as a Python class's contents: what its ``.`` does not match."""
DOT = f"[^{LINE_TERMINATORS}]"
ANY = "(?s:.)"
"""Java's ``.``, and what it is under the ``s`` (DOTALL) flag."""
END = "(?:\\Z|(?=[\\r\\x85\\u2028\\u2029]\\Z)|(?<!\\r)(?=\\n\\Z)|(?=\\r\\n\\Z))"
"""Java's ``$`` (and ``\\Z``) without the ``m`` flag: the end, or before a last line terminator, ``\\r\\n`` being
one (so never between its ``\\r`` and ``\\n``)."""

REFUSED_ESCAPES = {
    "b": "\\b (Java 17's word boundary counts every Unicode letter and digit as a word character, Python's does "
         "not under ASCII \\w)",
    "B": "\\B (Java 17's word boundary counts every Unicode letter and digit as a word character, Python's does "
         "not under ASCII \\w)",
    "p": "\\p{...} (Java's Unicode and POSIX classes)", "P": "\\P{...} (Java's Unicode and POSIX classes)",
    "h": "\\h (Java's horizontal whitespace)", "H": "\\H (Java's horizontal whitespace)",
    "v": "\\v (Java's vertical whitespace; in Python it is one character)", "V": "\\V (Java's vertical whitespace)",
    "R": "\\R (Java's linebreak matcher)", "X": "\\X (Java's grapheme cluster)", "G": "\\G (Java's end of the "
    "previous match)", "N": "\\N{...} (Java's named characters)",
}
"""Java escapes with no counterpart in Python's ``re`` (or another meaning there), and why."""
CLASS_ESCAPES = "dDwWsS"
"""Escapes that mean the same class in Java (by default) as in Python with ``re.ASCII``."""
CHARACTER_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "a": "\a", "e": "\x1b"}
"""Java's escapes of one character by a letter (``\\e`` is ESC, which Python's ``re`` does not know)."""
FLAGS = {"i": "i", "s": "s"}
"""The inline flags read here: case-insensitive (ASCII, as in Java) and DOTALL; Java's others are refused."""


@dataclass
class _Reader:
    """One pass over a Java pattern: the position, the Python text written, the capturing groups opened (and
    those still open), their names, and whether ``.`` is DOTALL in the current group.

    ``last`` is what the last item was, for a quantifier after it: ``item`` (something to repeat), ``nothing``
    (the start, ``(`` or ``|``, or a quantifier: Java rejects a quantifier there) or ``anchor`` (refused here).

    Invariant: ``text`` matches what ``pattern[:at]`` matches in Java.
    """

    pattern: str
    at: int = 0
    text: list[str] = field(default_factory=list)
    groups: int = 0
    open_groups: list[int] = field(default_factory=list)
    names: dict[str, int] = field(default_factory=dict)
    dotall: list[bool] = field(default_factory=lambda: [False])
    last: str = "nothing"

    def peek(self, offset: int = 0) -> str:
        where = self.at + offset
        return self.pattern[where] if where < len(self.pattern) else ""

    def refuse(self, what: str) -> ValueError:
        return ValueError(f"{what}, at character {self.at + 1}, is not read here: Python's re has no such "
                          f"construct or reads it otherwise")

    def invalid(self, what: str) -> ValueError:
        return ValueError(f"Java rejects it ({what}, at character {self.at + 1}), so Spark fails on it too")


@lru_cache(maxsize=256)
def java_regex(pattern: str) -> re.Pattern:
    """``pattern``, a Java regular expression, as a compiled Python one that matches the same strings.

    Raises:
        ValueError: the pattern uses a construct Python reads otherwise (or not at all), or Java rejects it;
            the message names the construct and where it is.
    """
    reader = _Reader(pattern)
    _flags_at_start(reader)
    while reader.at < len(pattern):
        _item(reader)
    if reader.open_groups or len(reader.dotall) > 1:
        raise reader.invalid("a group is not closed")
    try:
        return re.compile("".join(reader.text), re.ASCII)
    except re.error as error:
        raise ValueError(f"Python's re cannot read it as Java does ({error})") from None


def _flags_at_start(reader: _Reader) -> None:
    """``(?is)`` at the pattern's start: flags for the whole pattern, as Python's global flags are."""
    case = False
    while reader.pattern.startswith("(?", reader.at):
        found = re.match(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?\)", reader.pattern[reader.at:])
        if found is None:
            break
        on, off = _flag_letters(reader, found.group(1), found.group(2) or "")
        if "s" in on or "s" in off:
            reader.dotall[0] = "s" in on
        if "i" in on or "i" in off:
            case = "i" in on
        reader.at += found.end()
    if case:
        reader.text.append("(?i)")


def _flag_letters(reader: _Reader, on: str, off: str) -> tuple[str, str]:
    for letter in on + off:
        if letter not in FLAGS:
            raise reader.refuse(f"the flag {letter!r} (only i and s are read)")
    return on, off


def _item(reader: _Reader) -> None:
    character = reader.peek()
    if character == "\\":
        _escape(reader)
    elif character == "[":
        _class(reader)
    elif character == "(":
        _open_group(reader)
    elif character == ")":
        if not reader.open_groups:
            raise reader.invalid("an unmatched ')'")
        reader.dotall.pop()
        reader.open_groups.pop()
        reader.text.append(")")
        reader.at += 1
        reader.last = "item"
    elif character == "|":
        reader.text.append("|")
        reader.at += 1
        reader.last = "nothing"
    elif character in "*+?{":
        _quantifier(reader)
    elif character == ".":
        reader.text.append(ANY if reader.dotall[-1] else DOT)
        reader.at += 1
        reader.last = "item"
    elif character == "^":
        reader.text.append("^")  # no MULTILINE: the start of the input, in both
        reader.at += 1
        reader.last = "anchor"
    elif character == "$":
        reader.text.append(END)
        reader.at += 1
        reader.last = "anchor"
    else:
        reader.text.append(re.escape(character))
        reader.at += 1
        reader.last = "item"


def _quantifier(reader: _Reader) -> None:
    if reader.last == "anchor":
        raise reader.refuse(f"the quantifier {reader.peek()!r} after an anchor")
    if reader.last == "nothing":
        raise reader.invalid(f"{reader.peek()!r} follows nothing it can repeat")
    if reader.peek() == "{":
        found = re.match(r"\{(\d+)(,(\d*))?\}", reader.pattern[reader.at:])
        if found is None:
            raise reader.invalid("'{' starts no repetition {n}, {n,} or {n,m}")
        reader.text.append(found.group(0))
        reader.at += found.end()
    else:
        reader.text.append(reader.peek())
        reader.at += 1
    if reader.peek() in ("?", "+"):  # lazy or possessive: the same in Java and Python 3.11
        reader.text.append(reader.peek())
        reader.at += 1
    reader.last = "nothing"


def _open_group(reader: _Reader) -> None:
    rest = reader.pattern[reader.at:]
    reader.last = "nothing"
    dotall = reader.dotall[-1]
    if not rest.startswith("(?"):
        reader.groups += 1
        _push(reader, "(", 1, reader.groups, dotall)
        return
    for opening in ("(?:", "(?>"):
        if rest.startswith(opening):
            _push(reader, opening, 3, -1, dotall)
            return
    for opening in ("(?=", "(?!", "(?<=", "(?<!"):
        if rest.startswith(opening):
            _push(reader, opening, len(opening), -2, dotall)
            return
    named = re.match(r"\(\?<([a-zA-Z][a-zA-Z0-9]*)>", rest)
    if named is not None:
        if named.group(1) in reader.names:
            raise reader.invalid(f"the group name {named.group(1)!r} is used twice")
        reader.groups += 1
        reader.names[named.group(1)] = reader.groups
        _push(reader, f"(?P<{named.group(1)}>", named.end(), reader.groups, dotall)
        return
    flagged = re.match(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])", rest)
    if flagged is None:
        raise reader.invalid(f"{rest[:3]!r} starts no group Java knows")
    on, off = _flag_letters(reader, flagged.group(1), flagged.group(2) or "")
    if flagged.group(3) == ")":
        raise reader.refuse(f"the flag group {flagged.group(0)!r} after the start (Java applies it from there on, "
                            f"Python to the whole pattern: write it first, or as (?i:...))")
    if "s" in on or "s" in off:
        dotall = "s" in on
    case = ("i" if "i" in on else "") + ("-i" if "i" in off else "")
    _push(reader, f"(?{case}:" if case else "(?:", flagged.end(), -1, dotall)


def _push(reader: _Reader, text: str, length: int, number: int, dotall: bool) -> None:
    """Open a group: ``number`` is its capturing number, -1 for a non-capturing one, -2 for a lookaround."""
    reader.text.append(text)
    reader.at += length
    reader.open_groups.append(number)
    reader.dotall.append(dotall)


def _escape(reader: _Reader) -> None:
    """An escape outside a class: a character, a class, an anchor, a back reference or a quotation."""
    letter = reader.peek(1)
    reader.last = "item"
    if letter == "":
        raise reader.invalid("the pattern ends with a backslash")
    if letter in "123456789":
        _back_reference(reader)
        return
    if letter in CLASS_ESCAPES:
        reader.text.append("\\" + letter)
        reader.at += 2
        return
    anchors = {"A": "\\A", "z": "\\Z", "Z": END}
    if letter in anchors:
        reader.text.append(anchors[letter])
        reader.at += 2
        reader.last = "anchor"
        return
    if letter == "Q":
        end = reader.pattern.find("\\E", reader.at + 2)
        quoted = reader.pattern[reader.at + 2:] if end < 0 else reader.pattern[reader.at + 2:end]
        reader.text.append(f"(?:{re.escape(quoted)})" if quoted else "")
        reader.at = len(reader.pattern) if end < 0 else end + 2
        reader.last = "item" if quoted else "nothing"
        return
    if letter == "k":
        named = re.match(r"\\k<([a-zA-Z][a-zA-Z0-9]*)>", reader.pattern[reader.at:])
        if named is None or named.group(1) not in reader.names:
            raise reader.invalid("\\k names no group defined before it")
        reader.text.append(f"(?P={named.group(1)})")
        reader.at += named.end()
        return
    reader.text.append(re.escape(_character(reader)))


def _back_reference(reader: _Reader) -> None:
    """``\\n``: Java reads a first digit, then more while the number stays within the groups opened so far."""
    reader.at += 1
    number = int(reader.peek())
    reader.at += 1
    while reader.peek().isdigit() and reader.peek().isascii() and number * 10 + int(reader.peek()) <= reader.groups:
        number = number * 10 + int(reader.peek())
        reader.at += 1
    if number > reader.groups:
        raise reader.refuse(f"the back reference \\{number} to a group not defined before it")
    if number in reader.open_groups:
        raise reader.refuse(f"the back reference \\{number} inside the group it names")
    reader.text.append(f"(?:\\{number})")


def _character(reader: _Reader) -> str:
    """The one character an escape at ``reader.at`` names (``\\t``, ``\\x41``, ``\\0101``, ``\\.``); the reader
    moves past it."""
    letter = reader.peek(1)
    if letter in REFUSED_ESCAPES:
        raise reader.refuse(REFUSED_ESCAPES[letter])
    if letter in CHARACTER_ESCAPES:
        reader.at += 2
        return CHARACTER_ESCAPES[letter]
    rest = reader.pattern[reader.at:]
    if letter == "0":
        found = re.match(r"\\0([0-3][0-7]{2}|[0-7]{1,2})", rest)
        if found is None:
            raise reader.invalid("\\0 is followed by no octal digit")
        reader.at += found.end()
        return chr(int(found.group(1), 8))
    if letter == "x":
        found = re.match(r"\\x(?:([0-9a-fA-F]{2})|\{([0-9a-fA-F]+)\})", rest)
        if found is None:
            raise reader.invalid("\\x is followed by no hexadecimal code")
        code = int(found.group(1) or found.group(2), 16)
        reader.at += found.end()
        return _code_point(reader, code)
    if letter == "u":
        found = re.match(r"\\u([0-9a-fA-F]{4})", rest)
        if found is None:
            raise reader.invalid("\\u is followed by no four hexadecimal digits")
        reader.at += found.end()
        return _code_point(reader, int(found.group(1), 16))
    if letter == "c":
        if len(rest) < 3:
            raise reader.invalid("\\c is followed by no character")
        reader.at += 3
        return chr(ord(rest[2]) ^ 64)
    if letter.isascii() and letter.isalnum():
        raise reader.invalid(f"\\{letter} is no escape Java knows")
    reader.at += 2
    return letter  # any other character after a backslash is itself


def _code_point(reader: _Reader, code: int) -> str:
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        raise reader.refuse(f"the code {code:#x} (a surrogate or no character)")
    return chr(code)


def _class(reader: _Reader) -> None:
    """``[...]``: its characters, ranges and class escapes, written escaped so Python reads each as Java does."""
    reader.at += 1
    parts = ["["]
    if reader.peek() == "^":
        parts.append("^")
        reader.at += 1
    first = True
    while True:
        character = reader.peek()
        if character == "":
            raise reader.invalid("a character class is not closed")
        if character == "]" and not first:
            reader.at += 1
            break
        first = False
        if character == "[":
            raise reader.refuse("a class inside a class (Java's union of classes)")
        if character == "&" and reader.peek(1) == "&":
            raise reader.refuse("&& in a class (Java's intersection of classes)")
        if character == "\\" and reader.peek(1) in CLASS_ESCAPES:
            parts.append("\\" + reader.peek(1))
            reader.at += 2
            continue
        if character == "\\" and reader.peek(1) == "Q":
            end = reader.pattern.find("\\E", reader.at + 2)
            quoted = reader.pattern[reader.at + 2:] if end < 0 else reader.pattern[reader.at + 2:end]
            parts.extend(re.escape(one) for one in quoted)
            reader.at = len(reader.pattern) if end < 0 else end + 2
            continue
        low = _class_character(reader)
        if reader.peek() == "-" and reader.peek(1) not in ("]", ""):
            reader.at += 1
            if reader.peek() == "[" or (reader.peek() == "\\" and reader.peek(1) in CLASS_ESCAPES + "Q"):
                raise reader.refuse("a range whose end is a class")
            high = _class_character(reader)
            parts.append(f"{re.escape(low)}-{re.escape(high)}")
        else:
            parts.append(re.escape(low))
    parts.append("]")
    reader.text.append("".join(parts))
    reader.last = "item"


def _class_character(reader: _Reader) -> str:
    if reader.peek() == "\\":
        if reader.peek(1).isdigit() and reader.peek(1) != "0":
            raise reader.invalid("a back reference inside a class")
        return _character(reader)
    character = reader.peek()
    reader.at += 1
    return character


# Replacements ------------------------------------------------------------------------------------------------------


def replace_all(pattern: re.Pattern, text: str, replacement: Callable[[re.Match], str]) -> str:
    """``text`` with every match of ``pattern`` replaced, the matches found as Java's ``Matcher.find`` finds
    them: each search starts where the last match ended, or one character on after an empty match."""
    parts = []
    kept = start = 0
    while start <= len(text):
        match = pattern.search(text, start)
        if match is None:
            break
        parts += [text[kept:match.start()], replacement(match)]
        kept = match.end()
        start = match.end() + (match.end() == match.start())
    parts.append(text[kept:])
    return "".join(parts)



@lru_cache(maxsize=256)
def java_replacement(template: str, pattern: re.Pattern) -> Callable[[re.Match], str]:
    """The replacement ``template`` (Java's ``$1``, ``${name}``, ``\\$``) as a function of a match.

    Java reads the template only when a match is found, and fails then on
    one it cannot read: so does the function returned.

    Raises:
        ValueError: from the function returned, when it is called, for a template Java rejects (a ``$``
            naming no group, a backslash at the end); the message is Java's reason.
    """
    try:
        parts = _replacement_parts(template, pattern.groups, pattern.groupindex)
    except ValueError as error:
        reason = str(error)

        def fail(match: re.Match) -> str:
            raise ValueError(reason)

        return fail
    if all(isinstance(part, str) for part in parts):
        constant = "".join(parts)  # type: ignore[arg-type]
        return lambda match: constant

    def replace(match: re.Match) -> str:
        return "".join(part if isinstance(part, str) else (match.group(part) or "") for part in parts)

    return replace


def _replacement_parts(template: str, groups: int, names: dict[str, int]) -> list[str | int]:
    """The template as literal texts and group numbers, read as ``Matcher.appendReplacement`` reads it."""
    parts: list[str | int] = []
    at = 0
    while at < len(template):
        character = template[at]
        if character == "\\":
            if at + 1 == len(template):
                raise ValueError("character to be escaped is missing")
            parts.append(template[at + 1])
            at += 2
        elif character == "$":
            at += 1
            if at == len(template):
                raise ValueError("Illegal group reference: group index is missing")
            if template[at] == "{":
                found = re.match(r"\{([a-zA-Z0-9]*)(\}?)", template[at:])
                name = found.group(1)
                if not name:
                    raise ValueError("named capturing group has 0 length name")
                if not found.group(2):
                    raise ValueError("named capturing group is missing trailing '}'")
                if name[0].isdigit():
                    raise ValueError(f"capturing group name {{{name}}} starts with digit character")
                if name not in names:
                    raise ValueError(f"No group with name {{{name}}}")
                parts.append(names[name])
                at += found.end()
                continue
            if not ("0" <= template[at] <= "9"):
                raise ValueError("Illegal group reference")
            number = int(template[at])
            at += 1
            # Java takes more digits while the number still names a group.
            while at < len(template) and "0" <= template[at] <= "9" and number * 10 + int(template[at]) <= groups:
                number = number * 10 + int(template[at])
                at += 1
            if number > groups:
                raise ValueError(f"No group {number}")
            parts.append(number)
        else:
            parts.append(character)
            at += 1
    return parts
