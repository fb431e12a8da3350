"""Dates in memories: relative expressions (English, Chinese, Japanese) and what they meant.

Pure functions of text and an explicit anchor date, never the clock: the lint rules pass the
file's modified date (to resolve) and the run's ``today`` (to judge). Only expressions that name
a day, week, month or year relative to *when they were written* are found ("next Friday",
"下周五", "来週の金曜"); durations ("for two weeks", "90 天", "six months of overlap") and
recurring days ("every Friday") are not, and neither are offsets from an event ("两周后" can be
two weeks after a release). A miss costs less than a false finding.

Week arithmetic: weeks start on Monday. "next Friday", "下周五" and "来週の金曜" are the Friday
of the week after the anchor's; "this Friday" is the Friday of the anchor's week.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Literal

Unit = Literal["day", "week", "month", "year"]
Language = Literal["en", "zh", "ja"]

__all__ = [
    "Deadline",
    "RelativeDate",
    "find_days",
    "find_deadlines",
    "find_relative_dates",
    "parse_day",
    "render",
    "resolve",
]


@dataclass(frozen=True, slots=True)
class RelativeDate:
    """One relative expression in a text: where it is and what it means from its anchor."""

    #: String offsets of the expression in the text searched (end exclusive).
    start: int
    end: int
    text: str
    language: Language
    unit: Unit
    #: How many units from the anchor (day: days; week: weeks; month: months; year: years).
    offset: int
    #: For a weekday in a week ("next Friday"): 0 (Monday) .. 6 (Sunday); else None.
    weekday: int | None = None


_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_JA_WEEKDAYS = {"月": 0, "火": 1, "水": 2, "木": 3, "金": 4, "土": 5, "日": 6}
_EN_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_EN_SHIFT = {"next": 1, "this": 0, "last": -1, "coming": 0}

_EN = re.compile(
    r"(?<![\w-])(?:"
    r"(?P<dat>the\s+day\s+after\s+tomorrow)"
    r"|(?P<tomorrow>tomorrow)|(?P<yesterday>yesterday)"
    r"|(?:the\s+)?(?P<shift>next|this|last|coming)\s+"
    r"(?:(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)(?!\s+of\b)"
    r"|(?P<unit>week|month|year))"
    r"|in\s+(?P<n>\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(?P<nunit>day|week|month)s?(?!\s+(?:of|after|before|from\s+(?!now|today)))"
    r"|(?P<ago_n>\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(?P<ago_unit>day|week|month)s?\s+ago"
    r")(?![\w-])",
    re.IGNORECASE,
)
# (CJK has no word boundaries: each expression is specific enough on its own. Not matched:
# 后天/前天, which are also parts of other words, and "N天后", which is as often after an event.)
_ZH = re.compile(
    r"(?P<tomorrow>明天|明日)|(?P<yesterday>昨天|昨日)"
    r"|(?P<shift>下|这|本|上)(?:个)?(?:周(?![期年刊])|星期|礼拜)(?P<wd>[一二三四五六日天])?"
    r"|(?P<month>下个月|下月|上个月)"
    r"|(?P<year>明年|去年)"
)
_JA = re.compile(
    r"(?P<tomorrow>明日)|(?P<yesterday>昨日)"
    r"|(?P<shift>来|今|先)週(?:の)?(?:(?P<wd>[月火水木金土日])曜(?:日)?)?"
    r"|(?P<month>来月|先月)"
    r"|(?P<year>来年|昨年)"
)
#: Words before "in N days" that make it a duration of something, not a date.
_DURATION = re.compile(
    r"\b(?:expire[sd]?|expiry|valid|every|after|lasts?|takes?|within|retain(?:ed)?|kept|"
    r"timeouts?|ttl|deleted|purged|rotate[sd]?)\b[^.;\n]*$",
    re.IGNORECASE,
)
_KANA = re.compile(r"[\u3040-\u30ff]")


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _EN_NUMBERS[word.lower()]


def _english(text: str) -> list[RelativeDate]:
    found: list[RelativeDate] = []
    for m in _EN.finditer(text):
        groups = m.groupdict()
        unit: Unit
        weekday: int | None = None
        if groups["dat"]:
            unit, offset = "day", 2
        elif groups["tomorrow"]:
            unit, offset = "day", 1
        elif groups["yesterday"]:
            unit, offset = "day", -1
        elif groups["shift"]:
            shift = _EN_SHIFT[groups["shift"].lower()]
            if groups["wd"]:
                unit, offset = "week", shift
                weekday = _EN_WEEKDAYS.index(groups["wd"].lower())
            else:
                if shift == 0:
                    continue  # "this week" is when it was written: nothing to misread yet
                unit, offset = groups["unit"].lower(), shift  # type: ignore[assignment]
        elif groups["n"]:
            if _DURATION.search(text, max(0, m.start() - 40), m.start()):
                continue  # "tokens expire in 7 days": how long, not when
            unit = groups["nunit"].lower()  # type: ignore[assignment]
            offset = _count(groups["n"])
            if unit == "week":
                unit, offset = "day", 7 * offset
        else:
            unit = groups["ago_unit"].lower()  # type: ignore[assignment]
            offset = -_count(groups["ago_n"])
            if unit == "week":
                unit, offset = "day", 7 * offset
        found.append(RelativeDate(m.start(), m.end(), m.group(), "en", unit, offset, weekday))
    return found


def _cjk(text: str) -> list[RelativeDate]:
    # 明日/昨日 are Chinese too; kana say the text is Japanese. Without kana, the Japanese-only
    # words (来週, 来月...) still count, after the Chinese ones.
    japanese = _KANA.search(text) is not None
    patterns = ((_JA, "ja"),) if japanese else ((_ZH, "zh"), (_JA, "ja"))
    found: list[RelativeDate] = []
    taken: list[tuple[int, int]] = []
    for pattern, language in patterns:
        for m in pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            groups = m.groupdict()
            unit: Unit
            weekday: int | None = None
            if groups["tomorrow"]:
                unit, offset = "day", 1
            elif groups["yesterday"]:
                unit, offset = "day", -1
            elif groups["shift"]:
                shift = {"下": 1, "来": 1, "上": -1, "先": -1}.get(groups["shift"], 0)
                unit, offset = "week", shift
                if groups["wd"]:
                    table = _JA_WEEKDAYS if language == "ja" else _ZH_WEEKDAYS
                    weekday = table[groups["wd"]]
                elif shift == 0:
                    continue  # "this week" as a whole: see _english
            elif groups["month"]:
                unit, offset = "month", 1 if groups["month"][0] in "下来" else -1
            else:
                unit, offset = "year", 1 if groups["year"][0] in "明来" else -1
            lang: Language = "ja" if language == "ja" else "zh"
            taken.append((m.start(), m.end()))
            found.append(RelativeDate(m.start(), m.end(), m.group(), lang, unit, offset, weekday))
    return found


_EN_HINTS = ("day", "week", "month", "year", "tomorrow")
_CJK_HINT = re.compile("[明昨周期拜月年週]")
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def find_relative_dates(text: str) -> list[RelativeDate]:
    """Every relative date in ``text`` (one line or more), in order; code spans are skipped."""
    # Every expression holds one of these: most lines are passed over without the patterns.
    lower = text.lower()
    english = any(word in lower for word in _EN_HINTS)
    cjk = not text.isascii() and _CJK_HINT.search(text) is not None
    if not (english or cjk):
        return []
    masked = _CODE_SPAN.sub(lambda m: " " * len(m.group()), text)
    found = _english(masked) if english else []
    if cjk:
        found.extend(_cjk(masked))
    return sorted(found, key=lambda r: r.start)


def _add_months(day: dt.date, months: int) -> dt.date:
    index = day.year * 12 + day.month - 1 + months
    return dt.date(index // 12, index % 12 + 1, 1)


def resolve(relative: RelativeDate, anchor: dt.date) -> dt.date:
    """The first day the expression meant, written on ``anchor`` (a week: its Monday, or the
    named weekday; a month or year: its first day)."""
    if relative.unit == "day":
        return anchor + dt.timedelta(days=relative.offset)
    if relative.unit == "week":
        monday = anchor - dt.timedelta(days=anchor.weekday()) + dt.timedelta(weeks=relative.offset)
        return monday + dt.timedelta(days=relative.weekday or 0)
    if relative.unit == "month":
        return _add_months(anchor, relative.offset)
    return dt.date(anchor.year + relative.offset, 1, 1)


_EN_MONTHS = (
    *("January", "February", "March", "April", "May", "June", "July", "August"),
    *("September", "October", "November", "December"),
)


def render(relative: RelativeDate, anchor: dt.date) -> str:
    """The absolute text that replaces ``relative``, in its language: ISO days everywhere."""
    day = resolve(relative, anchor)
    cjk = relative.language != "en"
    if relative.unit == "day" or relative.weekday is not None:
        return day.isoformat()
    if relative.unit == "week":
        if relative.language == "zh":
            return f"{day.isoformat()} 那一周"
        if relative.language == "ja":
            return f"{day.isoformat()} の週"
        return f"the week of {day.isoformat()}"
    if relative.unit == "month":
        return f"{day.year}年{day.month}月" if cjk else f"{_EN_MONTHS[day.month - 1]} {day.year}"
    return f"{day.year}年" if cjk else str(day.year)


_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def parse_day(value: object) -> dt.date | None:
    """A frontmatter date (``2026-12-03``, an ISO timestamp, or YAML's date) as a date, or None.

    A timestamp counts by its date as written (``modified`` is UTC).
    """
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        return None
    match = _DAY.match(value.strip())
    if match is None:
        return None
    try:
        return dt.date(*map(int, match.groups()))
    except ValueError:
        return None


# --- days written out ------------------------------------------------------------------------

_YEAR = re.compile(r"\d{4}")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_NAME = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
# ISO and slashed year-first days, the CJK form, the day-first dotted form (14.02.2026: dots
# are day-first wherever they are written) and English month names ("March 9, 2026",
# "9 March 2026"). Slashed day-first or month-first days (02/14/2026) are left out: which is
# which cannot be told.
_WRITTEN_DAY = re.compile(
    r"(?<![\d.])(?P<iy>\d{4})[-/](?P<im>\d{1,2})[-/](?P<id>\d{1,2})(?!\d)"
    r"|(?P<cy>\d{4})\s*年\s*(?P<cm>\d{1,2})\s*月\s*(?P<cd>\d{1,2})\s*日"
    r"|(?<![\w.])(?P<dd>\d{1,2})\.(?P<dm>\d{1,2})\.(?P<dy>\d{4})(?![\d])"
    r"|(?<![\w])(?P<mn>"
    + _MONTH_NAME
    + r")\s+(?P<md>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<my>\d{4})(?!\d)"
    r"|(?<![\w])(?P<nd>\d{1,2})(?:st|nd|rd|th)?\s+(?P<nm>"
    + _MONTH_NAME
    + r"),?\s+(?P<ny>\d{4})(?!\d)",
    re.IGNORECASE,
)


def find_days(text: str) -> list[tuple[int, dt.date]]:
    """Every calendar day ``text`` writes out, with its offset, in order."""
    if _YEAR.search(text) is None:
        return []  # nearly every line
    found = []
    for m in _WRITTEN_DAY.finditer(text):
        g = m.groupdict()
        if g["iy"]:
            parts = (int(g["iy"]), int(g["im"]), int(g["id"]))
        elif g["cy"]:
            parts = (int(g["cy"]), int(g["cm"]), int(g["cd"]))
        elif g["dy"]:
            parts = (int(g["dy"]), int(g["dm"]), int(g["dd"]))
        elif g["my"]:
            parts = (int(g["my"]), _MONTHS.index(g["mn"][:3].lower()) + 1, int(g["md"]))
        else:
            parts = (int(g["ny"]), _MONTHS.index(g["nm"][:3].lower()) + 1, int(g["nd"]))
        try:
            found.append((m.start(), dt.date(*parts)))
        except ValueError:
            continue
    return found


# --- deadlines --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Deadline:
    """An absolute date stated as a deadline ("due 2027-03-31", "截止 2027年3月31日")."""

    #: String offsets of the date in the text searched (end exclusive).
    start: int
    end: int
    text: str
    day: dt.date


_DATE = (
    r"(?P<date>\d{4}-\d{1,2}-\d{1,2}|\d{4}/\d{1,2}/\d{1,2}"
    r"|\d{4}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*日)"
)
# The keyword, then the date close after it in the same clause. "by" and "until" only right
# before the date: "decided by the CTO on 2026-01-02" states no deadline. Words that also date
# the past ("before", 之前, まで) are not deadlines here.
_DEADLINES = (
    re.compile(
        r"(?<![\w-])(?:due|deadline|expires?|expiry|sunset|cut-?off|shuts?\s+down|retires?|"
        # "end" of a week, not a session's or a work day's end written down ("End of the evening
        # session 2026-02-11"), a "dead end", "end=" or a table's "| end |" label.
        r"(?<!dead\s)ends?(?!\s+of\s+(?:[\w-]+\s+){0,2}(?:session|work\s*day)|\s*[=|])"
        r"|freeze\s+lifts)(?![\w-])"
        r"[^.;!?\n。；]{0,60}?"
        r"(?<![\w/-])" + _DATE + r"(?![\w/-])",
        re.IGNORECASE,
    ),
    re.compile(
        r"(?<![\w-])(?:by|until|no\s+later\s+than)\s+(?:the\s+|on\s+)?" + _DATE + r"(?![\w/-])",
        re.IGNORECASE,
    ),
    re.compile(r"(?:截止|期限|到期|締め?切り?|締切)(?:日期|日|时间)?[:：是为は]?\s*" + _DATE),
    re.compile(_DATE + r"\s*(?:截止|到期|下线|停用|までに|締め?切り?|締切)"),
)
_DATE_PARTS = re.compile(r"\d+")


def find_deadlines(text: str) -> list[Deadline]:
    """Every date ``text`` states as a deadline, in order; code spans are skipped."""
    if _YEAR.search(text) is None:
        return []  # nearly every line
    masked = _CODE_SPAN.sub(lambda m: " " * len(m.group()), text)
    found: dict[int, Deadline] = {}
    for pattern in _DEADLINES:
        for m in pattern.finditer(masked):
            year, month, day = map(int, _DATE_PARTS.findall(m.group("date")))
            try:
                date = dt.date(year, month, day)
            except ValueError:
                continue
            start, end = m.span("date")
            found.setdefault(start, Deadline(start, end, text[start:end], date))
    return [found[start] for start in sorted(found)]
